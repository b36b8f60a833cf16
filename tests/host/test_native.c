/* The native-binding adapter at C level (examples/host/native/dshh_native_bindings.c,
 * dshh_native_call.c) with the example library: arguments a conforming provider never forwards
 * (invalid UTF-8, a non-array), every result ownership path (run under ASan + LSan in
 * tests/run-all.sh: a leak or double free fails), the maxCallMs log, load-time problems, and the
 * type table against catalog.yaml. */
#include "dshh_native_call.h"

#include "dsh_config.h"
#include "dsh_provider.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifndef NATIVE_EXAMPLE_PATH
#error "meson passes NATIVE_EXAMPLE_PATH (the built example library)"
#endif

static char logged[1024];
static int log_count;

static void capture_log(void *ctx, int level, const char *message)
{
    (void)ctx;
    if (level == DSH_LOG_WARN) {
        snprintf(logged, sizeof logged, "%s", message);
        log_count++;
    }
}

static const struct dsh_logger logger = {.struct_size = sizeof(logger), .log = capture_log};

/* A set loaded from one row's config text; problems go to *ret_err (caller frees). */
static int load(const char *config_yaml, struct dshh_native_set **ret_set, char **ret_err)
{
    char *text;
    cr_assert(asprintf(&text, "library: %s\n%s", NATIVE_EXAMPLE_PATH, config_yaml) > 0);
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    cr_assert(yaml_parser_load(&parser, &doc), "YAML: %s", parser.problem);
    yaml_parser_delete(&parser);
    size_t len;
    FILE *err = open_memstream(ret_err, &len);
    cr_assert_eq(dshh__native_set_new(&logger, ret_set), 0);
    int rc = dshh__native_add_row(*ret_set, "row.yaml", "t", &doc,
                                  yaml_document_get_root_node(&doc), err);
    fclose(err);
    yaml_document_delete(&doc);
    free(text);
    return rc;
}

static const char *const example_row =
    "global: nx\n"
    "functions:\n"
    "  crc: {symbol: nx_crc32_text, returns: uint32, args: [{name: text, type: string}]}\n"
    "  greet: {symbol: nx_greet, returns: string, free: nx_free, args: [{name: name, type: "
    "string}]}\n"
    "  info: {symbol: nx_info_json, returns: json, free: nx_free, args: [{name: query, type: "
    "json}]}\n"
    "  badUtf8: {symbol: nx_bad_utf8, returns: string, free: nx_free}\n"
    "  badJson: {symbol: nx_bad_json, returns: json, free: nx_free}\n"
    "  nanJson: {symbol: nx_nan_json, returns: json, free: nx_free}\n"
    "  version: {symbol: nx_version, returns: string, borrowed: true}\n"
    "  noText: {symbol: nx_no_text, returns: string, borrowed: true}\n"
    "  live: {symbol: nx_live_blocks, returns: int64}\n"
    "  sleep: {symbol: nx_sleep_ms, returns: void, maxCallMs: 20, args: [{name: ms, type: "
    "uint32}]}\n"
    "  id64: {symbol: nx_id_int64, returns: int64, args: [{name: v, type: int64}]}\n";

/* Calls and returns the answer; asserts the namespace was found. */
static struct dshh_native_answer call(const struct dshh_native_set *set, const char *name,
                                      const char *args)
{
    struct dshh_native_answer a;
    cr_assert(dshh__native_call(set, "nx", name, args, strlen(args), &a), "nx.%s not found", name);
    return a;
}

static void expect(const struct dshh_native_set *set, const char *name, const char *args, bool ok,
                   const char *text)
{
    struct dshh_native_answer a = call(set, name, args);
    cr_expect_eq(a.ok, ok, "nx.%s(%s): ok %d, want %d (%s)", name, args, a.ok, ok,
                 a.text ? a.text : "undefined");
    if (text)
        cr_expect_str_eq(a.text ? a.text : "(undefined)", text, "nx.%s(%s): %s", name, args,
                         a.text ? a.text : "(undefined)");
    else
        cr_expect_null(a.text, "nx.%s(%s) should be undefined", name, args);
    cr_expect_eq(a.len, a.text ? strlen(a.text) : 0);
    free(a.text);
}

Test(native, every_result_buffer_is_freed_exactly_once)
{
    struct dshh_native_set *set;
    char *err;
    cr_assert_eq(load(example_row, &set, &err), 0, "%s", err);
    for (int i = 0; i < 100; i++) {
        expect(set, "greet", "[{\"name\":\"w\xc3\xb6rld\"}]", true, "\"hello, w\xc3\xb6rld\"");
        expect(set, "info", "[{\"query\":{\"n\":12345678901234567890123}}]", true,
               "{\"query\":{\"n\":12345678901234567890123},\"bytes\":29}");
        expect(set, "badUtf8", "[]", false, "nx.badUtf8: the result is not valid UTF-8");
        expect(set, "badJson", "[]", false,
               "nx.badJson: the result is not strict JSON text (UTF-8, no NaN or Infinity)");
        expect(set, "nanJson", "[]", false,
               "nx.nanJson: the result is not strict JSON text (UTF-8, no NaN or Infinity)");
        expect(set, "version", "[]", true, "\"dsh-native-example 1\"");
        expect(set, "noText", "[]", true, "null");
    }
    expect(set, "live", "[]", true, "0");
    dshh__native_set_free(set);
    free(err);
}

/* Control for the test above: the example library's free aborts on a block given back twice. */
Test(native, the_example_free_detects_a_double_free, .signal = SIGABRT)
{
    void *dl = dlopen(NATIVE_EXAMPLE_PATH, RTLD_NOW | RTLD_LOCAL);
    cr_assert(dl);
    char *(*greet)(const char *) = (char *(*)(const char *))dlsym(dl, "nx_greet");
    void (*release)(void *) = (void (*)(void *))dlsym(dl, "nx_free");
    char *s = greet("x");
    release(s);
    release(s);
}

Test(native, arguments_no_conforming_provider_forwards)
{
    struct dshh_native_set *set;
    char *err;
    cr_assert_eq(load(example_row, &set, &err), 0, "%s", err);
    /* Invalid UTF-8 bytes and a lone surrogate escape: not strict JSON, refused before any call. */
    expect(set, "crc", "[{\"text\":\"caf\xc3\"}]", false,
           "nx.crc: the arguments are not a strict JSON array");
    expect(set, "crc", "[{\"text\":\"\\ud800\"}]", false,
           "nx.crc: the arguments are not a strict JSON array");
    expect(set, "crc", "{\"text\":\"a\"}", false,
           "nx.crc: the arguments are not a strict JSON array");
    expect(set, "crc", "[{\"text\":\"a\"}] x", false,
           "nx.crc: the arguments are not a strict JSON array");
    expect(set, "crc", "[{\"text\":\"a\"}]", true, "3904355907"); /* control */
    /* Number texts a program cannot write but a forged frame could: still exact or rejected. */
    expect(set, "id64", "[{\"v\":1e3}]", true, "1000");
    expect(set, "id64", "[{\"v\":-0}]", true, "0");
    expect(set, "id64", "[{\"v\":1.0000001}]", false,
           "nx.id64: argument v: 1.0000001 is not an integer (int64)");
    expect(set, "id64", "[{\"v\":1e400}]", false,
           "nx.id64: the arguments are not a strict JSON array");
    dshh__native_set_free(set);
    free(err);
}

Test(native, a_slow_call_is_logged_against_max_call_ms)
{
    struct dshh_native_set *set;
    char *err;
    cr_assert_eq(load(example_row, &set, &err), 0, "%s", err);
    log_count = 0;
    expect(set, "sleep", "[{\"ms\":0}]", true, NULL);
    cr_expect_eq(log_count, 0, "a call within maxCallMs was logged: %s", logged);
    expect(set, "sleep", "[{\"ms\":60}]", true, NULL);
    cr_expect_eq(log_count, 1);
    cr_expect(strncmp(logged, "native call nx.sleep took ", 26) == 0, "%s", logged);
    cr_expect(strstr(logged, " ms (maxCallMs 20); it blocked the host thread"), "%s", logged);
    dshh__native_set_free(set);
    free(err);
}

Test(native, a_row_with_problems_keeps_nothing)
{
    struct dshh_native_set *set;
    char *err;
    int n = load("global: nx\nfunctions:\n  a: {symbol: nx_nope, returns: void}\n"
                 "  b: {symbol: nx_greet, returns: string}\n",
                 &set, &err);
    cr_expect_eq(n, 2, "%s", err);
    cr_expect(strstr(err, "row.yaml:4:15: row 't' (dsh-native-bindings): functions.a.symbol: no "
                          "symbol \"nx_nope\" in "),
              "%s", err);
    cr_expect(strstr(err, "row.yaml:5:34: row 't' (dsh-native-bindings): functions.b.returns: a "
                          "string return needs "
                          "`free: SYMBOL` or `borrowed: true`"),
              "%s", err);
    struct dshh_native_answer a;
    cr_expect_not(dshh__native_call(set, "nx", "a", "[]", 2, &a),
                  "a failed row declared a namespace");
    dshh__native_set_free(set);
    free(err);
}

/* catalog.yaml lists the type names for validation; the adapter's table must hold the same. */
Test(native, the_type_table_matches_the_catalog)
{
    struct dsh_catalog *cat;
    char msg[256];
    cr_assert_eq(dsh_catalog_open(&cat, msg, sizeof msg), 0, "%s", msg);
    const struct dsh_catalog_provider *p = dsh_catalog_find(cat, DSHH_NAME_NATIVE);
    cr_assert(p);
    const struct dsh_catalog_field *returns = dsh_catalog_field_find(p, "functions");
    cr_assert(returns && returns->type == DSH_FIELD_MAP);
    const struct dsh_catalog_field *ret =
        dsh_catalog_field_lookup(returns->fields, returns->n_fields, "returns", 7);
    const struct dsh_catalog_field *args =
        dsh_catalog_field_lookup(returns->fields, returns->n_fields, "args", 4);
    cr_assert(ret && args && args->item_type == DSH_FIELD_OBJECT);
    const struct dsh_catalog_field *arg_type =
        dsh_catalog_field_lookup(args->fields, args->n_fields, "type", 4);
    cr_assert(arg_type);
    cr_expect_eq(ret->n_values, (size_t)DSHH_NATIVE_TYPE_COUNT);
    cr_expect_eq(arg_type->n_values, (size_t)DSHH_NATIVE_TYPE_COUNT - 1,
                 "every type but void is an argument type");
    for (int t = 0; t < DSHH_NATIVE_TYPE_COUNT; t++) {
        cr_expect_str_eq(ret->values[t], dshh__native_type_name(t));
        if (t != DSHH_NATIVE_VOID)
            cr_expect_str_eq(arg_type->values[t - 1], dshh__native_type_name(t));
    }
    dsh_catalog_close(cat);
}

/* A config that skipped catalog validation is refused, not trusted (no crash, nothing loaded). */
Test(native, shapes_the_catalog_guarantees_are_checked_again)
{
    static const char *const rows[] = {
        "global: [nx]\nfunctions: {f: {returns: void}}\n",
        "global: nx\nfunctions: [f]\n",
        "global: nx\nfunctions: {f: {returns: int128}}\n",
        "global: nx\nfunctions: {f: {returns: void, free: [x]}}\n",
        "global: nx\nfunctions: {f: {returns: void, args: [{name: [a], type: bool}]}}\n",
        "global: nx\nfunctions: {f: {returns: void, args: [{name: a, type: char}]}}\n",
        "global: nx\nfunctions: {f: {returns: void, args: x}}\n",
        "global: nx\nfunctions: {[f]: {returns: void}}\n",
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        struct dshh_native_set *set;
        char *err;
        int n = load(rows[i], &set, &err);
        cr_expect_geq(n, 1, "accepted: %s", rows[i]);
        cr_expect_eq(set->n, 0u, "loaded: %s", rows[i]);
        dshh__native_set_free(set);
        free(err);
    }
}

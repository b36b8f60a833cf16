/* Native-binding argument conversion and results (examples/host/native/dshh_native_call.c) with the example
 * library (examples/native): the input's first byte picks a function of every declared type, the
 * rest is the program's arguments as the provider forwards them, [{name: value, ...}] (any bytes).
 * Properties: an answer is ok with one strict JSON value (or undefined for void) or a rejection
 * with a message; an identity function gives back the number it was called with; a plain integer
 * in the type's range, alone in its argument object, is accepted; a `json` argument reaches the library as the
 * same value; a `string` argument as the same bytes. */
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_native_call.h"
#include "fuzz_target.h"

#ifndef NATIVE_EXAMPLE_PATH
#error "meson passes NATIVE_EXAMPLE_PATH (the built example library)"
#endif

struct fn {
    const char *name, *arg; /* the function and its first argument's name */
    double lo, hi;          /* the range of an integer identity (lo < hi), else 0, 0 */
};
static const struct fn fns[] = {
    {"int8", "v", -128, 127},   {"int16", "v", -32768, 32767}, {"int32", "v", -2147483648.0, 2147483647.0},
    {"int64", "v", 0, 0},       {"uint8", "v", 0, 255},        {"uint16", "v", 0, 65535},
    {"uint32", "v", 0, 4294967295.0}, {"uint64", "v", 0, 0},  {"float", "v", 0, 0},
    {"double", "v", 0, 0},      {"negate", "v", 0, 0},         {"length", "text", 0, 0},
    {"info", "query", 0, 0},    {"mix", "a", 0, 0},            {"reset", NULL, 0, 0},
};

static const char row[] =
    "library: " NATIVE_EXAMPLE_PATH "\n"
    "global: nx\n"
    "functions:\n"
    "  int8: {symbol: nx_id_int8, returns: int8, args: [{name: v, type: int8}]}\n"
    "  int16: {symbol: nx_id_int16, returns: int16, args: [{name: v, type: int16}]}\n"
    "  int32: {symbol: nx_id_int32, returns: int32, args: [{name: v, type: int32}]}\n"
    "  int64: {symbol: nx_id_int64, returns: int64, args: [{name: v, type: int64}]}\n"
    "  uint8: {symbol: nx_id_uint8, returns: uint8, args: [{name: v, type: uint8}]}\n"
    "  uint16: {symbol: nx_id_uint16, returns: uint16, args: [{name: v, type: uint16}]}\n"
    "  uint32: {symbol: nx_id_uint32, returns: uint32, args: [{name: v, type: uint32}]}\n"
    "  uint64: {symbol: nx_id_uint64, returns: uint64, args: [{name: v, type: uint64}]}\n"
    "  float: {symbol: nx_id_float, returns: float, args: [{name: v, type: float}]}\n"
    "  double: {symbol: nx_id_double, returns: double, args: [{name: v, type: double}]}\n"
    "  negate: {symbol: nx_not, returns: bool, args: [{name: v, type: bool}]}\n"
    "  length: {symbol: nx_length, returns: uint64, args: [{name: text, type: string}]}\n"
    "  info: {symbol: nx_info_json, returns: json, free: nx_free, args: [{name: query, type: json}]}\n"
    "  mix: {symbol: nx_mix, returns: double, args: [{name: a, type: int8}, {name: b, type: uint16}, "
    "{name: c, type: int32}, {name: d, type: int64}, {name: e, type: float}, {name: f, type: double}, "
    "{name: g, type: bool}, {name: h, type: uint8}]}\n"
    "  reset: {symbol: nx_reset, returns: void}\n";

static struct dshh_native_set *load(void)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)row, sizeof row - 1);
    fuzz_check(yaml_parser_load(&parser, &doc), "the row's YAML: %s", parser.problem);
    yaml_parser_delete(&parser);
    struct dshh_native_set *set;
    fuzz_check(dshh__native_set_new(NULL, &set) == 0, "set");
    fuzz_check(dshh__native_add_row(set, "row.yaml", "nx", &doc, yaml_document_get_root_node(&doc), stderr) == 0,
               "the row loads");
    yaml_document_delete(&doc);
    return set;
}

/* The named argument `name` of arguments [{name: ...}] (one object in an array), or NULL (also
 * for a null); *ret_one tells whether args had that shape with that member. */
static json_object *named_argument(const char *args, size_t len, const char *name, bool *ret_one)
{
    json_object *array = dsh_json_parse_strict_value(args, len), *value = NULL;
    json_object *object = json_object_is_type(array, json_type_array) && json_object_array_length(array) == 1
                              ? json_object_array_get_idx(array, 0)
                              : NULL;
    *ret_one = name && json_object_is_type(object, json_type_object) && json_object_object_get_ex(object, name, &value);
    value = *ret_one ? json_object_get(value) : NULL;
    json_object_put(array);
    return value;
}

/* Whether text is a plain integer (digits, an optional '-'). */
static bool plain_integer(json_object *v)
{
    if (!json_object_is_type(v, json_type_int))
        return false;
    const char *t = json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS);
    t += *t == '-';
    return *t && strspn(t, "0123456789") == strlen(t) && (t[0] != '0' || !t[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct dshh_native_set *set;
    if (!set)
        set = load();
    if (size == 0)
        return 0;
    const struct fn *fn = &fns[data[0] % (sizeof fns / sizeof fns[0])];
    const char *args = (const char *)data + 1;
    size_t len = size - 1;
    struct dshh_native_answer answer;
    fuzz_check(dshh__native_call(set, "nx", fn->name, args, len, &answer), "nx.%s is a function", fn->name);
    bool one;
    json_object *arg = named_argument(args, len, fn->arg, &one);
    if (!answer.ok) {
        fuzz_check(answer.text && answer.len > 0 && strlen(answer.text) == answer.len, "a rejection has a message");
    } else if (!answer.text) {
        fuzz_check(!strcmp(fn->name, "reset"), "only void answers undefined");
    } else {
        json_object *value = dsh_json_parse_strict_value(answer.text, answer.len);
        fuzz_check(dsh_json_is_value(answer.text, answer.len, DSH_JSON_MAX_DEPTH, NULL), "answer %s", answer.text);
        if (fn->lo < fn->hi)
            fuzz_check(one && json_object_get_double(value) == json_object_get_double(arg),
                       "%s(%.*s) answered %s", fn->name, (int)len, args, answer.text);
        if (!strcmp(fn->name, "info")) {
            json_object *query = NULL;
            json_object_object_get_ex(value, "query", &query);
            char *want = strdup(json_object_to_json_string_ext(arg, DSH_JSON_PRINT_FLAGS));
            fuzz_check(!strcmp(json_object_to_json_string_ext(query, DSH_JSON_PRINT_FLAGS), want),
                       "json argument %s arrived as %s", want, answer.text);
            free(want);
        }
        if (!strcmp(fn->name, "length")) {
            size_t n;
            fuzz_check(dsh_json_as_string(arg, &n) && json_object_get_double(value) == (double)n,
                       "string argument length %s", answer.text);
        }
        json_object_put(value);
    }
    /* A plain integer in range is always accepted. */
    json_object *all = dsh_json_parse_strict_value(args, len);
    bool alone = one && json_object_object_length(json_object_array_get_idx(all, 0)) == 1;
    json_object_put(all);
    if (fn->lo < fn->hi && alone && plain_integer(arg) && json_object_get_double(arg) >= fn->lo &&
        json_object_get_double(arg) <= fn->hi)
        fuzz_check(answer.ok, "%s refused %.*s: %s", fn->name, (int)len, args, answer.text);
    json_object_put(arg);
    free(answer.text);
    return 0;
}

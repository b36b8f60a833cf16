/* The non-recursive value scanner (dsh_json_scan_value), the compact copy and the envelope parser
 * that keeps program values as text. The scanner is a pure function of the bytes: the
 * differential cases below run it against the tree parser on the same texts. */
#include "dsh_json_strict.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool scans(const char *text)
{
    return dsh_json_is_value(text, strlen(text), DSH_JSON_VALUE_MAX_DEPTH, NULL);
}

static bool parses(const char *text)
{
    size_t len = strlen(text);
    json_object *v = dsh_json_parse_strict_value(text, len);
    bool ok = v != NULL || dsh_json_is_value(text, len, 0, NULL); /* JSON null is NULL */
    json_object_put(v);
    return ok;
}

static const char *const corpus[] = {
    "{'a': 1}", "{\"a\": NaN}", "[Infinity]", "/*c*/1", "[1,]", "{\"a\":1,}", "{\"a\":1} x", "01", "1.", ".5",
    "+1", "\"\\x41\"", "\"tab\there\"", "\"\\ud800\"", "\"\\udc00x\"", "\"\xff\"", "\"\xc0\xaf\"", "{\"a\"}",
    "{\"a\" 1}", "{1:2}", "[1 2]", "tru", "", " ", "[", "]", "{", "}", "[}", "{]", "{\"a\":}", "{,}", "[,1]",
    "1e400", "-1e999", "[1e308,2e308]", "1e-400",
    "null", "true", "false", "0", "-0", "-0.0", "1e5", "-1.5E-3", "123456789012345678901234567890", "\"\"",
    "\"\\u00e9\\ud83d\\ude00\"", "\"\xc3\xa9\"", " [ 1 , { \"a\" : [ ] , \"b\" : { } } ] ", "{\"k\\u0000\":1}",
    "[[[[]]]]", "{\"a\":{\"b\":{\"c\":null}}}", "[1,\"x\",true,false,null,{},[]]", "\"a\\\"b\\\\c\\/\\n\"",
};

Test(json_scan, agrees_with_the_tree_parser)
{
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
        cr_expect_eq(scans(corpus[i]), parses(corpus[i]), "scanner and parser disagree on [%s]", corpus[i]);
}

/* Deterministic mutations of the corpus (byte flips, cuts, duplications): the scanner and the
 * parser must agree on every one. The same loop is a fuzz target's body. */
Test(json_scan, agrees_with_the_tree_parser_on_mutations)
{
    static const char alphabet[] = "[]{}\",:0-1.eE tnfu\\x\xc3\xa9";
    uint32_t seed = 12345;
    char buf[128];
    for (int round = 0; round < 20000; round++) {
        const char *base = corpus[round % (sizeof corpus / sizeof corpus[0])];
        size_t len = strlen(base);
        if (len >= sizeof buf - 2)
            continue;
        memcpy(buf, base, len + 1);
        for (int k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = len ? (seed >> 8) % len : 0;
            char c = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
            if ((seed >> 4) % 3 == 0 && len)
                buf[at] = c;
            else if ((seed >> 4) % 3 == 1 && len < sizeof buf - 2) {
                memmove(buf + at + 1, buf + at, len - at + 1);
                buf[at] = c;
                len++;
            } else if (len) {
                memmove(buf + at, buf + at + 1, len - at);
                len--;
            }
        }
        buf[len] = '\0';
        if (strlen(buf) != len)
            continue;
        cr_assert_eq(scans(buf), parses(buf), "scanner and parser disagree on [%s]", buf);
    }
}

static char *nested(size_t depth, bool objects)
{
    size_t len = objects ? depth * 6 + 2 : depth * 2;
    char *text = malloc(len + 1), *p = text;
    for (size_t i = 0; i < depth; i++)
        p += sprintf(p, "%s", objects ? (i + 1 < depth ? "{\"a\":" : "{") : "[");
    for (size_t i = 0; i < depth; i++)
        *p++ = objects ? '}' : ']';
    *p = '\0';
    return text;
}

Test(json_scan, nests_to_the_value_limit_without_recursion)
{
    for (int objects = 0; objects < 2; objects++) {
        char *ok = nested(DSH_JSON_VALUE_MAX_DEPTH, objects), *deep = nested(DSH_JSON_VALUE_MAX_DEPTH + 1, objects);
        struct dsh_json_extent extent = {0, 0};
        cr_expect(dsh_json_is_value(ok, strlen(ok), DSH_JSON_VALUE_MAX_DEPTH, &extent), "%d levels refused", DSH_JSON_VALUE_MAX_DEPTH);
        cr_expect_eq(extent.depth, DSH_JSON_VALUE_MAX_DEPTH);
        cr_expect_eq(extent.nodes, DSH_JSON_VALUE_MAX_DEPTH);
        cr_expect_not(dsh_json_is_value(deep, strlen(deep), DSH_JSON_VALUE_MAX_DEPTH, NULL), "one level too many accepted");
        cr_expect_not(dsh_json_is_value(ok, strlen(ok), 40, NULL), "a depth bound is not applied");
        free(ok);
        free(deep);
    }
}

Test(json_scan, reports_the_extent_of_a_value_inside_a_text)
{
    const char *text = " [1, {\"a\": \"]\"}] ,\"next\"";
    struct dsh_json_extent extent;
    const char *after = dsh_json_scan_value(text, text + strlen(text), 8, &extent);
    cr_assert_not_null(after);
    cr_expect_str_eq(after, " ,\"next\"");
    cr_expect_eq(extent.nodes, 4);
    cr_expect_eq(extent.depth, 2);
}

Test(json_scan, compact_drops_only_whitespace_outside_strings)
{
    char text[] = " { \"a b\" :\t[ 1 ,\r\n \"\\\" x \" ] } ";
    size_t n = dsh_json_compact(text, text, strlen(text));
    text[n] = '\0';
    cr_expect_str_eq(text, "{\"a b\":[1,\"\\\" x \"]}");
}

Test(json_scan, minus_zero_keeps_its_text_in_trees)
{
    const char *cases[][2] = {{"-0", "-0"}, {"[-0,0,-0.0,-0e1]", "[-0,0,-0.0,-0e1]"}};
    for (size_t i = 0; i < 2; i++) {
        json_object *v = dsh_json_parse_strict(cases[i][0], strlen(cases[i][0]));
        cr_assert_not_null(v);
        cr_expect_str_eq(json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS), cases[i][1]);
        json_object_put(v);
    }
}

Test(json_scan, envelope_keeps_named_members_as_text)
{
    static const char *const raw[] = {"value", "args", NULL};
    struct dsh_json_slice slices[2];
    const char *text = "{\"type\":\"result\",\"value\":[[-0]],\"ok\":true,\"value\": {\"k\\u0000\":1} }";
    json_object *env = dsh_json_parse_envelope(text, strlen(text), raw, slices, 64);
    cr_assert_not_null(env);
    cr_expect_str_eq(json_object_to_json_string_ext(env, DSH_JSON_PRINT_FLAGS), "{\"type\":\"result\",\"ok\":true}");
    cr_expect_eq(slices[0].len, strlen("{\"k\\u0000\":1}"), "the last repeated value wins");
    cr_expect(memcmp(slices[0].text, "{\"k\\u0000\":1}", slices[0].len) == 0);
    cr_expect_null(slices[1].text);
    json_object_put(env);
    char *deep = nested(5000, false), *frame = malloc(strlen(deep) + 32);
    sprintf(frame, "{\"args\":%s,\"n\":1}", deep);
    env = dsh_json_parse_envelope(frame, strlen(frame), raw, slices, 64);
    cr_expect_not_null(env, "a deep raw member is refused");
    cr_expect_eq(slices[1].len, strlen(deep));
    json_object_put(env);
    sprintf(frame, "{\"other\":%s}", deep);
    env = dsh_json_parse_envelope(frame, strlen(frame), raw, slices, SIZE_MAX);
    cr_expect_null(env, "a deep member outside the raw ones is built");
    free(deep);
    free(frame);
}

Test(json_scan, envelope_budget_bounds_the_nodes_built)
{
    static const char *const raw[] = {"value", NULL};
    struct dsh_json_slice slice;
    const char *wide = "{\"junk\":[1,2,3,4,5,6,7,8,9]}";
    json_object *env = dsh_json_parse_envelope(wide, strlen(wide), raw, &slice, 10);
    cr_expect_not_null(env, "ten nodes within a budget of ten refused");
    json_object_put(env);
    env = dsh_json_parse_envelope(wide, strlen(wide), raw, &slice, 9);
    cr_expect_null(env, "a budget of nine nodes let ten be built");
    const char *bad[] = {"[1]", "{\"value\":[1,]}", "{\"a\":1}x", "{\"a\\u0000\":1}", "{\"value\":1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        env = dsh_json_parse_envelope(bad[i], strlen(bad[i]), raw, &slice, 64);
        cr_expect_null(env, "accepted %s", bad[i]);
        json_object_put(env);
    }
}

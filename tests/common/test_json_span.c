/* Unit level: strict JSON checked without a tree (dsh_json_is_value at the tree parser's nesting)
 * and its member and element slices (dsh_json_members, dsh_json_elements), what dsh mcp applies to
 * a downstream answer before passing its text on: it must agree with the project's strict parser
 * (dsh_json_parse_strict) on what is JSON, count values, and find slices. */
#include "dsh_json_strict.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static bool check(const char *text, size_t len, size_t *ret_nodes)
{
    struct dsh_json_extent extent;
    bool ok = dsh_json_is_value(text, len, DSH_JSON_MAX_DEPTH, &extent);
    if (ok && ret_nodes)
        *ret_nodes = extent.nodes;
    return ok;
}

static bool checks(const char *text)
{
    return check(text, strlen(text), NULL);
}

Test(json_span, agrees_with_the_strict_parser)
{
    static const char *const cases[] = {
        "{}", "[]", " [1, -0.5e+3, \"a\\u00e9\\ud83d\\ude00\", true, false, null] ", "{\"a\":{\"b\":[{}]}}", "0",
        "\"\xc3\xa9\"",
        /* refused */
        "", "[1,]", "{\"a\"}", "{\"a\":1,}", "01", "1.", "-", "+1", "NaN", "Infinity", "'a'", "[1] x", "\"\\x\"",
        "\"\\ud800\"", "\"\\udc00\"", "\"\x01\"", "\"\xc0\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "tru",
        "[", "{\"a\":1", "\"abc", "/* c */ 1", NULL};
    for (size_t i = 0; cases[i]; i++) {
        json_object *tree = dsh_json_parse_strict(cases[i], strlen(cases[i]));
        cr_expect_eq(checks(cases[i]), tree != NULL, "case %zu: %s", i, cases[i]);
        json_object_put(tree);
    }
}

Test(json_span, counts_values_and_bounds_nesting)
{
    size_t nodes = 0;
    static const char text[] = "[[],[],{\"a\":[1,\"x\"]}]";
    cr_assert(check(text, sizeof text - 1, &nodes));
    cr_expect_eq(nodes, 7, "the array, two empty ones, the object, its array and two scalars");
    char deep[2 * (DSH_JSON_MAX_DEPTH + 1) + 1];
    for (int i = 0; i <= DSH_JSON_MAX_DEPTH; i++) {
        deep[i] = '[';
        deep[2 * (DSH_JSON_MAX_DEPTH + 1) - 1 - i] = ']';
    }
    cr_expect_not(check(deep, sizeof deep - 1, NULL), "one level beyond the bound");
    cr_expect(check(deep + 1, sizeof deep - 3, NULL), "control: at the bound");
}

static bool collect(void *arg, size_t index, struct dsh_json_slice element)
{
    char *out = arg;
    sprintf(out + strlen(out), "%zu=%.*s;", index, (int)element.len, element.text);
    return true;
}

Test(json_span, members_and_elements)
{
    static const char text[] = "{\"id\": 7, \"res\\u0075lt\": {\"x\": [1, 2]}, \"id\": \"last\", \"other\": null}";
    static const char *const keys[] = {"id", "result", "missing", NULL};
    struct dsh_json_slice m[3];
    cr_assert(dsh_json_members(text, sizeof text - 1, keys, m));
    cr_expect_eq(m[0].len, 6, "the last of repeated names");
    cr_expect(!memcmp(m[0].text, "\"last\"", 6));
    cr_expect_eq(m[1].len, 13, "a name written with an escape");
    cr_expect(!memcmp(m[1].text, "{\"x\": [1, 2]}", 13));
    cr_expect_null(m[2].text);
    char out[128] = "";
    static const char array[] = "[ 1 , \"a\" ,{} ]";
    cr_assert(dsh_json_elements(array, sizeof array - 1, collect, out));
    cr_expect_str_eq(out, "0=1;1=\"a\";2={};");
    cr_expect_not(dsh_json_members(array, sizeof array - 1, keys, m), "an array has no members");
}

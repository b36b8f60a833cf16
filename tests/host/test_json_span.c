/* Unit level: strict JSON checked without a tree (examples/host/json_span.c), the check dsh mcp
 * applies to a downstream answer before passing its text on: it must agree with the project's
 * strict parser (common/dsh_json_strict.h) on what is JSON, count values, and find spans. */
#include "dsh_json_strict.h"
#include "dshh.h"

#include <criterion/criterion.h>
#include <string.h>

static bool checks(const char *text)
{
    return dshh__json_check(text, strlen(text), NULL);
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
    cr_assert(dshh__json_check(text, sizeof text - 1, &nodes));
    cr_expect_eq(nodes, 7, "the array, two empty ones, the object, its array and two scalars");
    char deep[2 * (DSH_JSON_MAX_DEPTH + 1) + 1];
    for (int i = 0; i <= DSH_JSON_MAX_DEPTH; i++) {
        deep[i] = '[';
        deep[2 * (DSH_JSON_MAX_DEPTH + 1) - 1 - i] = ']';
    }
    cr_expect_not(dshh__json_check(deep, sizeof deep - 1, NULL), "one level beyond the bound");
    cr_expect(dshh__json_check(deep + 1, sizeof deep - 3, NULL), "control: at the bound");
}

static bool collect(void *arg, size_t index, struct dshh_json_span element)
{
    char *out = arg;
    sprintf(out + strlen(out), "%zu=%.*s;", index, (int)element.len, element.p);
    return true;
}

Test(json_span, members_and_elements)
{
    static const char text[] = "{\"id\": 7, \"res\\u0075lt\": {\"x\": [1, 2]}, \"id\": \"last\", \"other\": null}";
    static const char *const keys[] = {"id", "result", "missing", NULL};
    struct dshh_json_span m[3];
    cr_assert(dshh__json_members(text, sizeof text - 1, keys, m));
    cr_expect_eq(m[0].len, 6, "the last of repeated names");
    cr_expect(!memcmp(m[0].p, "\"last\"", 6));
    cr_expect_eq(m[1].len, 13, "a name written with an escape");
    cr_expect(!memcmp(m[1].p, "{\"x\": [1, 2]}", 13));
    cr_expect_null(m[2].p);
    char out[128] = "";
    static const char array[] = "[ 1 , \"a\" ,{} ]";
    cr_assert(dshh__json_elements(array, sizeof array - 1, collect, out));
    cr_expect_str_eq(out, "0=1;1=\"a\";2={};");
    cr_expect_not(dshh__json_members(array, sizeof array - 1, keys, m), "an array has no members");
}

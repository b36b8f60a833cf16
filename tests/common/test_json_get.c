/* Typed JSON reads: each accessor gives the member only when it has the asked type. */
#include "dsh_json_get.h"
#include "dsh_json_strict.h"

#include <criterion/criterion.h>
#include <string.h>

static json_object *parse(const char *text)
{
    json_object *v = dsh_json_parse_strict(text, strlen(text));
    cr_assert(v != NULL, "%s was refused", text);
    return v;
}

Test(json_get, a_member_of_another_type_is_absent)
{
    json_object *o = parse("{\"s\":null,\"n\":1,\"o\":[],\"a\":{},\"b\":\"x\",\"t\":\"true\"}");
    cr_expect_null(dsh_json_get_string(o, "s", NULL), "null is not a string");
    cr_expect_null(dsh_json_get_string(o, "n", NULL), "a number is not a string");
    cr_expect_null(dsh_json_get_text(o, "missing"));
    cr_expect_null(dsh_json_get_object(o, "o"), "an array is not an object");
    cr_expect_null(dsh_json_get_array(o, "a"), "an object is not an array");
    cr_expect_not_null(dsh_json_get_object(o, "a"));
    cr_expect_not_null(dsh_json_get_array(o, "o"));
    bool b = false;
    cr_expect_not(dsh_json_get_bool(o, "t", &b), "a string is not a boolean");
    cr_expect_str_eq(dsh_json_get_text(o, "b"), "x");
    cr_expect(dsh_json_has(o, "s"), "a null member exists");
    cr_expect_not(dsh_json_has(o, "missing"));
    json_object_put(o);
}

Test(json_get, a_container_that_is_not_an_object_has_no_members)
{
    json_object *a = parse("[\"x\"]");
    cr_expect_null(dsh_json_member(a, "0"));
    cr_expect_null(dsh_json_get_text(NULL, "x"));
    cr_expect_not(dsh_json_has(NULL, "x"));
    json_object_put(a);
}

Test(json_get, text_refuses_a_string_with_nul)
{
    json_object *o = parse("{\"k\":\"a\\u0000b\"}");
    size_t len = 0;
    cr_expect_not_null(dsh_json_get_string(o, "k", &len));
    cr_expect_eq(len, 3);
    cr_expect_null(dsh_json_get_text(o, "k"), "a NUL would truncate the name");
    json_object_put(o);
}

Test(json_get, integers_are_range_checked)
{
    json_object *o = parse("{\"i\":42,\"neg\":-5,\"d\":1.5,\"big\":18446744073709551615,\"huge\":1e30,\"s\":\"7\"}");
    int64_t n = 0;
    cr_expect(dsh_json_get_int64(o, "i", 0, 100, &n));
    cr_expect_eq(n, 42);
    cr_expect_not(dsh_json_get_int64(o, "i", 0, 10, &n), "above the range");
    cr_expect_not(dsh_json_get_int64(o, "neg", 0, 100, &n), "below the range");
    cr_expect_not(dsh_json_get_int64(o, "d", INT64_MIN, INT64_MAX, &n), "a fraction");
    cr_expect_not(dsh_json_get_int64(o, "big", INT64_MIN, INT64_MAX, &n), "beyond int64");
    cr_expect_not(dsh_json_get_int64(o, "huge", INT64_MIN, INT64_MAX, &n), "a double");
    cr_expect_not(dsh_json_get_int64(o, "s", INT64_MIN, INT64_MAX, &n), "a string");
    json_object_put(o);
}

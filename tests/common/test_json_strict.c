/* The strict JSON parser used at every JSON trust boundary: exactly RFC 8259, numbers exact. */
#include "dsh_json_strict.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *parse(const char *text)
{
    return dsh_json_parse_strict(text, strlen(text));
}

static void expect_round_trip(const char *text, const char *printed)
{
    json_object *v = parse(text);
    cr_assert(v != NULL, "%s was refused", text);
    cr_expect_str_eq(json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS), printed);
    json_object_put(v);
}

Test(json_strict, refuses_what_json_c_alone_accepts)
{
    const char *bad[] = {"{'a': 1}", "{\"a\": NaN}", "[Infinity]", "[-Infinity]", "/*c*/1", "[1,]", "{\"a\":1,}",
                         "{\"a\":1} x", "01", "1.", ".5", "+1", "1e999", "\"\\x41\"", "\"tab\there\"",
                         "\"\\ud800\"", "\"\\udc00x\"", "\"\xff\"", "\"\xc0\xaf\"", "{\"a\\u0000b\":1}", "{\"a\"}", "{\"a\" 1}", "{1:2}", "[1 2]", "tru", "", " "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object *v = parse(bad[i]);
        cr_expect_null(v, "accepted %s", bad[i]);
        json_object_put(v);
    }
    cr_expect_null(dsh_json_parse_strict("1\0", 2), "an embedded NUL after the value");
}

Test(json_strict, numbers_keep_their_exact_value)
{
    /* Integers beyond 64 bits are doubles printed as written, never clamped. */
    expect_round_trip("[18446744073709552000,-18446744073709552000,123456789012345678901234]",
                      "[18446744073709552000,-18446744073709552000,123456789012345678901234]");
    expect_round_trip("[9223372036854775807,-9223372036854775808,18446744073709551615]",
                      "[9223372036854775807,-9223372036854775808,18446744073709551615]");
    expect_round_trip("[0.1,1e+21,5e-324,-1.5E-7]", "[0.1,1e+21,5e-324,-1.5E-7]");
}

Test(json_strict, strings_are_decoded_and_utf8_checked)
{
    expect_round_trip(" {\"s\" : \"\\u00e9\\ud83d\\ude00\\n\\/\xc3\xa9\"} ", "{\"s\":\"é😀\\n/é\"}");
    json_object *v = parse("\"a\\u0000b\"");
    cr_assert_not_null(v);
    cr_expect_eq(json_object_get_string_len(v), 3, "an escaped NUL stays inside the string");
    json_object_put(v);
}

Test(json_strict, literals_nesting_and_repeated_keys)
{
    expect_round_trip("[true,false,null,[],{}]", "[true,false,null,[],{}]");
    expect_round_trip("{\"k\":1,\"k\":2}", "{\"k\":2}");
    char deep[2 * (DSH_JSON_MAX_DEPTH + 1) + 1];
    memset(deep, '[', DSH_JSON_MAX_DEPTH + 1);
    memset(deep + DSH_JSON_MAX_DEPTH + 1, ']', DSH_JSON_MAX_DEPTH + 1);
    cr_expect_null(dsh_json_parse_strict(deep, 2 * (DSH_JSON_MAX_DEPTH + 1)));
    json_object *ok = dsh_json_parse_strict(deep + 1, 2 * DSH_JSON_MAX_DEPTH);
    cr_expect_not_null(ok, "exactly the maximum depth parses");
    json_object_put(ok);
}

Test(json_strict, is_text_refuses_embedded_nul_and_non_strings)
{
    json_object *plain = json_object_new_string("a/b"), *nul = json_object_new_string_len("a\0b", 3);
    json_object *number = json_object_new_int(1);
    cr_expect(dsh_json_is_text(plain));
    cr_expect_not(dsh_json_is_text(nul));
    cr_expect_not(dsh_json_is_text(number));
    cr_expect_not(dsh_json_is_text(NULL));
    json_object_put(plain);
    json_object_put(nul);
    json_object_put(number);
}

static void expect_value_round_trip(const char *text, const char *printed)
{
    json_object *v = dsh_json_parse_strict_value(text, strlen(text));
    cr_assert(v != NULL, "%s was refused", text);
    cr_expect_str_eq(json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS), printed);
    json_object_put(v);
}

Test(json_strict, program_values_keep_member_names_with_nul)
{
    /* Refused where names are looked up, kept (in order, with every other member) in values. */
    cr_expect_null(parse("{\"k\\u0000\":1}"));
    expect_value_round_trip("{\"k\\u0000\":1}", "{\"k\\u0000\":1}");
    expect_value_round_trip("{\"a\":1,\"\\u0000\":[2,{\"x\\u0000y\":null}],\"b\":\"s\"}",
                            "{\"a\":1,\"\\u0000\":[2,{\"x\\u0000y\":null}],\"b\":\"s\"}");
    /* Repeated names keep their first position and last value, as JSON.parse does. */
    expect_value_round_trip("{\"k\\u0000\":1,\"a\":2,\"k\\u0000\":3,\"a\":4}", "{\"k\\u0000\":3,\"a\":4}");
    /* Names that differ only after the NUL are different names. */
    expect_value_round_trip("{\"k\\u0000a\":1,\"k\\u0000b\":2}", "{\"k\\u0000a\":1,\"k\\u0000b\":2}");
    const char *text = "{\"a\":1,\"k\\u0000\":2}";
    json_object *v = dsh_json_parse_strict_value(text, strlen(text));
    cr_assert_not_null(v);
    json_object *a;
    cr_expect(json_object_object_get_ex(v, "a", &a) && json_object_get_int(a) == 1, "NUL-free names stay members");
    cr_expect(!json_object_object_get_ex(v, "k", NULL), "a NUL-named member is no json-c member");
    /* Inside another value, the object still prints from its own list. */
    json_object *wrap = json_object_new_array();
    json_object_array_add(wrap, v);
    cr_expect_str_eq(json_object_to_json_string_ext(wrap, DSH_JSON_PRINT_FLAGS), "[{\"a\":1,\"k\\u0000\":2}]");
    json_object_put(wrap);
    /* Everything else stays refused. */
    const char *bad[] = {"{\"k\\u0000\":}", "{\"k\\u0000\":1,}", "{\"k\\u0000\" 1}", "{\"\\ud800\":1}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_null(dsh_json_parse_strict_value(bad[i], strlen(bad[i])), "accepted %s", bad[i]);
}

/* Text whose every byte class sits at every offset of the eight-byte scan: all ASCII bytes, a
 * multi-byte character, and long plain runs around them. */
static size_t tricky_text(char *out)
{
    size_t n = 0;
    for (int c = 1; c < 0x80; c++) {
        for (int pad = 0; pad < (c % 11); pad++)
            out[n++] = 'a' + (char)(pad % 26);
        out[n++] = (char)c;
    }
    memcpy(out + n, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9); /* é € 😀 */
    n += 9;
    memset(out + n, 'z', 37);
    return n + 37;
}

Test(json_strict, escaping_prints_what_json_c_prints)
{
    static char text[4096];
    size_t len = tricky_text(text);
    json_object *s = json_object_new_string_len(text, (int)len);
    const char *printed = json_object_to_json_string_ext(s, DSH_JSON_PRINT_FLAGS);
    size_t body = strlen(printed) - 2; /* without the quotes */
    cr_assert_eq(dsh_json_escaped_length(text, len), body);
    static char out[4096 * 6];
    cr_assert_eq(dsh_json_escape(out, text, len), body);
    cr_expect_eq(memcmp(out, printed + 1, body), 0, "forward escape differs from json-c");
    /* In place, moved by a shift (the result builder's case) and by none. */
    for (size_t shift = 0; shift < 20; shift += 19) {
        memset(out, '#', sizeof out);
        memcpy(out, text, len);
        cr_assert_eq(dsh_json_escape_backward(out, len, body, shift), shift + body);
        cr_expect_eq(memcmp(out + shift, printed + 1, body), 0, "in-place escape differs (shift %zu)", shift);
    }
    json_object_put(s);
}

Test(json_strict, decoding_in_place_equals_parsing)
{
    static char text[4096];
    size_t len = tricky_text(text);
    json_object *s = json_object_new_string_len(text, (int)len);
    /* json-c's text, and the same text with escapes a child might choose instead. */
    char *variants[2];
    variants[0] = strdup(json_object_to_json_string_ext(s, DSH_JSON_PRINT_FLAGS));
    cr_assert(asprintf(&variants[1], "\"\\u0041\\/\\ud83d\\ude00%s", variants[0] + 1) > 0);
    for (int v = 0; v < 2; v++) {
        size_t n = strlen(variants[v]);
        json_object *parsed = dsh_json_parse_strict(variants[v], n);
        cr_assert(parsed, "variant %d refused", v);
        size_t decoded = 0;
        const char *after = dsh_json_decode_string(variants[v] + 1, variants[v] + n, variants[v] + 1, &decoded);
        cr_assert_eq(after, variants[v] + n, "variant %d: the closing quote is the end", v);
        cr_assert_eq(decoded, (size_t)json_object_get_string_len(parsed));
        cr_expect_eq(memcmp(variants[v] + 1, json_object_get_string(parsed), decoded), 0, "variant %d differs", v);
        json_object_put(parsed);
        free(variants[v]);
    }
    json_object_put(s);
}

Test(json_strict, decoding_refuses_what_parsing_refuses)
{
    /* Each fault after a plain run long enough for the eight-byte scan, at every alignment. */
    const char *faults[] = {"\t", "\x1f", "\\x", "\\ud800", "\\udc00", "\\ud800\\u0041", "\xff", "\xc0\xaf",
                            "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\\u12g4", "\\"};
    for (size_t f = 0; f < sizeof faults / sizeof faults[0]; f++)
        for (size_t pad = 0; pad < 17; pad++) {
            char body[64];
            memset(body, 'q', pad);
            int n = snprintf(body + pad, sizeof body - pad, "%s", faults[f]) + (int)pad;
            char quoted[80];
            int qn = snprintf(quoted, sizeof quoted, "\"%.*s\"", n, body);
            json_object *v = dsh_json_parse_strict(quoted, (size_t)qn);
            cr_expect_null(v, "parsing accepted fault %zu", f);
            json_object_put(v);
            size_t len;
            cr_expect_null(dsh_json_decode_string(quoted + 1, quoted + qn, quoted + 1, &len),
                           "decoding accepted fault %zu after %zu bytes", f, pad);
        }
    /* No closing quote within the text. */
    size_t len;
    cr_expect_null(dsh_json_decode_string("abcdefghijkl", "abcdefghijkl" + 12, (char[16]){0}, &len));
}

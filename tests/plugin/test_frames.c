/* Decoding of untrusted child frames. */
#include "frames.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

/* The line is copied into a buffer that lives until the next parse, as the control channel's
 * does: a text frame's text is decoded in place there. */
static int parse(const char *line, struct ptc_frame *f, char *why)
{
    static char buffer[8192];
    size_t len = strlen(line);
    cr_assert_lt(len, sizeof buffer);
    memcpy(buffer, line, len + 1);
    return ptc__frame_parse(buffer, len, f, why, 256);
}

static void expect_text(const char *line, const char *text, size_t text_len)
{
    struct ptc_frame f;
    char why[256];
    cr_assert_eq(parse(line, &f, why), 0, "%s refused: %s", line, why);
    cr_expect_eq(f.type, PTC_FRAME_TEXT);
    cr_expect_eq(f.run, 12);
    cr_expect_eq(f.text_len, text_len, "%s", line);
    cr_expect_eq(memcmp(f.text, text, text_len), 0, "%s", line);
    ptc__frame_release(&f);
}

Test(frames, text_in_any_form_decodes_to_the_same_text)
{
    /* The bootstrap's own form (decoded in its line) and forms only the general parser reads. */
    expect_text("{\"type\":\"text\",\"run\":12,\"text\":\"a\\nb\\u00e9\\ud83d\\ude00\\\"\\/\\u0000z\"}",
                "a\nb\xc3\xa9\xf0\x9f\x98\x80\"/\0z", 13);
    expect_text("{\"run\":12,\"type\":\"text\",\"text\":\"a\\nb\"}", "a\nb", 3);
    expect_text("{\"type\":\"text\",\"run\":12,\"text\":\"a\\tb\",\"extra\":\"x\\\"}\"}", "a\tb", 3);
    expect_text("{\"type\":\"text\",\"run\":12,\"text\":\"first\",\"text\":\"la\\u0073t\"}", "last", 4);
    expect_text("{\"type\":\"text\",\"run\":12,\"text\":\"\"}", "", 0);
    expect_text("{ \"type\":\"text\",\"run\":12,\"text\":\"x\" }", "x", 1);
}

/* A line that starts as the plain text form but has members after the text is the general
 * parser's: what it holds (here a result's value, which stays text in the line) points into the
 * line the caller keeps, never into memory of the parse (a fuzz finding: duplicate "type"). */
Test(frames, a_text_form_with_later_members_is_read_from_the_line_itself)
{
    static char line[] = "{\"type\":\"text\",\"run\":1,\"text\":\"a\\\"\",\"type\":\"result\",\"ok\":true,\"value\":\"run\"}";
    struct ptc_frame f;
    char why[256];
    cr_assert_eq(ptc__frame_parse(line, strlen(line), &f, why, sizeof why), 0, "%s", why);
    cr_expect_eq(f.type, PTC_FRAME_RESULT);
    cr_expect(f.ok && f.has_value);
    cr_expect(f.value >= line && f.value + f.value_len <= line + sizeof line, "the value lies in the line");
    cr_expect_eq(f.value_len, 5);
    cr_expect_eq(memcmp(f.value, "\"run\"", 5), 0);
    ptc__frame_release(&f);
}

Test(frames, text_frames_are_as_strict_in_the_plain_form)
{
    const char *bad[] = {
        "{\"type\":\"text\",\"run\":1,\"text\":\"a\\x\"}",          /* bad escape */
        "{\"type\":\"text\",\"run\":1,\"text\":\"\\ud800\"}",         /* lone surrogate */
        "{\"type\":\"text\",\"run\":1,\"text\":\"tab\there\"}",        /* raw control */
        "{\"type\":\"text\",\"run\":1,\"text\":\"\xc0\xaf\"}",        /* overlong */
        "{\"type\":\"text\",\"run\":1,\"text\":\"a\\\"}",            /* unterminated */
        "{\"type\":\"text\",\"run\":01,\"text\":\"a\"}",              /* leading zero */
        "{\"type\":\"text\",\"run\":0,\"text\":\"a\"}",               /* run 0 */
        "{\"type\":\"text\",\"run\":9007199254740993,\"text\":\"a\"}", /* beyond 2^53 */
        "{\"type\":\"text\",\"run\":1,\"text\":\"a\",}",              /* trailing comma */
        "{\"type\":\"text\",\"run\":1,\"text\":\"a\",\"x\":\"\\q\"}", /* bad later member */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ptc_frame f;
        char why[256];
        cr_expect_lt(parse(bad[i], &f, why), 0, "accepted %s", bad[i]);
    }
}

Test(frames, hello)
{
    struct ptc_frame f;
    char why[256];
    cr_assert_eq(parse("{\"type\":\"hello\",\"protocol\":1,\"node\":\"v24.1.0\"}", &f, why), 0);
    cr_expect_eq(f.type, PTC_FRAME_HELLO);
    cr_expect_eq(f.protocol, 1);
    cr_expect_str_eq(f.node, "v24.1.0");
    ptc__frame_release(&f);
    cr_expect_lt(parse("{\"type\":\"hello\",\"node\":\"v24\"}", &f, why), 0, "missing protocol revision");
    cr_expect(strstr(why, "protocol revision") != NULL);
}

Test(frames, garbage_and_non_objects)
{
    struct ptc_frame f;
    char why[256];
    cr_expect_lt(parse("not json", &f, why), 0);
    cr_expect_lt(parse("[1,2]", &f, why), 0);
    cr_expect_lt(parse("{\"type\":\"text\",\"run\":1,\"text\":\"a\"} trailing", &f, why), 0);
    cr_expect_lt(parse("{\"type\":\"bogus\",\"run\":1}", &f, why), 0);
    cr_expect_lt(parse("{\"type\":\"text\",\"run\":1,\"text\":\"\xff\"}", &f, why), 0, "invalid UTF-8");
    cr_expect_lt(parse("{\"type\":\"text\",\"run\":1,\"text\":NaN}", &f, why), 0, "non-JSON literal");
}

Test(frames, call_needs_id_names_and_args)
{
    struct ptc_frame f;
    char why[256];
    cr_assert_eq(parse("{\"type\":\"call\",\"run\":1,\"call\":7,\"global\":\"tools\",\"name\":\"echo\",\"args\":[{\"x\":1}]}",
                       &f, why), 0);
    cr_expect_eq(f.call, 7);
    cr_expect_eq(f.args_bytes, strlen("[{\"x\":1}]"));
    ptc__frame_release(&f);
    cr_expect_lt(parse("{\"type\":\"call\",\"run\":1,\"call\":0,\"global\":\"t\",\"name\":\"e\",\"args\":[]}", &f, why), 0);
    cr_expect_lt(parse("{\"type\":\"call\",\"run\":1,\"call\":-3,\"global\":\"t\",\"name\":\"e\",\"args\":[]}", &f, why), 0);
    cr_expect_lt(parse("{\"type\":\"call\",\"run\":1,\"call\":2,\"global\":\"t\",\"name\":\"e\",\"args\":{}}", &f, why), 0);
    cr_expect_lt(parse("{\"type\":\"call\",\"run\":1,\"call\":1.5,\"global\":\"t\",\"name\":\"e\",\"args\":[]}", &f, why), 0);
}

Test(frames, result_kinds_the_child_may_report)
{
    struct ptc_frame f;
    char why[256];
    cr_assert_eq(parse("{\"type\":\"result\",\"run\":1,\"ok\":true,\"value\":null}", &f, why), 0);
    cr_expect(f.has_value);
    cr_expect(f.value_len == 4 && memcmp(f.value, "null", 4) == 0, "the value is its text in the line");
    ptc__frame_release(&f);
    cr_assert_eq(parse("{\"type\":\"result\",\"run\":1,\"ok\":true}", &f, why), 0);
    cr_expect_not(f.has_value);
    ptc__frame_release(&f);
    cr_assert_eq(parse("{\"type\":\"result\",\"run\":1,\"ok\":false,\"error\":{\"kind\":\"exception\",\"message\":\"m\"}}",
                       &f, why), 0);
    cr_expect_eq(f.error_kind, PTC_FAILURE_EXCEPTION);
    ptc__frame_release(&f);
    cr_assert_eq(parse("{\"type\":\"result\",\"run\":1,\"ok\":false,\"error\":{\"kind\":\"invalid-output\",\"message\":\"m\"}}",
                       &f, why), 0);
    cr_expect_eq(f.error_kind, PTC_FAILURE_INVALID_OUTPUT);
    ptc__frame_release(&f);
    cr_expect_lt(parse("{\"type\":\"result\",\"run\":1,\"ok\":false,\"error\":{\"kind\":\"timeout\",\"message\":\"m\"}}",
                       &f, why), 0, "a child cannot claim a host-selected kind");
}

/* A value and arguments stay text in the line: nothing of them is built, so a deep or large one
 * costs no host memory beyond the line, and numbers (-0 included) keep their text. */
Test(frames, values_and_arguments_stay_text_in_the_line)
{
    struct ptc_frame f;
    char why[256];
    size_t depth = DSH_JSON_VALUE_MAX_DEPTH;
    size_t len = strlen("{\"type\":\"result\",\"run\":1,\"ok\":true,\"value\":}") + 2 * depth + 8;
    char *line = malloc(len + 1), *p = line;
    p += sprintf(p, "{\"type\":\"result\",\"run\":1,\"ok\":true,\"value\":");
    char *value = p;
    for (size_t i = 0; i < depth; i++)
        *p++ = '[';
    p += sprintf(p, "-0");
    for (size_t i = 0; i < depth; i++)
        *p++ = ']';
    *p++ = '}';
    *p = '\0';
    cr_assert_eq(ptc__frame_parse(line, strlen(line), &f, why, sizeof why), 0, "%s", why);
    cr_expect_eq(f.value, value);
    cr_expect_eq(f.value_len, 2 * depth + 2);
    ptc__frame_release(&f);
    free(line);
    const char *call = "{\"type\":\"call\",\"run\":1,\"call\":2,\"global\":\"g\",\"name\":\"n\",\"args\":[-0, 1.50]}";
    cr_assert_eq(parse(call, &f, why), 0, "%s", why);
    cr_expect(f.args_bytes == strlen("[-0, 1.50]") && memcmp(f.args, "[-0, 1.50]", f.args_bytes) == 0);
    ptc__frame_release(&f);
    /* Members outside the value have a node budget: a frame cannot make the host build a tree. */
    size_t n = DSH_JSON_ENVELOPE_MAX_NODES;
    char *junk = malloc(64 + 2 * n), *q = junk;
    q += sprintf(q, "{\"type\":\"result\",\"run\":1,\"ok\":true,\"junk\":[");
    for (size_t i = 0; i < n; i++)
        q += sprintf(q, i ? ",0" : "0");
    sprintf(q, "]}");
    cr_expect_lt(ptc__frame_parse(junk, strlen(junk), &f, why, sizeof why), 0);
    cr_expect_str_eq(why, "control frame is larger than the envelope budget");
    free(junk);
}

Test(frames, numbers_keep_their_text)
{
    const char *text = "[0.1,1e+21,12345678901234567,-1.5e-7]";
    json_object *v = dsh_json_parse_strict(text, strlen(text));
    cr_assert_not_null(v);
    cr_expect_str_eq(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), text);
    json_object_put(v);
}

Test(frames, depth_is_bounded)
{
    char deep[2 * (DSH_JSON_MAX_DEPTH + 10) + 1];
    size_t n = DSH_JSON_MAX_DEPTH + 10;
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    cr_expect_null(dsh_json_parse_strict(deep, 2 * n));
}

Test(frames, bare_scalars_parse)
{
    const char *inputs[] = {"5", "-0.5", "true", "\"s\"", "1e3"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        json_object *v = dsh_json_parse_strict(inputs[i], strlen(inputs[i]));
        cr_expect_not_null(v, "%s", inputs[i]);
        json_object_put(v);
    }
    cr_expect_null(dsh_json_parse_strict("5 6", 3));
    cr_expect_null(dsh_json_parse_strict("", 0));
}

/* The host's own frame types are not frames a child may send; a child's type decodes to its
 * table entry, and the host's frames are encoded from the same table. */
Test(frames, host_frame_types_are_unknown_from_the_child)
{
    struct ptc_frame f;
    char why[256];
    static const char *const host_types[] = {"run", "reply", "revoke", "init-ack", "image-register"};
    for (size_t i = 0; i < sizeof host_types / sizeof host_types[0]; i++) {
        char line[96];
        snprintf(line, sizeof line, "{\"type\":\"%s\",\"run\":1}", host_types[i]);
        cr_expect_lt(parse(line, &f, why), 0, "%s", host_types[i]);
        cr_expect_str_eq(why, "unknown control frame type", "%s", host_types[i]);
    }
    /* The child's error reply is a protocol failure naming the child's message. */
    cr_expect_lt(parse("{\"type\":\"error\",\"frame\":\"x\",\"message\":\"unsupported control frame type \\\"x\\\"\"}", &f, why), 0);
    cr_expect_str_eq(why, "the bootstrap did not handle a control frame: unsupported control frame type \"x\"");
    cr_assert_eq(parse("{\"type\":\"revoked\",\"run\":3}", &f, why), 0);
    cr_expect_eq(f.type, PTC_FRAME_REVOKED);
    cr_expect_eq(f.run, 3);
    ptc__frame_release(&f);
    json_object *revoke = ptc__frame_for_run(PTC_FRAME_REVOKE, 3);
    cr_expect_str_eq(ptc__frame_text(revoke), "{\"type\":\"revoke\",\"run\":3}");
    json_object_put(revoke);
    json_object *undefined = ptc__frame_reply(7, true, false, NULL, "", 0);
    cr_expect_str_eq(ptc__frame_text(undefined), "{\"type\":\"reply\",\"call\":7,\"ok\":true}");
    json_object_put(undefined);
    json_object *rejected = ptc__frame_reply(7, false, false, NULL, "no/way", 6);
    cr_expect_str_eq(ptc__frame_text(rejected), "{\"type\":\"reply\",\"call\":7,\"ok\":false,\"message\":\"no/way\"}");
    json_object_put(rejected);
}

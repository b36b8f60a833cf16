/* plugin/base/strip_check.c: the strip invariant, on hand-made pairs, on everything the real
 * stripper (bootstrap/stripper.js on the pinned Node) produces for a corpus of erasable
 * TypeScript, and on the altered texts of a fault-injection double of that stripper. */
#include "base/strip_check.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static enum ptc_strip_violation check(const char *in, const char *out, size_t *at)
{
    return ptc__strip_check(in, strlen(in), out, strlen(out), at);
}

Test(strip_check, accepts_blanks_in_place)
{
    size_t at = 99;
    cr_assert_eq(check("let x: number = 1", "let x         = 1", &at), PTC_STRIP_NONE);
    cr_assert_eq(check("", "", NULL), PTC_STRIP_NONE);
    cr_assert_eq(check("a\r\nb: T", "a\r\nb   ", NULL), PTC_STRIP_NONE);
    /* Blanked multi-byte characters become whitespace of the same UTF-8 length. */
    cr_assert_eq(check("x: \"\xe6\x97\xa5\xc3\xa9\xf0\x9f\x98\x80\"", "x   \xe2\x80\x82\xc2\xa0 \xef\xbb\xbf ", NULL),
                 PTC_STRIP_NONE);
    /* Other whitespace (U+3000, a tab) is not what amaro writes. */
    cr_assert_eq(check("x: \xe6\x97\xa5", "x  \xe3\x80\x80", NULL), PTC_STRIP_NOT_WHITESPACE);
    cr_assert_eq(check("x: T", "x  \t", NULL), PTC_STRIP_NOT_WHITESPACE);
    /* amaro's ASI guard: `;` as the first character of a blanked run. */
    cr_assert_eq(check("f()\ntype A = 1\n(g)", "f()\n;         \n(g)", NULL), PTC_STRIP_NONE);
}

Test(strip_check, refuses_each_violation_with_its_offset)
{
    size_t at = 0;
    cr_assert_eq(check("let x: T", "let x", &at), PTC_STRIP_LENGTH);
    cr_assert_eq(at, 5);
    cr_assert_eq(check("let x: T = 1", "let x   =21", &at), PTC_STRIP_LENGTH);
    cr_assert_eq(check("let x: T = 1", "let x = eval", &at), PTC_STRIP_NOT_WHITESPACE);
    cr_assert_eq(at, 6);
    cr_assert_eq(check("a: T\nb", "a   \nb", &at), PTC_STRIP_NONE);
    cr_assert_eq(check("a: T\nb", "a \n  b", &at), PTC_STRIP_NOT_WHITESPACE); /* a new line first */
    cr_assert_eq(at, 2);
    cr_assert_eq(check("a: T\nb", "a    b", &at), PTC_STRIP_LINE_MOVED);
    cr_assert_eq(at, 4);
    cr_assert_eq(check("a: \xe2\x80\xa8T", "a      ", &at), PTC_STRIP_LINE_MOVED); /* U+2028 */
    cr_assert_eq(check("a: \r", "a  \n", &at), PTC_STRIP_LINE_MOVED);
    cr_assert_eq(check("type A = 1", ";; ;      ", &at), PTC_STRIP_SEMICOLON_INSIDE);
    cr_assert_eq(at, 1);
    cr_assert_eq(check("x: \xe6\x97\xa5", "x  \xe6  ", &at), PTC_STRIP_OUTPUT_NOT_UTF8);
    cr_assert_eq(at, 3);
    cr_assert_eq(check("x: \xe6\x97\xa5", "x  \xe6\x97 ", &at), PTC_STRIP_OUTPUT_NOT_UTF8);
    cr_assert_eq(check("x\xff", "x ", &at), PTC_STRIP_INPUT_NOT_UTF8);
    /* A NUL is a character like any other: replacing one with code is refused. */
    cr_assert_eq(ptc__strip_check("a\0b", 3, "a=b", 3, &at), PTC_STRIP_NOT_WHITESPACE);
    cr_assert_str_eq(ptc__strip_violation_text(PTC_STRIP_NOT_WHITESPACE),
                     "a changed character did not become whitespace");
}

/* Erasable TypeScript that exercises each kind of blanking amaro does. */
static const char *const corpus[] = {
    "let x: number = 1; return x",
    "const s: \"\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\" = \"\xc3\xa9\"; return s",
    "let a = 1\ntype A = string\n(globalThis)",
    "let b = 1\ninterface I { x: number }\n[1].map(String)",
    "let c = 1\r\n\ttype C = 1\r\n;[c]",
    "const f = <T,>(v: T): T => v; return f<number>(2)",
    "class K { declare y: string; private z?: number = 1; m(this: K): void {} }",
    "abstract class B { abstract m(): void }",
    "let v = (globalThis as any)!; let w = v satisfies object",
    "let q = 1 as\nconst",
    "function g(a?: number, ...r: Array<string>): asserts a {}",
    "let n = null as unknown as Array<{ a: string }>",
    "let u = 1\xe2\x80\xa8type U = 1\n(globalThis)",
    "let m: /* \xc3\xa9 */ number = 3 // trailing: string\nreturn m",
};
#define CORPUS_LEN (sizeof(corpus) / sizeof(corpus[0]))

/* Runs `node script [arg]` with the corpus as requests on its fd 3 (a socket, as the plugin's);
 * returns the answers by id (NULL = none). */
static void strip_corpus(const char *script, const char *arg, json_object *answers[CORPUS_LEN])
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    int in_fd = sv[0];
    for (size_t i = 0; i < CORPUS_LEN; i++) {
        json_object *req = json_object_new_object();
        json_object_object_add(req, "id", json_object_new_int((int)i + 1));
        json_object_object_add(req, "format", json_object_new_string(i % 2 ? "async-function" : "scoped-repl"));
        json_object_object_add(req, "filename", json_object_new_string("/w/[program]"));
        json_object_object_add(req, "source", json_object_new_string(corpus[i]));
        const char *line = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
        cr_assert(write(in_fd, line, strlen(line)) == (ssize_t)strlen(line) && write(in_fd, "\n", 1) == 1);
        json_object_put(req);
    }
    /* The requests fit in the socket's buffer; the stripper reads them, then end of file. */
    cr_assert_eq(shutdown(in_fd, SHUT_WR), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
    char *argv[] = {(char *)DSH_TEST_NODE, (char *)script, (char *)arg, NULL};
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, DSH_TEST_NODE, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(sv[1]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s exited %d", script, status);
    FILE *out = fdopen(in_fd, "r");
    char *line = NULL;
    size_t cap = 0;
    bool ready = false;
    memset(answers, 0, sizeof(json_object *) * CORPUS_LEN);
    while (getline(&line, &cap, out) > 0) {
        json_object *answer = json_tokener_parse(line), *v;
        cr_assert(answer, "answer is JSON: %s", line);
        if (!ready) {
            cr_assert(json_object_object_get_ex(answer, "type", &v) && !strcmp(json_object_get_string(v), "ready"));
            ready = true;
            json_object_put(answer);
            continue;
        }
        cr_assert(json_object_object_get_ex(answer, "id", &v));
        int id = json_object_get_int(v);
        cr_assert(id >= 1 && id <= (int)CORPUS_LEN && !answers[id - 1]);
        answers[id - 1] = answer;
    }
    free(line);
    fclose(out);
}

static const char *stripped_code(json_object *answer)
{
    json_object *ok, *code;
    cr_assert(answer, "an answer for every request");
    cr_assert(json_object_object_get_ex(answer, "ok", &ok) && json_object_get_boolean(ok),
              "stripped: %s", json_object_to_json_string(answer));
    cr_assert(json_object_object_get_ex(answer, "code", &code));
    return json_object_get_string(code);
}

Test(strip_check, the_real_stripper_keeps_the_invariant, .timeout = 120)
{
    json_object *answers[CORPUS_LEN];
    strip_corpus(DSH_TEST_BOOTSTRAP "/stripper.js", NULL, answers);
    for (size_t i = 0; i < CORPUS_LEN; i++) {
        const char *code = stripped_code(answers[i]);
        size_t at = 0;
        enum ptc_strip_violation v = check(corpus[i], code, &at);
        cr_assert_eq(v, PTC_STRIP_NONE, "corpus %zu: %s at %zu", i, ptc__strip_violation_text(v), at);
        cr_assert(strcmp(code, corpus[i]) != 0, "corpus %zu had types to strip", i);
        json_object_put(answers[i]);
    }
}

/* The double alters every stripped text that had a blank; each alteration is refused, and its
 * `unchanged` control (same double, no alteration) is accepted, so the refusals are the alterations'. */
static void refused_by_kind(const char *alteration, enum ptc_strip_violation want)
{
    json_object *answers[CORPUS_LEN];
    strip_corpus(DSH_TEST_STRIPPER_DOUBLE, alteration, answers);
    for (size_t i = 0; i < CORPUS_LEN; i++) {
        const char *code = stripped_code(answers[i]);
        enum ptc_strip_violation v = check(corpus[i], code, NULL);
        cr_assert_eq(v, want, "%s corpus %zu: got %s", alteration, i, ptc__strip_violation_text(v));
        json_object_put(answers[i]);
    }
}

Test(strip_check, a_double_returning_altered_text_is_refused, .timeout = 300)
{
    refused_by_kind("unchanged", PTC_STRIP_NONE);
    refused_by_kind("inject", PTC_STRIP_NOT_WHITESPACE);
    refused_by_kind("newline", PTC_STRIP_NOT_WHITESPACE);
    refused_by_kind("drop", PTC_STRIP_LENGTH);
    refused_by_kind("semicolon", PTC_STRIP_SEMICOLON_INSIDE);
}

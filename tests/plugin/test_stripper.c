/* The out-of-process type stripper (plugin/env/stripper.c) through the real plugin core and the
 * reference services: programs are stripped outside their process (the child never loads amaro),
 * a stripper that returns altered text or breaks its protocol is refused (its fault-injection
 * double, tests/plugin/stripper-double.js), a silent one hands the program back to the child, a
 * killed one is started again, sessions never share one, at most PTC_STRIPPERS_MAX live, and none
 * is left after unload. Retained owners get their typed programs stripped outside too. Strippers are found as this test's descendant processes running
 * `node .../stripper*.js`. */
#include "instance.h"
#include "loaded_provider.h"
#include "strip_check.h"
#include "stripper.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Its value says whether the child loaded amaro: [42, false] when the stripper stripped it. */
#define TYPED_PROGRAM                                                                              \
    "let x: number = 41; return [x + 1, process.moduleLoadList.includes('NativeModule internal/deps/amaro/dist/index')]"
#define STRIPPED_OUTSIDE "\"ok\":true,\"value\":[42,false]"
#define STRIPPED_IN_CHILD "\"ok\":true,\"value\":[42,true]"
/* The same for a retained owner, whose program ends in its value; and one without `:` or `<`. */
#define AMARO_LOADED "process.moduleLoadList.includes('NativeModule internal/deps/amaro/dist/index')"
#define TYPED_STATEMENTS "let y: number = 41; [y + 1, " AMARO_LOADED "]"
#define PLAIN_STATEMENTS "[y + 1, " AMARO_LOADED "]"
#define TYPED_AGAIN "let z: number = y; [z + 1, " AMARO_LOADED "]"
/* TypeScript without `:` or `<` (base/type_marks.h): stripped outside too. */
#define CAST_STATEMENTS "let c = y as number; [c + 1, " AMARO_LOADED "]"
#define ASSERTED_STATEMENTS "let n = y!; [n + 1, " AMARO_LOADED "]"
/* A syntax error the stripper finds: the owner reports its message, naming the owner's own file
 * (the stripper's names `[program]`), and loads no amaro for it. */
#define BROKEN_STATEMENTS "const o = {a: 1;"
#define BROKEN_MESSAGE "\"kind\":\"exception\",\"message\":\"SyntaxError: Expected ',', got ';'\\n    at /"
#define BROKEN_LOCATION "/[program]:1:16\\nconst o = {a: 1;\\n               ^\""
#define AMARO_AFTER_BROKEN "[o, " AMARO_LOADED "]"

struct fixture {
    struct loaded_provider lp;
    char dir[64], wrapper[512]; /* the double's wrapper */
};

/* owner: the run's stateOwner, or NULL for a temporary run. */
static char *run_as(struct fixture *f, const char *session, const char *owner, const char *program)
{
    char request[1024], *spec = NULL;
    size_t spec_len;
    struct dsh_error err = {0};
    snprintf(request, sizeof request, "{\"program\":\"%s\",\"sessionId\":\"%s\",\"stateOwner\":%s%s%s}", program,
             session, owner ? "\"" : "", owner ? owner : "null", owner ? "\"" : "");
    const struct dsh_provider *p = f->lp.p;
    cr_assert_eq(p->resolve(f->lp.inst, request, strlen(request), &spec, &spec_len, &err), 0, "%s", err.message);
    struct dsh_run_callbacks cb = {.struct_size = sizeof cb,
                                   .on_call = loaded_provider_ignore_call,
                                   .on_done = loaded_provider_keep_result,
                                   .userdata = f};
    dsh_run_id id;
    free(f->lp.result);
    f->lp.result = NULL;
    cr_assert_eq(p->run(f->lp.inst, spec, spec_len, &cb, &id, &err), 0, "%s", err.message);
    p->free_text(spec);
    while (!f->lp.result)
        cr_assert_geq(p->wait(f->lp.inst, 1000), 0);
    char *result = f->lp.result;
    f->lp.result = NULL;
    return result;
}

static char *run_in(struct fixture *f, const char *session, const char *program)
{
    return run_as(f, session, NULL, program);
}

static char *run(struct fixture *f, const char *program)
{
    return run_in(f, "default", program);
}

static void expect(char *result, const char *part)
{
    cr_assert(strstr(result, part), "%s in %s", part, result);
    free(result);
}

/* ---- finding stripper processes ----------------------------------------------------------- */

static pid_t parent_of(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    const char *close = strrchr(line, ')'); /* the name may hold spaces and parentheses */
    int ppid = 0;
    char state;
    return close && sscanf(close + 1, " %c %d", &state, &ppid) == 2 ? (pid_t)ppid : 0;
}

static bool is_descendant(pid_t pid)
{
    for (int depth = 0; pid > 1 && depth < 16; depth++)
        if ((pid = parent_of(pid)) == getpid())
            return true;
    return false;
}

/* A node running a stripper script: argv[0] is a node, argv[1] a stripper*.js or *.mjs. */
static bool runs_stripper(pid_t pid)
{
    char path[64], cmd[4096];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(cmd, 1, sizeof cmd - 1, f);
    fclose(f);
    cmd[n] = '\0';
    size_t argv0 = strlen(cmd);
    if (argv0 + 1 >= n || argv0 < 5 || strcmp(cmd + argv0 - 5, "/node") != 0)
        return false;
    const char *script = strrchr(cmd + argv0 + 1, '/');
    return script && strncmp(script, "/stripper", 9) == 0;
}

/* The strippers alive now (this test's descendants), their pids into pids. */
static int strippers(pid_t *pids, int max)
{
    int n = 0;
    DIR *proc = opendir("/proc");
    cr_assert_not_null(proc);
    struct dirent *e;
    while ((e = readdir(proc)))
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9') {
            pid_t pid = (pid_t)atoi(e->d_name);
            if (runs_stripper(pid) && is_descendant(pid) && n < max)
                pids[n++] = pid;
        }
    closedir(proc);
    return n;
}

/* Pumps the plugin's loop until `want` strippers are alive (a barrier: the test's timeout bounds it). */
static void until_strippers(struct fixture *f, int want)
{
    pid_t pids[16];
    while (strippers(pids, 16) != want)
        cr_assert_geq(f->lp.p->wait(f->lp.inst, 20), 0);
}

/* Pumps the loop until `want` strippers are warm: a run then waits for its answer (a run whose
 * session's stripper is still starting is stripped by its child, which is sooner). */
static void until_ready(struct fixture *f, unsigned want)
{
    while (ptc__strippers_ready(&f->lp.inst->strippers) != want)
        cr_assert_geq(f->lp.p->wait(f->lp.inst, 20), 0);
}

/* ---- the double --------------------------------------------------------------------------- */

/* Loads the provider (config: its runtime row before `launch`) with a wrapper that starts the
 * fault-injection double with alteration (stripperPath takes no arguments); the wrapper's own
 * directory is the stripper's confinement root. */
static void load_double(struct fixture *f, const char *config, const char *alteration)
{
    snprintf(f->dir, sizeof f->dir, "/tmp/ptc-stripper-double-XXXXXX");
    cr_assert_not_null(mkdtemp(f->dir), "mkdtemp: %s", strerror(errno));
    snprintf(f->wrapper, sizeof f->wrapper, "%s/stripper-%s.mjs", f->dir, alteration);
    FILE *file = fopen(f->wrapper, "w");
    cr_assert_not_null(file);
    fprintf(file, "globalThis.stripperAlteration = '%s';\nawait import('%s/stripper-double.js');\n", alteration,
            TEST_PLUGIN_TESTS_DIR);
    fclose(file);
    loaded_provider_open_with_stripper(&f->lp, config, f->wrapper);
}

/* The same for a per-call runtime, whose default session's stripper starts at load; returns once
 * it is warm. */
static void open_double(struct fixture *f, const char *alteration)
{
    load_double(f, "", alteration);
    until_ready(f, 1);
}

static void close_double(struct fixture *f)
{
    loaded_provider_close(&f->lp);
    unlink(f->wrapper);
    rmdir(f->dir);
}

/* ---- tests -------------------------------------------------------------------------------- */

Test(stripper, programs_are_stripped_outside_their_process, .timeout = 120)
{
    struct fixture f;
    loaded_provider_open(&f.lp, "");
    until_ready(&f, 1);
    expect(run(&f, TYPED_PROGRAM), STRIPPED_OUTSIDE);
    /* Not erasable TypeScript: the child strips it and reports its own syntax error. */
    expect(run(&f, "enum E { A }"), "\"kind\":\"exception\",\"message\":\"SyntaxError: TypeScript enum is not supported in strip-only mode");
    loaded_provider_close(&f.lp);
}

static void expect_broken(char *result)
{
    cr_assert(strstr(result, BROKEN_MESSAGE) && strstr(result, BROKEN_LOCATION), "%s", result);
    free(result);
}

/* A retained owner's typed program is stripped by the session's stripper, so the owner never
 * loads amaro (about 12 MiB it would keep); its first run waits for the stripper, which the load
 * just started. So is one with another mark of TypeScript (`as`, `!`). A program without a mark
 * reaches the owner as it is, and one the stripper refuses reaches it with the stripper's
 * message. The control: an owner whose stripper never answers strips in its own process, with
 * the same message. */
Test(stripper, retained_owners_get_typed_programs_stripped_outside_their_process, .timeout = 120)
{
    static const char *configs[] = {"executionMode: persistent-in-memory\n",
                                    "executionMode: vm-script\nscriptPersistence: true\n"};
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        struct fixture f;
        loaded_provider_open(&f.lp, configs[i]);
        expect(run_as(&f, "default", "o", TYPED_STATEMENTS), STRIPPED_OUTSIDE);
        expect(run_as(&f, "default", "o", PLAIN_STATEMENTS), STRIPPED_OUTSIDE);
        expect(run_as(&f, "default", "o", TYPED_AGAIN), STRIPPED_OUTSIDE);
        expect(run_as(&f, "default", "o", CAST_STATEMENTS), STRIPPED_OUTSIDE);
        expect(run_as(&f, "default", "o", ASSERTED_STATEMENTS), STRIPPED_OUTSIDE);
        expect_broken(run_as(&f, "default", "b", BROKEN_STATEMENTS));
        expect(run_as(&f, "default", "b", "var o = 1; " AMARO_AFTER_BROKEN), "\"ok\":true,\"value\":[1,false]");
        loaded_provider_close(&f.lp);
    }
    struct fixture f;
    load_double(&f, configs[0], "silent");
    expect(run_as(&f, "default", "o", TYPED_STATEMENTS), STRIPPED_IN_CHILD);
    expect_broken(run_as(&f, "default", "b", BROKEN_STATEMENTS));
    expect(run_as(&f, "default", "b", "var o = 1; " AMARO_AFTER_BROKEN), "\"ok\":true,\"value\":[1,true]");
    close_double(&f);
}

/* The acceptance's fault-injection test: every alteration of the stripped text is refused as a
 * protocol failure naming the broken rule; the unchanged double (the control) strips correctly. */
Test(stripper, a_double_returning_altered_text_is_refused, .timeout = 240)
{
    static const struct {
        const char *alteration;
        enum ptc_strip_violation violation;
    } cases[] = {
        {"inject", PTC_STRIP_NOT_WHITESPACE},
        {"newline", PTC_STRIP_NOT_WHITESPACE},
        {"drop", PTC_STRIP_LENGTH},
        {"semicolon", PTC_STRIP_SEMICOLON_INSIDE},
    };
    struct fixture f;
    open_double(&f, "unchanged");
    expect(run(&f, TYPED_PROGRAM), STRIPPED_OUTSIDE);
    close_double(&f);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        open_double(&f, cases[i].alteration);
        char want[256];
        snprintf(want, sizeof want,
                 "\"ok\":false,\"error\":{\"kind\":\"protocol\",\"message\":\"the type stripper broke its protocol: "
                 "its output was refused: %s (byte ",
                 ptc__strip_violation_text(cases[i].violation));
        expect(run(&f, TYPED_PROGRAM), want);
        close_double(&f);
    }
}

Test(stripper, protocol_garbage_is_never_a_successful_strip, .timeout = 120)
{
    struct fixture f;
    open_double(&f, "garbage");
    expect(run(&f, TYPED_PROGRAM),
           "\"kind\":\"protocol\",\"message\":\"the type stripper broke its protocol: a line that is not a JSON object\"");
    close_double(&f);
    open_double(&f, "wrong-id");
    expect(run(&f, TYPED_PROGRAM), "\"kind\":\"protocol\",\"message\":\"the type stripper broke its protocol: the answer "
                                   "does not name the request it answers (id 1)\"");
    close_double(&f);
}

/* A stripper that never answers: after PTC_STRIPPER_ANSWER_MS the child strips the program. */
Test(stripper, a_silent_stripper_hands_the_program_back_to_the_child, .timeout = 120)
{
    struct fixture f;
    open_double(&f, "silent");
    expect(run(&f, TYPED_PROGRAM), STRIPPED_IN_CHILD);
    close_double(&f);
}

Test(stripper, a_killed_stripper_is_started_again, .timeout = 120)
{
    struct fixture f;
    loaded_provider_open(&f.lp, "");
    until_ready(&f, 1);
    expect(run(&f, TYPED_PROGRAM), STRIPPED_OUTSIDE);
    pid_t before[4], after[4];
    cr_assert_eq(strippers(before, 4), 1);
    cr_assert_eq(kill(before[0], SIGKILL), 0);
    /* Stripped by whichever of the two answers: the killed one's request goes to the child. */
    expect(run(&f, TYPED_PROGRAM), "\"ok\":true,\"value\":[42,");
    until_strippers(&f, 1);
    cr_assert_eq(strippers(after, 4), 1);
    cr_assert_neq(after[0], before[0]);
    until_ready(&f, 1);
    expect(run(&f, TYPED_PROGRAM), STRIPPED_OUTSIDE);
    loaded_provider_close(&f.lp);
}

/* One stripper per session (the default session's is warmed at load), at most
 * PTC_STRIPPERS_MAX, and none after unload. A session's first run starts its stripper (and is
 * stripped by its child unless the stripper was warm first); once warm, it strips that session's. */
static void first_and_warm(struct fixture *f, const char *session, unsigned warm)
{
    expect(run_in(f, session, TYPED_PROGRAM), "\"ok\":true,\"value\":[42,");
    until_ready(f, warm);
    expect(run_in(f, session, TYPED_PROGRAM), STRIPPED_OUTSIDE);
}

Test(stripper, sessions_never_share_a_stripper, .timeout = 240)
{
    struct fixture f;
    pid_t pids[16];
    loaded_provider_open(&f.lp, "");
    until_ready(&f, 1);
    expect(run(&f, TYPED_PROGRAM), STRIPPED_OUTSIDE);
    cr_assert_eq(strippers(pids, 16), 1);
    first_and_warm(&f, "s1", 2);
    cr_assert_eq(strippers(pids, 16), 2);
    expect(run_in(&f, "s1", TYPED_PROGRAM), STRIPPED_OUTSIDE);
    cr_assert_eq(strippers(pids, 16), 2);
    first_and_warm(&f, "s2", 3);
    first_and_warm(&f, "s3", PTC_STRIPPERS_MAX);
    cr_assert_eq(strippers(pids, 16), PTC_STRIPPERS_MAX);
    /* A fifth session closes the least recently used idle stripper. */
    first_and_warm(&f, "s4", PTC_STRIPPERS_MAX);
    until_strippers(&f, PTC_STRIPPERS_MAX);
    loaded_provider_close(&f.lp);
    cr_assert_eq(strippers(pids, 16), 0, "no stripper outlives unload");
}

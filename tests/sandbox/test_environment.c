/* The host environment never reaches a program: credentials, NODE_OPTIONS and LD_* in the host's
 * environ stay out, in every mode. Controls start the same Node directly with the host's
 * environment, proving the secrets and the injection are real. */
#include "harness.h"

#include <criterion/criterion.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static struct fx f;

static void setup(void)
{
    fx_setup(&f, NULL);
}

static void teardown(void)
{
    fx_teardown(&f);
}

TestSuite(environment, .init = setup, .fini = teardown, .timeout = 90);

/* Runs node directly with this process's environment; returns its stdout. */
static char *run_leaky(const char *js)
{
    int p[2];
    cr_assert(pipe(p) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    char *argv[] = {DSH_TEST_NODE, "-e", (char *)js, NULL};
    pid_t pid;
    cr_assert(posix_spawn(&pid, DSH_TEST_NODE, &fa, NULL, argv, environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    char buf[4096];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof(buf))) > 0)
        fwrite(buf, 1, (size_t)n, m);
    fclose(m);
    close(p[0]);
    waitpid(pid, NULL, 0);
    return out;
}

static const char dump_env[] = "console.log('ENV:'+JSON.stringify(process.env))";

Test(environment, host_credentials_are_never_inherited)
{
    setenv("AWS_SECRET_ACCESS_KEY", "dsh-host-secret-aws", 1);
    setenv("GITHUB_TOKEN", "dsh-host-secret-gh", 1);
    setenv("DSH_SERVICE_PASSWORD", "dsh-host-secret-pw", 1);
    setenv("LD_LIBRARY_PATH", "/dsh-host-secret-ld", 1);
    const char *modes[] = {RO, WW, DANGER};
    for (int i = 0; i < 3; i++) {
        struct run r;
        fx_run(&f, modes[i], dump_env, NULL, &r);
        cr_assert(tag_value(&r, "ENV"), "%s: no env dump", modes[i]);
        cr_assert(!strstr(r.out, "dsh-host-secret"), "%s leaked the host env: %s", modes[i], r.out);
        cr_assert(strstr(r.out, "\"PATH\":\"/usr/local/bin:/usr/bin:/bin\""), "safe PATH");
        cr_assert(strstr(r.out, "\"LANG\":\"C.UTF-8\""));
        cr_assert(fx_outside_unchanged(&f));
        run_free(&r);
    }
    char *leaky = run_leaky(dump_env);
    cr_assert(strstr(leaky, "dsh-host-secret-aws"),
              "control: the secret is really in the host env");
    free(leaky);
}

Test(environment, node_options_require_injection)
{
    char evil[256], js[512];
    snprintf(evil, sizeof(evil), "%s/evil.js", f.shared);
    fx_write(evil, "console.log('EVIL-LOADED');\n");
    char opt[300];
    snprintf(opt, sizeof(opt), "--require %s", evil);
    setenv("NODE_OPTIONS", opt, 1);
    setenv("NODE_PATH", f.shared, 1);
    fx_snapshot(&f);
    snprintf(js, sizeof(js), "R('O',()=>String(process.env.NODE_OPTIONS))");
    const char *modes[] = {RO, WW, DANGER};
    for (int i = 0; i < 3; i++) {
        struct run r;
        fx_run(&f, modes[i], js, NULL, &r);
        cr_assert(!strstr(r.out, "EVIL-LOADED"), "%s: the injected module ran", modes[i]);
        cr_assert_str_eq(tag_value(&r, "O"), "OK:undefined");
        cr_assert(fx_outside_unchanged(&f));
        run_free(&r);
    }
    char *leaky = run_leaky("0");
    cr_assert(strstr(leaky, "EVIL-LOADED"), "control: NODE_OPTIONS injection works when leaked");
    free(leaky);
}

Test(environment, loader_variables_refused_as_additions)
{
    /* They would act on the supervisor and launcher, which run before any confinement. */
    const char *bad[] = {"LD_PRELOAD=/x.so", "LD_LIBRARY_PATH=/x", "GLIBC_TUNABLES=glibc.x=1",
                         "NOEQUALS", "=value"};
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f.svc);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *argv[] = {DSH_TEST_NODE, "-e", "0", NULL};
        const char *env[] = {bad[i], NULL};
        struct dsh_spawn_request req = {
            .struct_size = sizeof(req), .argv = argv, .env = env, .cwd = f.ws};
        struct dsh_process *p = NULL;
        struct dsh_error err = {0};
        cr_assert_eq(sp->spawn(sp->ctx, &req, &p, &err), DSH_E_REQUEST_INVALID, "%s", bad[i]);
        cr_assert_null(p);
    }
}

Test(environment, explicit_node_options_from_the_provider_pass)
{
    /* The ambient NODE_OPTIONS never does; a provider's own (heap limit) is its explicit choice. */
    setenv("NODE_OPTIONS", "--max-old-space-size=99", 1);
    const char *env[] = {"NODE_OPTIONS=--max-old-space-size=64", NULL};
    struct run r;
    fx_run(&f, WW, "R('O',()=>process.env.NODE_OPTIONS)", env, &r);
    cr_assert_str_eq(tag_value(&r, "O"), "OK:--max-old-space-size=64");
    run_free(&r);
}

Test(environment, exact_allow_list)
{
    struct run r;
    fx_run(&f, WW,
           "const k=Object.keys(process.env).filter(n=>!n.startsWith('DSH_T_')).sort();"
           "console.log('K:OK:'+k.join(','));console.log('H:OK:'+process.env.HOME)",
           NULL, &r);
    cr_assert_str_eq(tag_value(&r, "K"), "OK:HOME,LANG,PATH,TEMP,TMP,TMPDIR");
    cr_assert(strstr(tag_value(&r, "H"), f.tmproot), "HOME is the private temp dir");
    run_free(&r);
    fx_run(&f, RO,
           "console.log('K:OK:'+Object.keys(process.env).filter(n=>!n.startsWith('DSH_T_'))"
           ".sort().join(','))",
           NULL, &r);
    cr_assert_str_eq(tag_value(&r, "K"), "OK:HOME,LANG,PATH");
    run_free(&r);
}

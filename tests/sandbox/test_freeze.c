/* freeze() of the subprocess service (ABI 1.1): a confined range whose descendant appends to a
 * workspace file in a loop stops growing the file once freeze() reports frozen -- while a control
 * loop outside every range keeps appending to its own file (the barrier that shows time passed) --
 * then terminate() kills it from frozen, nothing of it runs on the way, and release() removes the
 * range's cgroup. */
#include "harness.h"

#include "file_growth.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct fx f;

static void setup(void)
{
    fx_setup(&f, NULL);
}

static void teardown(void)
{
    fx_teardown(&f);
}

TestSuite(freeze, .init = setup, .fini = teardown, .timeout = 120);

/* Entries named dsh-range-<this pid>-* in the host's cgroup2 and v1 freezer directories and in
 * this process's session groups there (dsh-session-<this pid>-*). */
static int ranges_in(const char *dir, const char *range_prefix, const char *session_prefix)
{
    int n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        n += strncmp(e->d_name, range_prefix, strlen(range_prefix)) == 0;
        if (session_prefix && strncmp(e->d_name, session_prefix, strlen(session_prefix)) == 0) {
            char sub[PATH_MAX];
            snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
            n += ranges_in(sub, range_prefix, NULL);
        }
    }
    if (d)
        closedir(d);
    return n;
}

static int range_cgroups_left(void)
{
    static const char *const roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified",
                                        "/sys/fs/cgroup/freezer"};
    char range_prefix[64], session_prefix[64];
    int n = 0;
    snprintf(range_prefix, sizeof(range_prefix), "dsh-range-%ld-", (long)getpid());
    snprintf(session_prefix, sizeof(session_prefix), "dsh-session-%ld-", (long)getpid());
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
        n += ranges_in(roots[i], range_prefix, session_prefix);
    return n;
}

Test(freeze, a_frozen_range_runs_nothing_until_it_is_killed)
{
    char inside[PATH_MAX], outside[PATH_MAX];
    snprintf(inside, sizeof(inside), "%s/appended", f.ws);
    snprintf(outside, sizeof(outside), "%s/control-appended", f.root);
    struct live l;
    cr_assert_eq(live_start(&f, WW,
                            "cp.spawn('/bin/sh',['-c','while :; do echo x >> \"$0\"; done',"
                            "process.env.DSH_T_WS+'/appended'],{stdio:'ignore',detached:true});"
                            "setInterval(()=>{},1000)",
                            NULL, &l),
                 0);
    const struct dsh_subprocess_service *sp = dsh_linux_subprocess(f.svc);
    cr_assert_geq(sp->struct_size, offsetof(struct dsh_subprocess_service, freeze) + sizeof(sp->freeze));
    file_wait_growth(inside, 0); /* the descendant runs: its file grows */
    int rc = sp->freeze(sp->ctx, l.proc);
    if (rc == DSH_E_UNSUPPORTED) {
        struct run r;
        live_end(&l, &r);
        run_free(&r);
        cr_skip_test("no usable cgroup for ranges on this machine");
    }
    while ((rc = sp->freeze(sp->ctx, l.proc)) == 0)
        usleep(1000);
    cr_assert_eq(rc, 1, "freeze: %s", dsh_strerror(rc));
    off_t frozen_size = file_size_of(inside);

    /* Barrier: a loop outside every range appends 500 lines meanwhile. */
    pid_t control;
    char *argv[] = {"/bin/sh", "-c", "while :; do echo x >> \"$0\"; done", outside, NULL};
    cr_assert_eq(posix_spawn(&control, "/bin/sh", NULL, NULL, argv, NULL), 0);
    file_wait_growth(outside, 1000);
    kill(control, SIGKILL);
    waitpid(control, NULL, 0);
    cr_assert_eq(file_size_of(inside), frozen_size, "nothing of the frozen range ran");
    cr_assert_eq(sp->freeze(sp->ctx, l.proc), 1, "freeze is idempotent");

    cr_assert_eq(sp->terminate(sp->ctx, l.proc, 5000), 0);
    cr_assert(live_pump(&l, 30000), "the frozen range was killed and quiesced");
    cr_assert_eq(file_size_of(inside), frozen_size, "the kill let nothing run first");
    struct run r;
    live_end(&l, &r);
    run_free(&r);
    cr_assert_eq(range_cgroups_left(), 0, "release removed the range's cgroup");
}

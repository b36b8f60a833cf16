/* Roots validated, fail closed: the services refuse every root that would defeat the policy
 * (exact messages), the temp root lies outside every permitted workspace, and the per-host temp
 * directories of an instance that died are removed by the next one. (A run's TMPDIR is a tmpfs
 * in its own mount namespace: another run cannot see its files through any root.) */
#include "harness.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
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

TestSuite(roots, .init = setup, .fini = teardown, .timeout = 90);

static char message[1024];

static int create(const char *workspace, const char *mode, const char *const *writable,
                  const char *const *readable, const char *temp_root, struct dsh_linux_services **ret)
{
    struct dsh_linux_services_options o = {
        .struct_size = sizeof o,
        .launcher_path = DSH_TEST_LAUNCHER,
        .supervisor_path = DSH_TEST_SUPERVISOR,
        .default_mode = mode,
        .workspace_root = workspace,
        .extra_writable_roots = writable,
        .extra_readable_roots = readable,
        .temp_root = temp_root,
    };
    struct dsh_error err = {0};
    struct dsh_linux_services *s = NULL;
    int rc = dsh_linux_services_create(&o, &s, &err);
    snprintf(message, sizeof message, "%s", err.message);
    if (ret)
        *ret = s;
    else
        dsh_linux_services_destroy(s);
    return rc;
}

Test(roots, every_root_that_defeats_the_policy_is_refused_with_its_field)
{
    const char *slash[] = {"/", NULL};
    cr_expect_eq(create(f.ws, WW, slash, NULL, f.tmproot, NULL), DSH_E_CONFIG_INVALID);
    cr_expect_str_eq(message, "extra_writable_roots[0] \"/\" is refused: it is the filesystem root");
    cr_expect_eq(create("/", RO, NULL, NULL, f.tmproot, NULL), DSH_E_CONFIG_INVALID);
    cr_expect_str_eq(message, "workspace_root \"/\" is refused: it is the filesystem root");
    /* The workspace containing the temp root: every run's private files would be in it. */
    cr_expect_eq(create(f.root, RO, NULL, NULL, f.tmproot, NULL), DSH_E_CONFIG_INVALID);
    char want[1024];
    snprintf(want, sizeof want, "workspace_root \"%s\" is refused: it contains the temp root %s, where runs keep "
             "their private files", f.root, f.tmproot);
    cr_expect_str_eq(message, want);
    const char *readable_parent[] = {f.root, NULL};
    cr_expect_eq(create(f.ws, RO, NULL, readable_parent, f.tmproot, NULL), DSH_E_CONFIG_INVALID);
    snprintf(want, sizeof want, "extra_readable_roots[0] \"%s\" is refused: it contains the temp root %s, where runs "
             "keep their private files", f.root, f.tmproot);
    cr_expect_str_eq(message, want);
    /* A root given through a symlink to / is judged by what it resolves to. */
    char link[256];
    snprintf(link, sizeof link, "%s/to-root", f.outside);
    cr_assert_eq(symlink("/", link), 0);
    const char *via_link[] = {f.extra, link, NULL};
    cr_expect_eq(create(f.ws, WW, via_link, NULL, f.tmproot, NULL), DSH_E_CONFIG_INVALID);
    snprintf(want, sizeof want, "extra_writable_roots[1] \"%s\" (resolves to /) is refused: it is the filesystem root",
             link);
    cr_expect_str_eq(message, want);
    /* Writable roots never overlap what runs execute: the readable roots and the helpers. */
    const char *ws_parent_of_shared[] = {f.root, NULL};
    const char *shared_below[] = {f.shared, NULL};
    cr_expect_eq(create(f.ws, WW, ws_parent_of_shared, shared_below, NULL, NULL), DSH_E_CONFIG_INVALID);
    snprintf(want, sizeof want, "extra_writable_roots[0] \"%s\" is refused: a writable root may not contain %s, which "
             "runs read and execute", f.root, f.shared);
    cr_expect_str_eq(message, want);
    char helpers[512];
    snprintf(helpers, sizeof helpers, "%s", DSH_TEST_LAUNCHER);
    *strrchr(helpers, '/') = '\0';
    const char *helper_dir[] = {helpers, NULL};
    cr_expect_eq(create(f.ws, WW, helper_dir, NULL, f.tmproot, NULL), DSH_E_CONFIG_INVALID);
    cr_expect(strstr(message, "is refused: a writable root may not contain") ||
              strstr(message, "is refused: a writable root may not lie inside"), "%s", message);
    /* System directories are never writable; the workspace counts as writable unless the
     * default mode is read-only (confine checks a session switched later). */
    const char *etc[] = {"/etc", NULL};
    cr_expect_eq(create(f.ws, WW, etc, NULL, f.tmproot, NULL), DSH_E_CONFIG_INVALID);
    cr_expect_str_eq(message, "extra_writable_roots[0] \"/etc\" is refused: /etc is a system directory, never writable");
    cr_expect_eq(create("/home", WW, NULL, NULL, f.tmproot, NULL), DSH_E_CONFIG_INVALID);
    cr_expect_str_eq(message, "workspace_root \"/home\" is refused: /home is a system directory, never writable");
    cr_expect_eq(create("/etc", RO, NULL, NULL, f.tmproot, NULL), 0, "reading /etc is the caller's choice: %s", message);
    /* The temp root itself is a dedicated directory. */
    cr_expect_eq(create(f.ws, RO, NULL, NULL, "/tmp", NULL), DSH_E_CONFIG_INVALID);
    cr_expect_str_eq(message, "temp_root \"/tmp\" is refused: /tmp is a system directory, never writable");
    /* Control: the fixture's own layout (siblings) is accepted. */
    cr_expect_eq(create(f.ws, WW, (const char *[]){f.extra, NULL}, (const char *[]){f.shared, NULL}, f.tmproot, NULL), 0,
                 "%s", message);
}

Test(roots, the_default_temp_root_is_this_users_private_directory)
{
    struct dsh_linux_services *s;
    cr_assert_eq(create(f.ws, WW, NULL, NULL, NULL, &s), 0, "%s", message);
    char want[64];
    snprintf(want, sizeof want, "/tmp/dsh-%u", (unsigned)geteuid());
    struct stat st;
    cr_assert_eq(lstat(want, &st), 0);
    cr_expect(S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 07777) == 0711, "mode %o",
              st.st_mode & 07777);
    dsh_linux_services_destroy(s);
    /* So /tmp as a workspace contains it, and is refused even for reading. */
    cr_expect_eq(create("/tmp", RO, NULL, NULL, NULL, NULL), DSH_E_CONFIG_INVALID);
    char msg[256];
    snprintf(msg, sizeof msg, "workspace_root \"/tmp\" is refused: it contains the temp root %s, where runs keep "
             "their private files", want);
    cr_expect_str_eq(message, msg);
}

static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

static void on_done(void *u, int st, struct dsh_confinement *c)
{
    *(struct dsh_confinement **)u = st == 0 ? c : NULL;
}

/* An instance killed while its run's temp dir holds files leaves its host directory behind;
 * the next instance on the same temp root removes it, and never a live instance's. */
Test(roots, a_killed_instance_leaves_nothing_after_the_next_start)
{
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    pid_t child = fork();
    if (child == 0) {
        struct dsh_linux_services *s;
        if (create(f.ws, WW, NULL, NULL, f.tmproot, &s) < 0)
            _exit(1);
        const struct dsh_sandbox_service *sb = dsh_linux_sandbox(s);
        char policy[512];
        snprintf(policy, sizeof policy, "{\"mode\":\"workspace-write\",\"workspaceRoot\":\"%s\"}", f.ws);
        const char *argv[] = {DSH_TEST_NODE, "-e", "0", NULL};
        uint64_t op;
        struct dsh_confinement *conf = NULL;
        if (sb->confine(sb->ctx, argv, policy, strlen(policy), on_done, &conf, &op) < 0 || !conf)
            _exit(2);
        char file[512];
        for (const char *const *e = conf->env; *e; e++)
            if (!strncmp(*e, "TMPDIR=", 7))
                snprintf(file, sizeof file, "%s/left-behind", *e + 7);
        FILE *fp = fopen(file, "w");
        if (!fp || fputs("data", fp) < 0 || fclose(fp) != 0)
            _exit(3);
        if (write(ready[1], "x", 1) != 1)
            _exit(4);
        pause(); /* killed here, no destroy */
        _exit(5);
    }
    close(ready[1]);
    char c;
    cr_assert_eq(read(ready[0], &c, 1), 1, "the child instance made a run's temp dir");
    close(ready[0]);
    cr_assert_eq(count_entries(f.tmproot, "dsh-host-"), 2, "the child's directory and the fixture's");
    /* Control: a live instance's directory is left alone by a new start. */
    cr_expect_eq(create(f.ws, RO, NULL, NULL, f.tmproot, NULL), 0, "%s", message);
    cr_expect_eq(count_entries(f.tmproot, "dsh-host-"), 2, "the live child's directory stays");
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_expect_eq(count_entries(f.tmproot, "dsh-host-"), 2, "left behind by the killed instance");
    cr_expect_eq(create(f.ws, RO, NULL, NULL, f.tmproot, NULL), 0, "%s", message);
    cr_expect_eq(count_entries(f.tmproot, "dsh-host-"), 1, "only the fixture's own remains");
}

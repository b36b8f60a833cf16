/* The program's dedicated identity on a root host: per-uid kernel counts that are not root's,
 * root's 0600 files closed in the readable roots, and files created in the workspace still owned
 * by the host's user (the idmapped writable roots). Each case has a danger-full-access control,
 * which runs as the host's uid. Without root there is no identity to give: the cases skip. */
#include "harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

static struct fx f;

static void setup(void)
{
    if (geteuid() != 0)
        cr_skip_test("a dedicated identity needs a root host");
    fx_setup(&f, NULL);
}

static void teardown(void)
{
    if (geteuid() == 0)
        fx_teardown(&f);
}

TestSuite(identity, .init = setup, .fini = teardown, .timeout = 90);

static const char *report_identity(const struct run *r)
{
    static char level[32];
    json_object *rep = json_tokener_parse(r->report), *caps = NULL, *v = NULL;
    snprintf(level, sizeof(level), "(missing)");
    if (rep && json_object_object_get_ex(rep, "capabilities", &caps) &&
        json_object_object_get_ex(caps, "identity", &v))
        snprintf(level, sizeof(level), "%s", json_object_get_string(v));
    json_object_put(rep);
    return level;
}

Test(identity, the_program_runs_as_a_dedicated_uid)
{
    const char *js =
        "R('ID',()=>process.getuid()+'/'+process.getgid()+'/'+process.getgroups());"
        "R('NAME',()=>os.userInfo().username+'/'+cp.execFileSync('/usr/bin/id',['-gn'])"
        ".toString().trim())";
    struct run a, b, control;
    fx_run(&f, WW, js, NULL, &a);
    fx_run(&f, RO, js, NULL, &b);
    fx_run(&f, DANGER, js, NULL, &control);
    cr_assert(tag_ok(&a, "ID") && tag_ok(&b, "ID") && tag_ok(&control, "ID"));
    cr_assert_str_eq(report_identity(&a), "full");
    cr_assert_str_eq(report_identity(&b), "full");
    unsigned uid_a = 0, gid_a = 0, uid_b = 0;
    char groups[64] = "";
    cr_assert_eq(sscanf(tag_value(&a, "ID"), "OK:%u/%u/%63s", &uid_a, &gid_a, groups), 3);
    cr_assert_eq(sscanf(tag_value(&b, "ID"), "OK:%u", &uid_b), 1);
    cr_assert(uid_a != 0 && gid_a != 0, "workspace-write runs as %u:%u", uid_a, gid_a);
    char only[32];
    snprintf(only, sizeof(only), "%u", gid_a);
    cr_assert_str_eq(groups, only, "no supplementary group but its own");
    cr_assert(uid_b != 0 && uid_b != uid_a, "each run has an id of its own (%u, %u)", uid_a, uid_b);
    /* The ids have names (os.userInfo(), id, getpass and git's ident look them up). */
    cr_assert_str_eq(tag_value(&a, "NAME"), "OK:dsh-program/dsh-program");
    cr_assert_str_eq(tag_value(&b, "NAME"), "OK:dsh-program/dsh-program");
    cr_assert(strncmp(tag_value(&control, "ID"), "OK:0/0/", 7) == 0,
              "control: unconfined is the host's uid (%s)", tag_value(&control, "ID"));
    run_free(&a);
    run_free(&b);
    run_free(&control);
}

/* Opens 200 inotify instances in the program and holds them while the host opens one. */
static bool host_inotify_while_held(const char *mode, char *ret_opened, size_t len)
{
    struct live l;
    const char *js = "cp.spawn(E.DSH_T_PROBE,['inotify','200'],{stdio:'inherit'});"
                     "setInterval(()=>{},1000)";
    cr_assert_eq(live_start(&f, mode, js, NULL, &l), 0);
    while (!(l.out && strstr(l.out, "HELD\n")) && !live_pump(&l, 100)) {
    }
    cr_assert(l.out && strstr(l.out, "HELD\n"), "the probe never held its instances: %s %s",
              l.out ? l.out : "", l.err ? l.err : "");
    int fd = inotify_init1(IN_CLOEXEC);
    int err = errno;
    if (fd >= 0)
        close(fd);
    const char *opened = strstr(l.out, "OPENED:");
    snprintf(ret_opened, len, "%.*s", (int)strcspn(opened, "\n"), opened);
    struct run r;
    live_end(&l, &r); /* kills the range at once: the control's instances go with it */
    run_free(&r);
    errno = err;
    return fd >= 0;
}

Test(identity, inotify_instances_are_not_the_hosts)
{
    char opened[64];
    cr_assert(host_inotify_while_held(WW, opened, sizeof(opened)),
              "confined: the host's inotify_init1 failed (%s) while the program held %s",
              strerror(errno), opened);
    cr_log_info("confined: %s", opened);
    /* Control: the same program as the host's uid exhausts the host's own per-uid limit. Short:
     * the range is killed right after the one check. */
    bool ok = host_inotify_while_held(DANGER, opened, sizeof(opened));
    cr_assert(!ok && errno == EMFILE,
              "control: the host's inotify_init1 should fail with EMFILE while the program holds "
              "%s (got %s)",
              opened, ok ? "success" : strerror(errno));
}

Test(identity, root_owned_0600_file_in_a_readable_root)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/root-only.txt", f.shared);
    fx_write(path, "root-secret\n");
    cr_assert(chmod(path, 0600) == 0 && chown(path, 0, 0) == 0);
    const char *js = "R('R',()=>fs.readFileSync(SH+'/root-only.txt','utf8'))";
    hostile_case(&f, RO, "R", js, NULL, NULL);
    hostile_case(&f, WW, "R", js, NULL, NULL);
}

Test(identity, workspace_files_stay_the_hosts)
{
    struct run r;
    fx_run(&f, WW,
           "R('F',()=>{fs.writeFileSync('made.txt','x');fs.mkdirSync(WS+'/dir');"
           "fs.writeFileSync(WS+'/dir/inner','y');fs.writeFileSync(os.tmpdir()+'/t','z');"
           "const s=fs.statSync(WS+'/made.txt'),t=fs.statSync(os.tmpdir()+'/t');"
           "return [process.getuid(),s.uid,s.gid,t.uid].join('/')});"
           "R('G',()=>cp.execFileSync('/usr/bin/git',['init','-q',WS+'/repo'])&&"
           "cp.execFileSync('/usr/bin/git',['-C',WS+'/repo','status','--short']).toString())",
           NULL, &r);
    cr_assert(tag_ok(&r, "F"), "F: %s", tag_value(&r, "F"));
    unsigned uid = 0, file_uid = 1, file_gid = 1, tmp_uid = 1;
    cr_assert_eq(sscanf(tag_value(&r, "F"), "OK:%u/%u/%u/%u", &uid, &file_uid, &file_gid, &tmp_uid),
                 4);
    /* Inside, the program owns what it made (so git trusts the repository)... */
    cr_assert(uid != 0 && file_uid == uid && tmp_uid == uid, "%s", tag_value(&r, "F"));
    cr_assert(tag_ok(&r, "G"), "git in the workspace: %s", tag_value(&r, "G"));
    /* ... and on the host it is the host's user's. */
    const char *made[] = {"made.txt", "dir", "dir/inner", "repo/.git/HEAD"};
    for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
        char path[256];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", f.ws, made[i]);
        cr_assert(stat(path, &st) == 0, "%s: %s", path, strerror(errno));
        cr_assert(st.st_uid == getuid() && st.st_gid == getgid(), "%s is owned by %u:%u", made[i],
                  (unsigned)st.st_uid, (unsigned)st.st_gid);
    }
    run_free(&r);
}

Test(identity, read_only_workspace_reads_as_the_hosts_user)
{
    /* The workspace belongs to the host's user: a read-only program still reads its 0600 files
     * (the mount layer idmaps it read-only), where an extra readable root's stay closed. */
    char path[256];
    snprintf(path, sizeof(path), "%s/mine.txt", f.ws);
    fx_write(path, "mine\n");
    cr_assert(chmod(path, 0600) == 0);
    struct run r;
    fx_run(&f, RO,
           "R('R',()=>fs.readFileSync(WS+'/mine.txt','utf8').trim());"
           "R('W',()=>fs.writeFileSync(WS+'/mine.txt','x'))",
           NULL, &r);
    cr_assert_str_eq(tag_value(&r, "R"), "OK:mine");
    cr_assert(tag_denied(&r, "W"), "W: %s", tag_value(&r, "W"));
    run_free(&r);
}

/* Roots behind a directory a stranger cannot enter (the fixture root made 0700, like a workspace
 * under /root or in a mkdtemp directory) and a readable root that is itself 0700 keep the
 * dedicated identity: the launcher idmaps the blocking directories, read-only, so there the
 * program passes permission checks as the host's user, while Landlock still grants only the
 * roots. */
Test(identity, roots_behind_private_directories)
{
    cr_assert(chmod(f.root, 0700) == 0 && chmod(f.shared, 0700) == 0);
    fx_snapshot(&f);
    struct run r;
    fx_run(&f, WW,
           "R('W',()=>{fs.writeFileSync(WS+'/made','x');return process.getuid()});"
           "R('S',()=>fs.readFileSync(SH+'/victim.txt','utf8').trim());"
           "R('T',()=>fs.writeFileSync(os.tmpdir()+'/t','y'));"
           "R('O',()=>fs.readFileSync(OUT+'/victim.txt','utf8'))",
           NULL, &r);
    cr_assert_str_eq(report_identity(&r), "full");
    cr_assert(tag_ok(&r, "W") && strcmp(tag_value(&r, "W"), "OK:0") != 0, "W: %s",
              tag_value(&r, "W"));
    cr_assert_str_eq(tag_value(&r, "S"), "OK:shared-original");
    cr_assert(tag_ok(&r, "T"), "T: %s", tag_value(&r, "T"));
    cr_assert(tag_denied(&r, "O"), "outside the roots stays closed: %s", tag_value(&r, "O"));
    char path[256];
    struct stat st;
    snprintf(path, sizeof(path), "%s/made", f.ws);
    cr_assert(stat(path, &st) == 0 && st.st_uid == getuid(), "made by the host's user");
    cr_assert(fx_outside_unchanged(&f));
    run_free(&r);
}

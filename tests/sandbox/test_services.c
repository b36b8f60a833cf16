/* The service contracts: sandboxPolicy resolution and events, fs mapping, denial signatures,
 * enforcement reports, failing closed, delayed and cancelled confines, private temp dirs, and the
 * launcher's own refusal to run less confined than reported. */
#include "harness.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

TestSuite(services, .init = setup, .fini = teardown, .timeout = 90);

static struct dsh_linux_services *make(struct dsh_linux_services_options *o, int *ret_rc)
{
    struct dsh_linux_services *s = NULL;
    struct dsh_error err = {0};
    *ret_rc = dsh_linux_services_create(o, &s, &err);
    return s;
}

static const char *json_str(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

Test(services, policy_defaults_to_read_only)
{
    /* An options struct from before the appended fields still works. */
    struct dsh_linux_services_options o = {
        .struct_size = offsetof(struct dsh_linux_services_options, extra_readable_roots),
        .launcher_path = DSH_TEST_LAUNCHER,
        .workspace_root = f.ws,
    };
    int rc;
    struct dsh_linux_services *s = make(&o, &rc);
    cr_assert_eq(rc, 0);
    const struct dsh_sandbox_policy_service *p = dsh_linux_sandbox_policy(s);
    char buf[512];
    int n = p->resolve(p->ctx, NULL, buf, sizeof(buf));
    cr_assert(n > 0 && (size_t)n < sizeof(buf));
    json_object *j = json_tokener_parse(buf);
    cr_assert_str_eq(json_str(j, "mode"), "read-only", "the fail-safe default");
    cr_assert_str_eq(json_str(j, "workspaceRoot"), f.ws);
    cr_assert_str_eq(json_str(j, "sessionId"), "default");
    json_object_put(j);
    char small[8];
    cr_assert_eq(p->resolve(p->ctx, "s", small, sizeof(small)), p->resolve(p->ctx, "s", NULL, 0),
                 "snprintf convention: the full length either way");
    cr_assert_eq(strlen(small), 7);
    dsh_linux_services_destroy(s);
    dsh_linux_services_destroy(NULL);
}

Test(services, bad_options_are_refused)
{
    struct dsh_linux_services_options o = {.struct_size = sizeof(o), .workspace_root = "/"};
    int rc;
    cr_assert_null(make(&o, &rc));
    cr_assert_eq(rc, DSH_E_CONFIG_INVALID, "the workspace may not be /");
    o.workspace_root = f.ws;
    o.default_mode = "yolo";
    cr_assert_null(make(&o, &rc));
    cr_assert_eq(rc, DSH_E_CONFIG_INVALID);
    o.default_mode = NULL;
    const char *bad_roots[] = {"/nonexistent-dsh-root", NULL};
    o.extra_writable_roots = bad_roots;
    cr_assert_null(make(&o, &rc));
    cr_assert_eq(rc, DSH_E_CONFIG_INVALID);
}

struct events {
    int count;
    char session[64], mode[64], resolved[256];
    const struct dsh_sandbox_policy_service *p;
};

static void on_change(void *userdata, const char *session_id, const char *new_mode)
{
    struct events *e = userdata;
    e->count++;
    snprintf(e->session, sizeof(e->session), "%s", session_id);
    snprintf(e->mode, sizeof(e->mode), "%s", new_mode);
    e->p->resolve(e->p->ctx, session_id, e->resolved, sizeof(e->resolved));
}

Test(services, per_session_mode_changes_are_announced)
{
    const struct dsh_sandbox_policy_service *p = dsh_linux_sandbox_policy(f.svc);
    struct events e = {.p = p};
    uint64_t sub = 0;
    cr_assert_eq(p->subscribe(p->ctx, on_change, &e, &sub), 0);
    struct dsh_error err = {0};
    cr_assert_eq(dsh_linux_policy_set_mode(f.svc, "s1", WW, &err), 0);
    cr_assert_eq(e.count, 1);
    cr_assert_str_eq(e.session, "s1");
    cr_assert_str_eq(e.mode, WW);
    cr_assert(strstr(e.resolved, "\"mode\":\"workspace-write\""), "committed before the event");
    char buf[512];
    p->resolve(p->ctx, "s2", buf, sizeof(buf));
    cr_assert(strstr(buf, "\"mode\":\"read-only\""), "other sessions keep the default");
    cr_assert_eq(dsh_linux_policy_set_mode(f.svc, "s1", WW, &err), 0);
    cr_assert_eq(e.count, 1, "no change, no event");
    cr_assert_eq(dsh_linux_policy_set_mode(f.svc, NULL, DANGER, &err), 0);
    cr_assert_eq(e.count, 2);
    cr_assert_str_eq(e.session, "default");
    cr_assert_eq(dsh_linux_policy_set_mode(f.svc, "s1", "root", &err), DSH_E_REQUEST_INVALID);
    cr_assert_eq(p->unsubscribe(p->ctx, sub), 0);
    cr_assert_eq(dsh_linux_policy_set_mode(f.svc, "s1", RO, &err), 0);
    cr_assert_eq(e.count, 2, "unsubscribed");
    cr_assert_eq(p->unsubscribe(p->ctx, sub), DSH_E_NOT_FOUND);
}

static int map(const char *path, char *buf, size_t len)
{
    const struct dsh_fs_service *fs = dsh_linux_fs(f.svc);
    return fs->map_host_path(fs->ctx, path, buf, len);
}

Test(services, fs_maps_only_what_the_execution_world_sees)
{
    char buf[512], p[256];
    snprintf(p, sizeof(p), "%s/probe", f.ws);
    cr_assert_eq(map(p, buf, sizeof(buf)), (int)strlen(p));
    cr_assert_str_eq(buf, p, "identity for the local world");
    snprintf(p, sizeof(p), "%s/victim.txt", f.shared);
    cr_assert_eq(map(p, buf, sizeof(buf)), (int)strlen(p));
    cr_assert_eq(map("/usr/bin/env", buf, sizeof(buf)), (int)strlen("/usr/bin/env"));
    snprintf(p, sizeof(p), "%s/.ssh/id_rsa", f.secret);
    cr_assert_eq(map(p, buf, sizeof(buf)), DSH_E_NOT_MAPPED);
    snprintf(p, sizeof(p), "%s/victim.txt", f.outside);
    cr_assert_eq(map(p, buf, sizeof(buf)), DSH_E_NOT_MAPPED);
    cr_assert_eq(map("/etc/shadow", buf, sizeof(buf)), DSH_E_NOT_MAPPED);
    cr_assert_eq(map("/nonexistent/file", buf, sizeof(buf)), DSH_E_NOT_MAPPED);
    cr_assert_eq(map("relative/path", buf, sizeof(buf)), DSH_E_NOT_MAPPED);
    cr_assert_eq(map("/proc/self/environ", buf, sizeof(buf)), DSH_E_NOT_MAPPED);
    char tiny[4];
    cr_assert_eq(map("/usr/bin/env", tiny, sizeof(tiny)), (int)strlen("/usr/bin/env"));
}

struct confined {
    int called, status;
    struct dsh_confinement *conf;
};

static void on_confined(void *userdata, int status, struct dsh_confinement *conf)
{
    struct confined *c = userdata;
    c->called++;
    c->status = status;
    c->conf = conf;
}

static int confine(struct dsh_linux_services *s, const char *mode, struct confined *c)
{
    const struct dsh_sandbox_service *sb = dsh_linux_sandbox(s);
    char policy[512];
    snprintf(policy, sizeof(policy), "{\"mode\":\"%s\",\"workspaceRoot\":\"%s\"}", mode, f.ws);
    const char *argv[] = {DSH_TEST_NODE, "-e", "0", NULL};
    uint64_t op;
    memset(c, 0, sizeof(*c));
    return sb->confine(sb->ctx, argv, policy, strlen(policy), on_confined, c, &op);
}

Test(services, reports_full_enforcement_on_this_kernel)
{
    const struct dsh_sandbox_service *sb = dsh_linux_sandbox(f.svc);
    const char *modes[] = {WW, RO};
    for (int i = 0; i < 2; i++) {
        struct confined c;
        cr_assert_eq(confine(f.svc, modes[i], &c), 0);
        cr_assert(c.called == 1 && c.status == 0);
        cr_log_info("%s report: %s", modes[i], c.conf->report_json);
        json_object *j = json_tokener_parse(c.conf->report_json);
        cr_assert_str_eq(json_str(j, "mode"), modes[i]);
        cr_assert_str_eq(json_str(j, "enforcement"), "full");
        json_object *caps = NULL, *abi = NULL;
        cr_assert(json_object_object_get_ex(j, "landlockAbi", &abi));
        cr_assert_eq(json_object_get_int(abi), 7);
        cr_assert(json_object_object_get_ex(j, "capabilities", &caps));
        const char *names[] = {"files",           "fileMetadata", "network",  "ipc",
                               "signals",         "ioctl",        "syscalls", "privileges",
                               "processLifetime", "resources"};
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            cr_assert_str_eq(json_str(caps, names[k]), "full", "%s", names[k]);
        cr_assert_str_eq(c.conf->argv[0], DSH_TEST_LAUNCHER, "the argv starts the launcher");
        json_object_put(j);
        sb->release_confinement(sb->ctx, c.conf);
    }
    struct confined c;
    cr_assert_eq(confine(f.svc, DANGER, &c), 0);
    json_object *j = json_tokener_parse(c.conf->report_json);
    cr_assert_str_eq(json_str(j, "mode"), DANGER);
    cr_assert_str_eq(json_str(j, "enforcement"), "none", "full access is reported as such");
    cr_assert_str_eq(c.conf->argv[0], DSH_TEST_NODE, "no launcher");
    cr_assert_null(c.conf->env[0]);
    json_object_put(j);
    sb->release_confinement(sb->ctx, c.conf);
}

Test(services, fails_closed_without_landlock_or_launcher)
{
    const char *readable[] = {NULL};
    struct dsh_linux_services_options o = {
        .struct_size = sizeof(o),
        .launcher_path = DSH_TEST_LAUNCHER,
        .supervisor_path = DSH_TEST_SUPERVISOR,
        .workspace_root = f.ws,
        .max_landlock_abi = -1, /* test knob: pretend the kernel has no Landlock */
        .extra_readable_roots = readable,
        .temp_root = f.tmproot};
    int rc;
    struct dsh_linux_services *s = make(&o, &rc);
    cr_assert_eq(rc, 0);
    struct confined c;
    cr_assert_eq(confine(s, RO, &c), 0);
    cr_assert(c.called == 1 && c.status == DSH_E_SANDBOX_UNAVAILABLE && !c.conf);
    cr_assert_eq(confine(s, WW, &c), 0);
    cr_assert(c.called == 1 && c.status == DSH_E_SANDBOX_UNAVAILABLE && !c.conf);
    cr_assert_eq(confine(s, DANGER, &c), 0);
    cr_assert(c.called == 1 && c.status == 0, "explicit full access needs no mechanism");
    dsh_linux_sandbox(s)->release_confinement(NULL, c.conf);
    dsh_linux_services_destroy(s);

    o.max_landlock_abi = 0;
    o.launcher_path = "/nonexistent/dsh-sandbox-launch";
    s = make(&o, &rc);
    cr_assert_eq(confine(s, WW, &c), 0);
    cr_assert(c.status == DSH_E_SANDBOX_UNAVAILABLE && !c.conf);
    dsh_linux_services_destroy(s);
    cr_assert(fx_outside_unchanged(&f), "no temp dir was left behind");
}

Test(services, invalid_confine_requests)
{
    const struct dsh_sandbox_service *sb = dsh_linux_sandbox(f.svc);
    const char *argv[] = {DSH_TEST_NODE, NULL};
    const char *rel[] = {"node", NULL};
    struct confined c = {0};
    uint64_t op;
    const char *bad[] = {"not json", "{\"mode\":\"yolo\",\"workspaceRoot\":\"/tmp\"}",
                         "{\"mode\":\"read-only\"}",
                         "{\"mode\":\"read-only\",\"workspaceRoot\":\"/\"}", "[1]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(sb->confine(sb->ctx, argv, bad[i], strlen(bad[i]), on_confined, &c, &op),
                     DSH_E_REQUEST_INVALID, "%s", bad[i]);
    char ok[256];
    snprintf(ok, sizeof(ok), "{\"mode\":\"read-only\",\"workspaceRoot\":\"%s\"}", f.ws);
    cr_assert_eq(sb->confine(sb->ctx, rel, ok, strlen(ok), on_confined, &c, &op),
                 DSH_E_REQUEST_INVALID);
    cr_assert_eq(c.called, 0, "on_confined is never called after an error return");
}

struct deferred {
    void (*fn)(void *);
    void *arg;
    int n;
};

static int defer(void *loop, uint32_t delay_ms, void (*fn)(void *), void *arg)
{
    struct deferred *d = loop;
    cr_assert_eq(delay_ms, 50);
    d[d->n].fn = fn;
    d[d->n].arg = arg;
    d->n++;
    return 0;
}

Test(services, delayed_confine_completes_later_or_cancels)
{
    struct deferred d[4] = {0};
    struct dsh_linux_services_options o = {.struct_size = sizeof(o),
                                           .launcher_path = DSH_TEST_LAUNCHER,
                                           .supervisor_path = DSH_TEST_SUPERVISOR,
                                           .workspace_root = f.ws,
                                           .temp_root = f.tmproot,
                                           .confine_delay_ms = 50,
                                           .defer = defer,
                                           .loop = d};
    int rc;
    struct dsh_linux_services *s = make(&o, &rc);
    const struct dsh_sandbox_service *sb = dsh_linux_sandbox(s);
    char policy[256];
    snprintf(policy, sizeof(policy), "{\"mode\":\"workspace-write\",\"workspaceRoot\":\"%s\"}",
             f.ws);
    const char *argv[] = {DSH_TEST_NODE, NULL};
    struct confined a = {0}, b = {0}, c = {0};
    uint64_t op_a, op_b, op_c;
    cr_assert_eq(sb->confine(sb->ctx, argv, policy, strlen(policy), on_confined, &a, &op_a), 0);
    cr_assert_eq(sb->confine(sb->ctx, argv, policy, strlen(policy), on_confined, &b, &op_b), 0);
    cr_assert_eq(sb->confine(sb->ctx, argv, policy, strlen(policy), on_confined, &c, &op_c), 0);
    cr_assert(a.called == 0 && b.called == 0, "not before the loop runs it");
    cr_assert_eq(sb->cancel_confine(sb->ctx, op_b), 0);
    d[0].fn(d[0].arg);
    d[1].fn(d[1].arg);
    cr_assert(a.called == 1 && a.status == 0 && a.conf);
    cr_assert_eq(b.called, 0, "a cancelled confine never completes");
    cr_assert_eq(sb->cancel_confine(sb->ctx, op_a), DSH_E_NOT_FOUND, "already completed");
    sb->release_confinement(sb->ctx, a.conf);
    dsh_linux_services_destroy(s); /* with c still pending */
    d[2].fn(d[2].arg);
    cr_assert_eq(c.called, 0, "the service is gone: the late completion only frees");
    cr_assert(fx_outside_unchanged(&f), "every private temp dir was removed");
}

Test(services, private_temp_dir_is_removed_whatever_the_program_left)
{
    struct run r;
    fx_run(&f, WW,
           "const t=os.tmpdir();let d=t;for(let i=0;i<300;i++){d+='/d';fs.mkdirSync(d)}"
           "fs.writeFileSync(d+'/deep','x');fs.symlinkSync(SH,t+'/to-shared');"
           "fs.symlinkSync(SH+'/victim.txt',t+'/to-victim');fs.mkdirSync(t+'/locked');"
           "fs.writeFileSync(t+'/locked/f','x');fs.chmodSync(t+'/locked',0);"
           "cp.execFileSync('/usr/bin/mkfifo',[t+'/fifo']);console.log('T:OK:'+t)",
           NULL, &r);
    cr_assert(tag_ok(&r, "T"), "the program filled its temp dir");
    const char *t = tag_value(&r, "T") + 3;
    cr_assert(access(t, F_OK) != 0, "the private temp dir is gone: %s", t);
    cr_assert(fx_outside_unchanged(&f), "removal followed no symlink");
    run_free(&r);
}

Test(services, denial_signatures)
{
    const struct dsh_sandbox_service *sb = dsh_linux_sandbox(f.svc);
    const char *yes[] = {"Error: EACCES: permission denied, open '/x'",
                         "Error: EPERM: operation not permitted, kill",
                         "Error: EROFS: read-only file system, unlink '/x'",
                         "Error: EXDEV: cross-device link not permitted, link",
                         "sh: 1: cannot create /x: Permission denied",
                         "dsh-sandbox-launch: confinement failed: landlock: not available"};
    const char *no[] = {"Error: ENOENT: no such file or directory",
                        "TypeError: x is not a function", ""};
    struct confined c;
    cr_assert_eq(confine(f.svc, WW, &c), 0);
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        cr_assert_eq(sb->is_denial(sb->ctx, c.conf, yes[i], strlen(yes[i])), 1, "%s", yes[i]);
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        cr_assert_eq(sb->is_denial(sb->ctx, c.conf, no[i], strlen(no[i])), 0, "%s", no[i]);
    sb->release_confinement(sb->ctx, c.conf);
    cr_assert_eq(confine(f.svc, DANGER, &c), 0);
    cr_assert_eq(sb->is_denial(sb->ctx, c.conf, yes[0], strlen(yes[0])), 0,
                 "nothing is this backend's denial when it confined nothing");
    sb->release_confinement(sb->ctx, c.conf);
}

/* The launcher itself: never downgrades below the ABI the host reported, and Landlock holds on its
 * own without the read-only mount layer. Started through the subprocess service unconfined. */
Test(services, launcher_fails_closed_and_landlock_holds_alone)
{
    char shared_ro[256], js[512];
    snprintf(shared_ro, sizeof(shared_ro), "%s", f.shared);
    snprintf(js, sizeof(js),
             "try{require('fs').writeFileSync(process.env.DSH_T_SHARED+'/victim.txt','x');"
             "console.log('W:OK')}catch(e){console.log('W:'+e.code)}");
    const char *too_new[] = {DSH_TEST_LAUNCHER,
                             "--mode",
                             WW,
                             "--landlock-abi",
                             "99",
                             "--ro",
                             DSH_TEST_NODE,
                             "--rw",
                             f.ws,
                             "--",
                             DSH_TEST_NODE,
                             "-e",
                             "0",
                             NULL};
    struct run r;
    fx_run_argv(&f, DANGER, too_new, NULL, 20000, &r);
    cr_assert(r.st.exited == 1 && r.st.code == 125, "refuses: exit %d", r.st.code);
    cr_assert(strstr(r.err, "dsh-sandbox-launch: confinement failed"), "%s", r.err);
    run_free(&r);
    const char *landlock_only[] = {DSH_TEST_LAUNCHER,
                                   "--mode",
                                   WW,
                                   "--landlock-abi",
                                   "7",
                                   "--ro",
                                   DSH_TEST_NODE,
                                   "--ro",
                                   shared_ro,
                                   "--rw",
                                   f.ws,
                                   "--",
                                   DSH_TEST_NODE,
                                   "-e",
                                   js,
                                   NULL};
    fx_run_argv(&f, DANGER, landlock_only, NULL, 20000, &r);
    cr_assert(tag_denied(&r, "W"), "Landlock alone denies: %s", tag_value(&r, "W"));
    cr_assert_str_eq(tag_value(&r, "W"), "EACCES", "not the mount layer's EROFS");
    cr_assert(fx_outside_unchanged(&f));
    run_free(&r);
    struct stat st;
    cr_assert(stat(DSH_TEST_LAUNCHER, &st) == 0);
}

Test(services, a_relative_launcher_is_refused_naming_it)
{
    struct dsh_linux_services_options o = {.struct_size = sizeof(o),
                                           .launcher_path = "dsh-sandbox-launch",
                                           .workspace_root = f.ws,
                                           .temp_root = f.tmproot};
    struct dsh_linux_services *s = NULL;
    struct dsh_error err = {0};
    cr_assert_eq(dsh_linux_services_create(&o, &s, &err), DSH_E_CONFIG_INVALID);
    cr_assert_str_eq(err.message, "launcher_path must be absolute: dsh-sandbox-launch");
    cr_assert_null(s);
}

/* require_full_enforcement: a partial report fails closed; the same cap without it runs partial,
 * and the requirement alone runs on a machine that enforces everything. */
Test(services, require_full_enforcement_fails_closed_when_partial)
{
    struct dsh_linux_services_options o = {.struct_size = sizeof(o),
                                           .launcher_path = DSH_TEST_LAUNCHER,
                                           .supervisor_path = DSH_TEST_SUPERVISOR,
                                           .workspace_root = f.ws,
                                           .temp_root = f.tmproot,
                                           .max_landlock_abi = 2,
                                           .require_full_enforcement = true};
    int rc;
    struct confined c;
    struct dsh_linux_services *s = make(&o, &rc);
    cr_assert_eq(rc, 0);
    cr_assert_eq(confine(s, WW, &c), 0);
    cr_assert(c.called == 1 && c.status == DSH_E_SANDBOX_UNAVAILABLE && !c.conf);
    cr_assert_eq(confine(s, DANGER, &c), 0);
    cr_assert(c.status == 0 && c.conf, "unconfined by request needs no enforcement");
    dsh_linux_sandbox(s)->release_confinement(NULL, c.conf);
    dsh_linux_services_destroy(s);

    o.require_full_enforcement = false;
    s = make(&o, &rc);
    cr_assert_eq(confine(s, WW, &c), 0);
    cr_assert(c.status == 0 && c.conf);
    cr_assert(strstr(c.conf->report_json, "\"enforcement\":\"partial\""), "%s", c.conf->report_json);
    dsh_linux_sandbox(s)->release_confinement(NULL, c.conf);
    dsh_linux_services_destroy(s);

    o.require_full_enforcement = true;
    o.max_landlock_abi = 0;
    s = make(&o, &rc);
    cr_assert_eq(confine(s, WW, &c), 0);
    cr_assert(c.status == 0 && c.conf, "this machine enforces workspace-write fully");
    dsh_linux_sandbox(s)->release_confinement(NULL, c.conf);
    dsh_linux_services_destroy(s);
    cr_assert(fx_outside_unchanged(&f), "no temp dir was left behind");
}

/* The sandbox service: confine(argv, policy) wraps argv in dsh-sandbox-launch with the policy's
 * read and write sets; danger-full-access passes argv through, reported as unconfined. A policy
 * that needs a mechanism this machine lacks fails closed with sandbox-unavailable. */
#include "services.h"
#include "denial_scan.h"
#include "net_allow.h"
#include "program_identity.h"
#include "sandbox_report.h"
#include "tempdir.h"
#include "dsh_list.h"
#include "dsh_roots.h"
#include "dsh_strv.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct confinement {
    struct dsh_confinement pub; /* first: what the host sees */
    char **argv;
    char **env;
    char *report;
    char *tempdir; /* workspace-write's private temp dir, removed on release */
    struct dshx__egress *egress; /* the network allow-list's proxy, stopped on release */
    bool restricted;
};

struct op {
    struct op *next;
    struct dshx__sandbox *sb; /* NULL once the service is gone or the op was cancelled */
    uint64_t id;
    int status;
    struct confinement *conf;
    dsh_confined_fn on_confined;
    void *userdata;
};

struct dshx__sandbox {
    const struct dshx__config *cfg;
    struct dshx__id_range ids; /* root hosts: the programs' dedicated uids/gids */
    struct dshx__temp_host *temp; /* this instance's directory under the temp root */
    uint64_t next_op;
    struct op *pending; /* delayed completions */
};

static void confinement_free(struct confinement *c)
{
    if (!c)
        return;
    dshx__egress_stop(c->egress);
    if (c->tempdir)
        (void)dshx__tree_remove(c->tempdir);
    free(c->tempdir);
    dsh_strv_free(c->argv);
    dsh_strv_free(c->env);
    free(c->report);
    free(c);
}

struct policy {
    const char *mode;
    char workspace[PATH_MAX];
    uint64_t max_temp_bytes;      /* size of the tmpfs TMPDIR (1.3 "maxTempBytes") */
    bool require_resource_limits; /* 1.3 "requireResourceLimits" */
    struct dshx__net_allow network; /* 1.7 "network"; points into root */
    json_object *root;
};

/* The 1.3 limit fields of a policy: absent = the default / false; a wrong type is refused. */
static int parse_limits(json_object *root, struct policy *p, struct dsh_error *ret_error)
{
    json_object *v;
    p->max_temp_bytes = DSHX_DEFAULT_MAX_TEMP_BYTES;
    if (json_object_object_get_ex(root, "maxTempBytes", &v)) {
        int64_t n = json_object_get_int64(v);
        if (!json_object_is_type(v, json_type_int) || n < 4096)
            return dshx__fail(ret_error, DSH_E_REQUEST_INVALID,
                              "policy maxTempBytes must be an integer of at least 4096");
        p->max_temp_bytes = (uint64_t)n;
    }
    if (json_object_object_get_ex(root, "requireResourceLimits", &v)) {
        if (!json_object_is_type(v, json_type_boolean))
            return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy requireResourceLimits must be a boolean");
        p->require_resource_limits = json_object_get_boolean(v);
    }
    return 0;
}

/* The roots rules once more for this run's mode: a host's own sandboxPolicy, or a session
 * switched to workspace-write after create, cannot hand a confined run a root create refused. */
static int check_workspace(const struct dshx__config *cfg, const char *given,
                           const struct policy *p, struct dsh_error *ret_error)
{
    char msg[sizeof(ret_error->message)];
    bool writable = strcmp(p->mode, DSHX_MODE_WORKSPACE_WRITE) == 0;
    if (!dsh_root_refusal("policy workspaceRoot", given, p->workspace, writable, cfg->temp_root,
                          (const char *const *)cfg->protected_roots, msg, sizeof msg))
        return 0;
    dshx__log(cfg, DSH_LOG_ERROR, "confine: %s", msg);
    return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "%s", msg);
}

static int parse_policy(const struct dshx__config *cfg, const char *text, size_t len,
                        struct policy *ret_policy, struct dsh_error *ret_error)
{
    json_tokener *tok = json_tokener_new();
    if (!tok)
        return -ENOMEM;
    json_object *root = json_tokener_parse_ex(tok, text, (int)len);
    bool complete = json_tokener_get_error(tok) == json_tokener_success &&
                    json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    int rc = 0;
    json_object *m = NULL, *w = NULL;
    if (!root || !complete || !json_object_is_type(root, json_type_object)) {
        rc = dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy is not a JSON object");
    } else if (!json_object_object_get_ex(root, "mode", &m) ||
               !json_object_is_type(m, json_type_string) ||
               !dshx__mode_valid(json_object_get_string(m))) {
        rc = dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "policy mode is missing or unknown");
    } else {
        const char *mode = json_object_get_string(m);
        ret_policy->mode = strcmp(mode, DSHX_MODE_READ_ONLY) == 0 ? DSHX_MODE_READ_ONLY
                           : strcmp(mode, DSHX_MODE_WORKSPACE_WRITE) == 0
                               ? DSHX_MODE_WORKSPACE_WRITE
                               : DSHX_MODE_DANGER;
        const char *ws = json_object_object_get_ex(root, "workspaceRoot", &w) &&
                                 json_object_is_type(w, json_type_string)
                             ? json_object_get_string(w)
                             : NULL;
        struct stat st;
        if (!ws || ws[0] != '/' || !realpath(ws, ret_policy->workspace) ||
            stat(ret_policy->workspace, &st) < 0 || !S_ISDIR(st.st_mode))
            rc = dshx__fail(ret_error, DSH_E_REQUEST_INVALID,
                            "policy workspaceRoot must be an existing absolute directory");
        else if (strcmp(ret_policy->mode, DSHX_MODE_DANGER) != 0)
            rc = check_workspace(cfg, ws, ret_policy, ret_error);
        if (rc == 0)
            rc = parse_limits(root, ret_policy, ret_error);
        json_object *network = NULL;
        if (rc == 0 && json_object_object_get_ex(root, "network", &network))
            rc = dshx__net_allow_parse(network, &ret_policy->network, ret_error);
    }
    if (rc == 0) {
        ret_policy->root = root; /* the network lists point into it */
        return 0;
    }
    json_object_put(root);
    return rc;
}

static int effective_abi(const struct dshx__config *cfg)
{
    int abi = cfg->kernel.landlock_abi;
    if (cfg->max_landlock_abi < 0)
        return 0;
    if (cfg->max_landlock_abi > 0 && cfg->max_landlock_abi < abi)
        abi = cfg->max_landlock_abi;
    return abi > 7 ? 7 : abi;
}

static int push_pair(struct dsh_strv *sv, const char *opt, const char *val)
{
    int rc = dsh_strv_push(sv, opt);
    return rc < 0 ? rc : dsh_strv_push(sv, val);
}

/* The program's uid/gid, when it gets a dedicated one, and the paths the launcher idmaps
 * besides the writable roots. */
struct identity {
    bool set;
    uint32_t uid, gid;
    struct dsh_strv owned; /* the host user's roots first (host_roots of them), then the rest */
    size_t host_roots;
};

/* A dedicated identity where the host is root and the mount layer can idmap every path the
 * program needs as the host's user (program_identity.c). */
static int choose_identity(struct dshx__sandbox *sb, const struct policy *p, const char *program,
                           const char *tempdir, struct identity *ret_id)
{
    const struct dshx__config *cfg = sb->cfg;
    if (!cfg->kernel.root || cfg->kernel.userns || !cfg->kernel.namespaces)
        return 0; /* in a user namespace of the range's own only the host's uid is mapped */
    if (sb->ids.unmapped) {
        dshx__log(cfg, DSH_LOG_WARN,
                  "the program runs as the host's uid: the dedicated ids %u-%u are not mapped in dsh's "
                  "user namespace (a container's)",
                  (unsigned)sb->ids.uid_base, (unsigned)(sb->ids.uid_base + sb->ids.uid_count - 1));
        return 0;
    }
    struct dsh_strv owned = {0};
    int rc = dsh_strv_push(&owned, p->workspace);
    for (char **r = cfg->extra_writable_roots; rc == 0 && *r; r++)
        rc = dsh_strv_push(&owned, *r);
    if (rc == 0 && tempdir)
        rc = dsh_strv_push(&owned, tempdir);
    size_t host_roots = owned.n;
    const char *blocker = NULL;
    int fits = rc < 0 ? -1
                      : dshx__identity_plan(program, (const char *const *)cfg->extra_readable_roots,
                                            &owned, &blocker);
    if (fits > 0) {
        ret_id->set = true;
        ret_id->owned = owned;
        ret_id->host_roots = host_roots;
        dshx__id_range_take(&sb->ids, &ret_id->uid, &ret_id->gid);
        return 0;
    }
    if (fits == 0)
        dshx__log(cfg, DSH_LOG_WARN,
                  "the program runs as the host's uid: %s cannot be examined or idmapped", blocker);
    dsh_strv_clear(&owned);
    return fits < 0 ? -ENOMEM : 0;
}

/* The launcher command line: read set, write set, then the program. */
static int launcher_argv(const struct dshx__config *cfg, const struct policy *p, int abi,
                         const struct identity *id, const char *program, const char *tempdir,
                         const struct dsh_strv *net_args, const char *const *argv, char ***ret_argv)
{
    bool write = strcmp(p->mode, DSHX_MODE_WORKSPACE_WRITE) == 0;
    struct dsh_strv sv = {0};
    int rc = dsh_strv_push(&sv, cfg->launcher_path);
    if (rc == 0)
        rc = push_pair(&sv, "--mode", p->mode);
    if (rc == 0)
        rc = dsh_strv_push(&sv, "--landlock-abi");
    if (rc == 0)
        rc = dsh_strv_pushf(&sv, "%d", abi);
    if (rc == 0 && cfg->kernel.namespaces)
        rc = dsh_strv_push(&sv, "--namespaces");
    if (rc == 0 && cfg->kernel.userns && cfg->kernel.pid_ns) {
        rc = dsh_strv_push(&sv, "--nproc");
        if (rc == 0)
            rc = dsh_strv_pushf(&sv, "%u", cfg->max_processes);
    }
    if (rc == 0 && id->set) {
        rc = dsh_strv_push(&sv, "--uid");
        if (rc == 0)
            rc = dsh_strv_pushf(&sv, "%u", (unsigned)id->uid);
        if (rc == 0)
            rc = dsh_strv_push(&sv, "--gid");
        if (rc == 0)
            rc = dsh_strv_pushf(&sv, "%u", (unsigned)id->gid);
    }
    if (rc == 0)
        rc = push_pair(&sv, "--ro", program);
    for (char **r = cfg->extra_readable_roots; rc == 0 && *r; r++)
        rc = push_pair(&sv, "--ro", *r);
    if (rc == 0)
        rc = push_pair(&sv, write ? "--rw" : "--ro", p->workspace);
    for (char **r = cfg->extra_writable_roots; rc == 0 && *r; r++) /* read-only: still visible */
        rc = push_pair(&sv, write ? "--rw" : "--ro", *r);
    /* What the program reaches as the host's user besides the writable roots, which the
     * launcher idmaps anyway: in read-only the host user's roots too. */
    for (size_t i = write ? id->host_roots : 0; rc == 0 && id->set && i < id->owned.n; i++)
        rc = push_pair(&sv, "--owned", id->owned.v[i]);
    /* The private temp dir is a tmpfs of its own size inside the launcher's mount namespace, so
     * filling it never touches the host's filesystem; without namespaces it stays on disk. */
    if (rc == 0 && tempdir && cfg->kernel.namespaces) {
        rc = push_pair(&sv, "--tmpfs", tempdir);
        if (rc == 0)
            rc = dsh_strv_push(&sv, "--tmpfs-size");
        if (rc == 0)
            rc = dsh_strv_pushf(&sv, "%llu", (unsigned long long)p->max_temp_bytes);
    } else if (rc == 0 && tempdir) {
        rc = push_pair(&sv, "--rw", tempdir);
    }
    for (size_t i = 0; rc == 0 && i < net_args->n; i++)
        rc = dsh_strv_push(&sv, net_args->v[i]);
    if (rc == 0)
        rc = dsh_strv_push(&sv, "--");
    for (size_t i = 0; rc == 0 && argv[i]; i++)
        rc = dsh_strv_push(&sv, argv[i]);
    if (rc < 0) {
        dsh_strv_clear(&sv);
        return rc;
    }
    *ret_argv = dsh_strv_finish(&sv);
    return 0;
}

/* Says on the logger what a required level lacks here ("... but this machine enforces <before>
 * <shortfall, joined> <after>") and fails closed. */
static int refuse(const struct dshx__config *cfg, const char *mode, const char *requirement, const char *before,
                  const struct dsh_strv *shortfall, const char *after)
{
    char *list = dsh_strv_join(shortfall->v, ", ");
    dshx__log(cfg, DSH_LOG_ERROR, "sandbox unavailable for %s: %s, but this machine enforces %s%s%s%s", mode,
              requirement, before, list ? list : "less", after, dshx__container_hint(&cfg->kernel));
    free(list);
    return DSH_E_SANDBOX_UNAVAILABLE;
}

/* Builds the confinement. Negative: sandbox-unavailable or a system error, reported through
 * on_confined; the message goes to the logger. */
static int build(struct dshx__sandbox *sb, const char *const *argv, const struct policy *p,
                 struct confinement **ret_conf)
{
    const struct dshx__config *cfg = sb->cfg;
    struct confinement *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->pub.struct_size = sizeof(c->pub);
    c->restricted = strcmp(p->mode, DSHX_MODE_DANGER) != 0;
    int abi = effective_abi(cfg), rc = 0;
    struct dsh_strv env = {0};
    struct identity id = {0};
    char program[PATH_MAX];
    if (!c->restricted) {
        c->argv = dsh_strv_dup(argv);
        rc = c->argv ? 0 : -ENOMEM;
    } else if (abi < 1 || !cfg->kernel.seccomp || !cfg->launcher_path ||
               access(cfg->launcher_path, X_OK) < 0) {
        dshx__log(cfg, DSH_LOG_ERROR, "sandbox unavailable for %s: %s", p->mode,
                  abi < 1                ? "Landlock is missing"
                  : !cfg->kernel.seccomp ? "seccomp (with a reviewed syscall table) is missing"
                                         : "dsh-sandbox-launch is not executable");
        rc = DSH_E_SANDBOX_UNAVAILABLE;
    } else if (!realpath(argv[0], program)) {
        rc = -errno;
    } else {
        if (strcmp(p->mode, DSHX_MODE_WORKSPACE_WRITE) == 0) {
            rc = dshx__tempdir_create(sb->temp, &c->tempdir);
            const char *names[] = {"TMPDIR", "TEMP", "TMP", "HOME"};
            for (size_t i = 0; rc == 0 && i < 4; i++)
                rc = dsh_strv_pushf(&env, "%s=%s", names[i], c->tempdir);
        }
        if (rc == 0)
            rc = choose_identity(sb, p, program, c->tempdir, &id);
        struct dsh_strv net_args = {0};
        if (rc == 0 && p->network.allow_list)
            rc = dshx__egress_start(cfg, &p->network, &net_args, &env, &c->egress);
        if (rc == 0)
            rc = launcher_argv(cfg, p, abi, &id, program, c->tempdir, &net_args, argv, &c->argv);
        dsh_strv_clear(&net_args);
    }
    if (rc == 0 && !(c->env = dsh_strv_finish(&env)))
        rc = -ENOMEM;
    struct dsh_strv weak = {0};
    if (rc == 0 && !(c->report = dshx__report_json(p->mode, abi, &cfg->kernel, id.set, &weak)))
        rc = -ENOMEM;
    if (rc == 0 && c->egress && !(c->report = dshx__report_network_allow_list(c->report)))
        rc = -ENOMEM;
    /* require_full_enforcement: a partially enforcing machine fails closed instead of running. */
    if (rc == 0 && c->restricted && weak.n && cfg->require_full_enforcement)
        rc = refuse(cfg, p->mode, "full enforcement is required", "", &weak, "");
    dsh_strv_clear(&weak);
    /* requireResourceLimits: a machine that cannot hold the range to its limits fails closed. */
    struct dsh_strv gaps = {0};
    if (rc == 0 && c->restricted && p->require_resource_limits &&
        (rc = dshx__resource_gaps(&cfg->kernel, &gaps)) == 0 && gaps.n)
        rc = refuse(cfg, p->mode, "resource limits are required (requireResourceLimits)",
                    "resources: partial (", &gaps, ")");
    dsh_strv_clear(&gaps);
    dsh_strv_clear(&env);
    dsh_strv_clear(&id.owned);
    if (rc < 0) {
        confinement_free(c);
        return rc;
    }
    c->pub.argv = (const char *const *)c->argv;
    c->pub.env = (const char *const *)c->env;
    c->pub.report_json = c->report;
    *ret_conf = c;
    return 0;
}

static void complete(struct op *op)
{
    op->on_confined(op->userdata, op->status, op->conf ? &op->conf->pub : NULL);
    free(op);
}

static void deferred(void *arg)
{
    struct op *op = arg;
    if (!op->sb) { /* cancelled, or the service was destroyed first */
        confinement_free(op->conf);
        free(op);
        return;
    }
    DSH_LIST_REMOVE(&op->sb->pending, op);
    complete(op);
}

static int confine(void *ctx, const char *const *argv, const char *policy_json, size_t policy_len,
                   dsh_confined_fn on_confined, void *userdata, uint64_t *ret_op)
{
    struct dshx__sandbox *sb = ctx;
    if (!argv || !argv[0] || argv[0][0] != '/' || !policy_json || !on_confined || !ret_op)
        return DSH_E_REQUEST_INVALID;
    struct policy p = {0};
    int rc = parse_policy(sb->cfg, policy_json, policy_len, &p, NULL);
    if (rc < 0)
        return rc;
    struct op *op = calloc(1, sizeof(*op));
    if (!op)
        return -ENOMEM;
    *op = (struct op){
        .sb = sb, .id = ++sb->next_op, .on_confined = on_confined, .userdata = userdata};
    op->status = build(sb, argv, &p, &op->conf);
    json_object_put(p.root);
    *ret_op = op->id;
    if (sb->cfg->confine_delay_ms && sb->cfg->defer) {
        op->next = sb->pending;
        sb->pending = op;
        if (sb->cfg->defer(sb->cfg->loop, sb->cfg->confine_delay_ms, deferred, op) == 0)
            return 0;
        sb->pending = op->next; /* the loop refused: complete now */
    }
    complete(op);
    return 0;
}

static int cancel_confine(void *ctx, uint64_t id)
{
    struct dshx__sandbox *sb = ctx;
    DSH_LIST_FOREACH_LINK(link, &sb->pending) {
        struct op *op = *link;
        if (op->id == id) {
            DSH_LIST_UNLINK(link);
            op->sb = NULL; /* freed when the deferred call fires */
            return 0;
        }
    }
    return DSH_E_NOT_FOUND;
}

/* Output of a confined program that names a denied operation (denial_scan.c has the texts). */
static int is_denial(void *ctx, const struct dsh_confinement *confinement, const char *text,
                     size_t len)
{
    (void)ctx;
    if (!text || (confinement && !((const struct confinement *)confinement)->restricted))
        return 0;
    return dshx__denial_scan(text, len);
}

static int network_json(void *ctx, const struct dsh_confinement *confinement, char *buf, size_t buflen)
{
    (void)ctx;
    const struct confinement *c = (const struct confinement *)confinement;
    if (!c || (!buf && buflen))
        return DSH_E_REQUEST_INVALID;
    if (!c->egress) {
        if (buflen)
            buf[0] = '\0';
        return 0;
    }
    json_object *o = dshx__egress_report(c->egress);
    const char *text = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : NULL;
    int n = text ? snprintf(buf, buflen, "%s", text) : -ENOMEM;
    json_object_put(o);
    return n;
}

static void network_begin_run(void *ctx, const struct dsh_confinement *confinement)
{
    (void)ctx;
    const struct confinement *c = (const struct confinement *)confinement;
    if (c && c->egress)
        dshx__egress_begin_run(c->egress);
}

static void release_confinement(void *ctx, struct dsh_confinement *confinement)
{
    (void)ctx;
    confinement_free((struct confinement *)confinement);
}

int dshx__sandbox_create(const struct dshx__config *cfg, struct dsh_sandbox_service *vt,
                         struct dshx__sandbox **ret_sandbox)
{
    struct dshx__sandbox *sb = calloc(1, sizeof(*sb));
    if (!sb)
        return -ENOMEM;
    sb->cfg = cfg;
    if (cfg->kernel.root)
        dshx__id_range_load(&sb->ids);
    int rc = dshx__temp_host_open(cfg->temp_root, &sb->temp);
    if (rc < 0) {
        free(sb);
        return rc;
    }
    *vt = (struct dsh_sandbox_service){
        .struct_size = sizeof(*vt),
        .abi_major = DSH_ABI_MAJOR,
        .abi_minor = DSH_ABI_MINOR,
        .ctx = sb,
        .confine = confine,
        .cancel_confine = cancel_confine,
        .is_denial = is_denial,
        .release_confinement = release_confinement,
        .network_json = network_json,
        .network_begin_run = network_begin_run,
    };
    *ret_sandbox = sb;
    return 0;
}

void dshx__sandbox_destroy(struct dshx__sandbox *sandbox)
{
    if (!sandbox)
        return;
    /* Pending ops are freed by their deferred calls, which must not touch us any more. */
    for (struct op *op = sandbox->pending; op; op = op->next)
        op->sb = NULL;
    dshx__temp_host_close(sandbox->temp);
    free(sandbox);
}

/* The reference Linux services: construction and configuration (the composition root: it
 * includes every service; no file includes it). */
#include "services.h"
#include "kernel_probe.h"
#include "net_allow.h"
#include "range_cgroup.h"
#include "sandbox_report.h"
#include "services_config.h"
#include "tempdir.h"
#include "dsh_roots.h"
#include "dsh_strv.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef DSHX_HELPER_DIR
#error "meson passes DSHX_HELPER_DIR (libexecdir/dsh, relative to the library's directory)"
#endif

struct dsh_linux_services {
    struct dsh_fs_service fs_vt;
    struct dsh_subprocess_service subprocess_vt;
    struct dsh_sandbox_service sandbox_vt;
    struct dsh_sandbox_policy_service policy_vt;
    struct dshx__config cfg;
    struct dshx__fs *fs;
    struct dshx__subprocess *subprocess;
    struct dshx__sandbox *sandbox;
    struct dshx__policy *policy;
};

/* The options struct grows by appending: read a field only when the caller's size covers it. */
#define HAS(o, field)                                                                              \
    ((o)->struct_size >= offsetof(struct dsh_linux_services_options, field) + sizeof((o)->field))

static int canonical_dir(const char *path, const char *what, char **ret_path,
                         struct dsh_error *ret_error)
{
    char buf[PATH_MAX];
    struct stat st;
    if (!path || path[0] != '/' || !realpath(path, buf) || stat(buf, &st) < 0 ||
        !S_ISDIR(st.st_mode))
        return dshx__fail(ret_error, DSH_E_CONFIG_INVALID,
                          "%s must be an existing absolute directory: %s", what,
                          path ? path : "(null)");
    *ret_path = strdup(buf);
    return *ret_path ? 0 : dshx__fail(ret_error, -ENOMEM, "out of memory");
}

static int canonical_roots(const char *const *roots, const char *what, char ***ret_roots,
                           struct dsh_error *ret_error)
{
    struct dsh_strv sv = {0};
    for (size_t i = 0; roots && roots[i]; i++) {
        char *c = NULL, field[64];
        snprintf(field, sizeof field, "%s[%zu]", what, i);
        int rc = canonical_dir(roots[i], field, &c, ret_error);
        if (rc == 0)
            rc = dsh_strv_push(&sv, c);
        free(c);
        if (rc < 0) {
            dsh_strv_clear(&sv);
            return rc;
        }
    }
    *ret_roots = dsh_strv_finish(&sv);
    return *ret_roots ? 0 : dshx__fail(ret_error, -ENOMEM, "out of memory");
}

/* dsh_root_refusal() as config-invalid. */
static int check_root(const struct dshx__config *c, const char *field, const char *given,
                      const char *canonical, bool writable, struct dsh_error *ret_error)
{
    char msg[sizeof(ret_error->message)];
    if (dsh_root_refusal(field, given, canonical, writable, c->temp_root,
                         (const char *const *)c->protected_roots, msg, sizeof msg))
        return dshx__fail(ret_error, DSH_E_CONFIG_INVALID, "%s", msg);
    return 0;
}

static int check_roots(const struct dshx__config *c, const char *what, const char *const *given,
                       char **canonical, bool writable, struct dsh_error *ret_error)
{
    for (size_t i = 0; canonical[i]; i++) {
        char field[64];
        snprintf(field, sizeof field, "%s[%zu]", what, i);
        int rc = check_root(c, field, given[i], canonical[i], writable, ret_error);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* What a writable root must not overlap: the readable roots (the provider's bootstrap and Node
 * among them) and the directories of the two helpers the sandbox runs. */
static int protected_roots(struct dshx__config *c)
{
    struct dsh_strv sv = {0};
    int rc = 0;
    for (char **r = c->extra_readable_roots; rc == 0 && *r; r++)
        rc = dsh_strv_push(&sv, *r);
    const char *helpers[] = {c->launcher_path, c->supervisor_path};
    for (size_t i = 0; rc == 0 && i < 2; i++) {
        char dir[PATH_MAX];
        if (!realpath(helpers[i], dir))
            continue; /* not there: confine fails closed later */
        *strrchr(dir, '/') = '\0';
        rc = dsh_strv_push(&sv, dir[0] ? dir : "/");
    }
    if (rc < 0 || !(c->protected_roots = dsh_strv_finish(&sv))) {
        dsh_strv_clear(&sv);
        return -ENOMEM;
    }
    return 0;
}

/* The temp root: the caller's directory, or /tmp/dsh-<euid>; itself a writable root. */
static int temp_root(const char *given, struct dshx__config *c, struct dsh_error *ret_error)
{
    char fallback[64];
    if (!given) {
        int rc = dshx__temp_root_default(fallback, sizeof fallback);
        if (rc < 0)
            return dshx__fail(ret_error, DSH_E_CONFIG_INVALID,
                              "temp_root is NULL and %s cannot be this user's private directory: %s",
                              fallback, strerror(-rc));
        given = fallback;
    }
    int rc = canonical_dir(given, "temp_root", &c->temp_root, ret_error);
    char msg[sizeof(ret_error->message)];
    if (rc == 0 && dsh_root_refusal("temp_root", given, c->temp_root, true, NULL, NULL, msg, sizeof msg))
        rc = dshx__fail(ret_error, DSH_E_CONFIG_INVALID, "%s", msg);
    return rc;
}

/* The installed dsh-sandbox-launch: DSHX_HELPER_DIR, relative to the directory this library was
 * loaded from unless it is absolute, so an installed prefix can move. NULL when unknown. */
static char *installed_launcher(void)
{
    char *path = NULL;
    if (DSHX_HELPER_DIR[0] == '/') {
        if (asprintf(&path, "%s/dsh-sandbox-launch", DSHX_HELPER_DIR) < 0)
            return NULL;
        return path;
    }
    Dl_info info;
    char self[PATH_MAX];
    if (!dladdr((void *)dsh_linux_services_create, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, self))
        return NULL;
    char *slash = strrchr(self, '/');
    *slash = '\0';
    if (asprintf(&path, "%s/%s/dsh-sandbox-launch", self, DSHX_HELPER_DIR) < 0)
        return NULL;
    return path;
}

static int configure(const struct dsh_linux_services_options *o, struct dshx__config *ret_config,
                     struct dsh_error *ret_error)
{
    struct dshx__config *c = ret_config;
    const char *const *readable_roots =
        HAS(o, extra_readable_roots) ? o->extra_readable_roots : NULL;
    const char *supervisor = HAS(o, supervisor_path) ? o->supervisor_path : NULL;
    const char *temp_root_option = HAS(o, temp_root) ? o->temp_root : NULL;
    c->max_processes =
        HAS(o, max_processes) && o->max_processes ? o->max_processes : DSHX_DEFAULT_MAX_PROCESSES;
    c->max_total_memory_bytes = HAS(o, max_total_memory_bytes) && o->max_total_memory_bytes
                                    ? o->max_total_memory_bytes
                                    : DSHX_DEFAULT_MAX_TOTAL_MEMORY_BYTES;
    c->max_total_processes = HAS(o, max_total_processes) && o->max_total_processes
                                 ? o->max_total_processes
                                 : DSHX_DEFAULT_MAX_TOTAL_PROCESSES;
    c->max_landlock_abi = o->max_landlock_abi;
    c->confine_delay_ms = o->confine_delay_ms;
    if (HAS(o, fail_quiescence_observations))
        c->fail_quiescence_observations = o->fail_quiescence_observations;
    if (HAS(o, fault_freeze_skipped_ms))
        c->fault_freeze_skipped_ms = o->fault_freeze_skipped_ms;
    c->require_full_enforcement = HAS(o, require_full_enforcement) && o->require_full_enforcement;
    const char *cgroup_root = HAS(o, cgroup_root) ? o->cgroup_root : NULL;
    if (cgroup_root ? asprintf(&c->cgroup_proc_file, "%s/self-cgroup", cgroup_root) < 0 ||
                          !(c->cgroup_mount_root = strdup(cgroup_root))
                    : !(c->cgroup_proc_file = strdup("/proc/self/cgroup")) ||
                          !(c->cgroup_mount_root = strdup("/sys/fs/cgroup")))
        return dshx__fail(ret_error, -ENOMEM, "out of memory");
    if (HAS(o, network_resolver_override)) { /* checked by create (check_network) */
        if (o->network_mode && strcmp(o->network_mode, "none") != 0 && !(c->network_mode = strdup(o->network_mode)))
            return dshx__fail(ret_error, -ENOMEM, "out of memory");
        c->network_allow_private = o->network_allow_private_addresses;
    }
    const char *const none[] = {NULL};
    c->network_allow = dsh_strv_dup(HAS(o, network_resolver_override) && o->network_allow ? o->network_allow : none);
    c->network_deny = dsh_strv_dup(HAS(o, network_resolver_override) && o->network_deny ? o->network_deny : none);
    c->network_override = dsh_strv_dup(HAS(o, network_resolver_override) && o->network_resolver_override
                                           ? o->network_resolver_override : none);
    if (!c->network_allow || !c->network_deny || !c->network_override)
        return dshx__fail(ret_error, -ENOMEM, "out of memory");
    c->defer = o->defer;
    c->loop = o->loop;
    c->logger = o->logger;

    const char *mode = o->default_mode ? o->default_mode : DSHX_MODE_READ_ONLY;
    if (!dshx__mode_valid(mode))
        return dshx__fail(ret_error, DSH_E_CONFIG_INVALID, "unknown default_mode: %s", mode);
    c->default_mode = strdup(mode);
    c->launcher_path = o->launcher_path ? strdup(o->launcher_path) : installed_launcher();
    if (!c->default_mode || !c->launcher_path)
        return o->launcher_path || !c->default_mode
                   ? dshx__fail(ret_error, -ENOMEM, "out of memory")
                   : dshx__fail(ret_error, DSH_E_CONFIG_INVALID,
                                "launcher_path is NULL and the installed dsh-sandbox-launch "
                                "cannot be located from this library");
    if (c->launcher_path[0] != '/')
        return dshx__fail(ret_error, DSH_E_CONFIG_INVALID, "launcher_path must be absolute: %s",
                          c->launcher_path);
    if (supervisor) {
        c->supervisor_path = strdup(supervisor);
    } else {
        const char *slash = strrchr(c->launcher_path, '/');
        int n = (int)(slash - c->launcher_path);
        if (asprintf(&c->supervisor_path, "%.*s/dsh-range-supervisor", n, c->launcher_path) < 0)
            c->supervisor_path = NULL;
    }
    if (!c->supervisor_path)
        return dshx__fail(ret_error, -ENOMEM, "out of memory");
    if (c->supervisor_path[0] != '/')
        return dshx__fail(ret_error, DSH_E_CONFIG_INVALID,
                          "supervisor_path must be absolute: %s", c->supervisor_path);
    int rc = temp_root(temp_root_option, c, ret_error);
    char cwd[PATH_MAX];
    const char *ws = o->workspace_root ? o->workspace_root : getcwd(cwd, sizeof(cwd));
    if (rc == 0)
        rc = canonical_dir(ws, "workspace_root", &c->workspace_root, ret_error);
    if (rc == 0)
        rc = canonical_roots(o->extra_writable_roots, "extra_writable_roots",
                             &c->extra_writable_roots, ret_error);
    if (rc == 0)
        rc = canonical_roots(readable_roots, "extra_readable_roots", &c->extra_readable_roots,
                             ret_error);
    if (rc == 0 && protected_roots(c) < 0)
        rc = dshx__fail(ret_error, -ENOMEM, "out of memory");
    return rc;
}

/* The roots rules for every root of a configured c (ABI.md, "Roots"). */
static int check_configured_roots(const struct dsh_linux_services_options *o,
                                  const struct dshx__config *c, struct dsh_error *ret_error)
{
    const char *const *readable_roots =
        HAS(o, extra_readable_roots) ? o->extra_readable_roots : NULL;
    /* The workspace is writable unless the default is read-only; a session switched to
     * workspace-write later is checked again at confine. */
    int rc = check_root(c, "workspace_root", o->workspace_root ? o->workspace_root : c->workspace_root,
                        c->workspace_root, strcmp(c->default_mode, DSHX_MODE_READ_ONLY) != 0, ret_error);
    if (rc == 0)
        rc = check_roots(c, "extra_writable_roots", o->extra_writable_roots,
                         c->extra_writable_roots, true, ret_error);
    if (rc == 0)
        rc = check_roots(c, "extra_readable_roots", readable_roots, c->extra_readable_roots,
                         false, ret_error);
    return rc;
}

static void config_clear(struct dshx__config *c)
{
    free(c->launcher_path);
    free(c->supervisor_path);
    free(c->temp_root);
    free(c->workspace_root);
    free(c->default_mode);
    free(c->cgroup_proc_file);
    free(c->cgroup_mount_root);
    dsh_strv_free(c->extra_writable_roots);
    dsh_strv_free(c->extra_readable_roots);
    dsh_strv_free(c->protected_roots);
    free(c->network_mode);
    dsh_strv_free(c->network_allow);
    dsh_strv_free(c->network_deny);
    dsh_strv_free(c->network_override);
}

DSHX_EXPORT int dsh_linux_services_create(const struct dsh_linux_services_options *options,
                              struct dsh_linux_services **ret_services, struct dsh_error *ret_error)
{
    if (!options || !ret_services ||
        options->struct_size < offsetof(struct dsh_linux_services_options, extra_readable_roots))
        return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "options are missing or too small");
    struct dsh_linux_services *s = calloc(1, sizeof(*s));
    if (!s)
        return dshx__fail(ret_error, -ENOMEM, "out of memory");
    int rc = configure(options, &s->cfg, ret_error);
    if (rc == 0)
        rc = check_configured_roots(options, &s->cfg, ret_error);
    if (rc == 0 && HAS(options, network_resolver_override))
        rc = dshx__net_allow_check_options(options->network_mode, options->network_allow,
                                           options->network_deny, options->network_resolver_override,
                                           ret_error);
    if (rc == 0)
        rc = dshx__kernel_probe(&s->cfg.kernel);
    if (rc == 0) {
        struct dshx__cgroup_roots roots = {s->cfg.cgroup_proc_file, s->cfg.cgroup_mount_root};
        s->cfg.kernel.cgroup_controllers = dshx__cgroup_controllers_available(&roots);
    }
    if (rc == 0 && HAS(options, disable_namespaces) && options->disable_namespaces) {
        s->cfg.kernel.pid_ns = false;
        s->cfg.kernel.namespaces = false;
        s->cfg.kernel.pid_max_per_ns = false;
    }
    if (rc == 0 && (rc = dshx__sandbox_create(&s->cfg, &s->sandbox_vt, &s->sandbox)) < 0)
        rc = dshx__fail(ret_error, rc, "cannot make this instance's directory in temp_root %s: %s",
                        s->cfg.temp_root, strerror(-rc));
    if (rc == 0 && (dshx__fs_create(&s->cfg, &s->fs_vt, &s->fs) < 0 ||
                    dshx__subprocess_create(&s->cfg, &s->subprocess_vt, &s->subprocess) < 0 ||
                    dshx__policy_create(&s->cfg, &s->policy_vt, &s->policy) < 0))
        rc = dshx__fail(ret_error, -ENOMEM, "out of memory");
    if (rc < 0) {
        dsh_linux_services_destroy(s);
        return rc;
    }
    const struct dshx__kernel *k = &s->cfg.kernel;
    dshx__log(&s->cfg, DSH_LOG_INFO,
              "linux services: landlock ABI %d, seccomp %s, pid namespace %s, namespaces %s, "
              "own user namespace %s, pid_max %s, cgroup controllers memory %s, pids %s, cpu %s%s",
              k->landlock_abi, k->seccomp ? "yes" : "no", k->pid_ns ? "yes" : "no (subreaper)",
              k->namespaces ? "yes" : "no", k->userns && (k->pid_ns || k->namespaces) ? "yes" : "no",
              k->pid_max_per_ns ? "yes" : "no", k->cgroup_controllers & (1u << DSHX_CGROUP_CTL_MEMORY) ? "yes" : "no",
              k->cgroup_controllers & (1u << DSHX_CGROUP_CTL_PIDS) ? "yes" : "no",
              k->cgroup_controllers & (1u << DSHX_CGROUP_CTL_CPU) ? "yes" : "no", dshx__container_hint(k));
    *ret_services = s;
    return 0;
}

DSHX_EXPORT int dsh_linux_services_check_root(const struct dsh_linux_services_options *options,
                                             const char *field, const char *path, bool writable,
                                             struct dsh_error *ret_error)
{
    if (!options || !field || !path ||
        options->struct_size < offsetof(struct dsh_linux_services_options, extra_readable_roots))
        return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "options, field or path are missing");
    /* The other roots are not this call's business: only what they are checked against. */
    struct dsh_linux_services_options o = {0};
    memcpy(&o, options, options->struct_size < sizeof o ? options->struct_size : sizeof o);
    o.struct_size = sizeof o;
    o.workspace_root = NULL;
    o.extra_writable_roots = NULL;
    struct dshx__config c = {0};
    int rc = configure(&o, &c, ret_error);
    char *canonical = NULL;
    if (rc == 0)
        rc = canonical_dir(path, field, &canonical, ret_error);
    if (rc == 0)
        rc = check_root(&c, field, path, canonical, writable, ret_error);
    free(canonical);
    config_clear(&c);
    return rc;
}

DSHX_EXPORT void dsh_linux_services_destroy(struct dsh_linux_services *services)
{
    if (!services)
        return;
    dshx__fs_destroy(services->fs);
    dshx__subprocess_destroy(services->subprocess);
    dshx__sandbox_destroy(services->sandbox);
    dshx__policy_destroy(services->policy);
    config_clear(&services->cfg);
    free(services);
}

DSHX_EXPORT const struct dsh_fs_service *dsh_linux_fs(struct dsh_linux_services *services)
{
    return services ? &services->fs_vt : NULL;
}

DSHX_EXPORT const struct dsh_subprocess_service *dsh_linux_subprocess(struct dsh_linux_services *services)
{
    return services ? &services->subprocess_vt : NULL;
}

DSHX_EXPORT const struct dsh_sandbox_service *dsh_linux_sandbox(struct dsh_linux_services *services)
{
    return services ? &services->sandbox_vt : NULL;
}

DSHX_EXPORT const struct dsh_sandbox_policy_service *
dsh_linux_sandbox_policy(struct dsh_linux_services *services)
{
    return services ? &services->policy_vt : NULL;
}

DSHX_EXPORT int dsh_linux_policy_set_mode(struct dsh_linux_services *services, const char *session_id,
                              const char *mode, struct dsh_error *ret_error)
{
    if (!services)
        return dshx__fail(ret_error, DSH_E_REQUEST_INVALID, "services is NULL");
    return dshx__policy_set_mode(services->policy, session_id, mode, ret_error);
}

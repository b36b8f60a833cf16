/* Mounts a composition: the reference Linux services from their rows, then the provider row. */
#include "dshh_host.h"

#include "dsh_config.h"
#include "dsh_linux_services.h"
#include "dshh_names.h"
#include "dshh_native_call.h"
#include "dshh_paths.h"
#include "dshh_provider_loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static const char *const builtin_names[] = {DSHH_NAME_FS, DSHH_NAME_SUBPROCESS, DSHH_NAME_SANDBOX,
                                            DSHH_NAME_POLICY, DSHH_NAME_DEMO, DSHH_NAME_NATIVE,
                                            DSHH_NAME_WORKFLOW /* workflow/dshh_workflow_cmd.c */,
                                            DSHH_NAME_MCP_BINDINGS /* mcp/dshh_mcp_downstream.c */, NULL};

static bool is_builtin(const char *name)
{
    for (size_t i = 0; builtin_names[i]; i++)
        if (!strcmp(name, builtin_names[i]))
            return true;
    return false;
}

bool dshh__profile_names_provider(const struct dshh_profile *profile)
{
    for (size_t i = 0; i < profile->nrows; i++)
        if (!is_builtin(profile->rows[i].name))
            return true;
    return false;
}

/* The one enabled row named name, or NULL; two enabled rows of one service are an error. */
static int enabled_row(const struct dshh_profile *profile, const char *name,
                       const struct dshh_row **ret)
{
    *ret = NULL;
    for (size_t i = 0; i < profile->nrows; i++) {
        const struct dshh_row *row = &profile->rows[i];
        if (row->disabled || strcmp(row->name, name) != 0)
            continue;
        if (*ret) {
            fprintf(stderr, "dsh: rows '%s' and '%s' both mount %s; disable one\n", (*ret)->id,
                    row->id, name);
            return -1;
        }
        *ret = row;
    }
    return 0;
}

static void log_stderr(void *ctx, int level, const char *message)
{
    struct dshh_host *host = ctx;
    static const char *const names[] = {"debug", "info", "warn", "error"};
    /* What the services found on this kernel, logged once at create. */
    if (!host->kernel_facts && !strncmp(message, "linux services: ", strlen("linux services: ")))
        host->kernel_facts = strdup(message);
    /* Why a confinement got no dedicated identity: the first reason since dsh doctor cleared it
     * before confining in one mode. */
    static const char identity[] = "the program runs as the host's uid: ";
    if (!host->identity_note && !strncmp(message, identity, strlen(identity)))
        host->identity_note = strdup(message + strlen(identity));
    if (level < DSH_LOG_WARN && !host->verbose)
        return;
    fprintf(stderr, "dsh: [%s] %s\n", names[level >= 0 && level <= 3 ? level : 3], message);
}

static yaml_document_t *row_doc(const struct dshh_row *row)
{
    return (yaml_document_t *)&(row->config_layer ? row->config_layer : row->layer)->doc;
}

/* Values the rows carry (config/service_config.c reads them); strings stay owned here until the
 * services are destroyed. */
struct svc_values {
    struct dsh_sandbox_linux_config sandbox;
    struct dsh_subprocess_local_config subprocess;
    struct dsh_sandbox_policy_config policy;
    char *cwd;                /* the workspace when the policy row names none */
    const char *workspace_root; /* policy.workspace_root, else cwd */
    const char *sandbox_row, *policy_row; /* ids, for messages */
    /* NULL-terminated: the provider's readable_roots(), the directories of a bootstrapPath, a
     * stripperPath and of an embedded carrier the provider row names */
    char **readable;
};

static void svc_values_free(struct svc_values *v)
{
    dsh_sandbox_linux_config_destroy(&v->sandbox);
    dsh_subprocess_local_config_destroy(&v->subprocess);
    dsh_sandbox_policy_config_destroy(&v->policy);
    free(v->cwd);
    dsh_strv_free(v->readable);
}

/* The execution world sees only the system, the workspace and what we list here, so the
 * provider's launch files must be listed: this build's bootstrap directory, the directories of a
 * launch.bootstrapPath and a launch.stripperPath the provider row names, and the directory of an
 * embedded carrier. */
static int add_parent_dir(const struct dsh_catalog_provider *p, const struct dshh_row *row, const char *field,
                          struct svc_values *v, size_t *n)
{
    if (!dsh_config_is_set(p, row_doc(row), row->config, field))
        return 0;
    char *path = NULL;
    int rc = dsh_config_get_str(p, row_doc(row), row->config, field, &path);
    if (rc < 0)
        return rc;
    char *slash = strrchr(path, '/');
    if (!slash || slash == path) { /* bare names are found on PATH by the plugin; "/" is never listed */
        free(path);
        return 0;
    }
    *slash = '\0';
    v->readable[(*n)++] = path;
    return 0;
}

/* The table's readable_roots (1.1) names the provider's own files; an older provider, none. */
static const char *const *provider_roots(const struct dsh_provider *p)
{
    static const char *const none[] = {NULL};
    size_t end = offsetof(struct dsh_provider, readable_roots) + sizeof(p->readable_roots);
    const char *const *roots =
        p && p->struct_size >= end && p->readable_roots ? p->readable_roots() : NULL;
    return roots ? roots : none;
}

static int readable_roots(const struct dsh_catalog *cat, const struct dshh_profile *profile,
                          const struct dsh_provider *provider, struct svc_values *v)
{
    const char *const *own = provider_roots(provider);
    size_t n = 0, nown = 0;
    while (own[nown])
        nown++;
    if (!(v->readable = calloc(nown + 4, sizeof *v->readable)))
        return -ENOMEM;
    for (; n < nown; n++)
        if (!(v->readable[n] = strdup(own[n])))
            return -ENOMEM;
    for (size_t i = 0; i < profile->nrows; i++) {
        const struct dshh_row *row = &profile->rows[i];
        const struct dsh_catalog_provider *p = dsh_catalog_find(cat, row->name);
        /* The Python row: its own bootstrap comes with readable_roots; a configured one and a
         * configured interpreter's directory are listed here. */
        if (!row->disabled && p && strcmp(row->name, PTC_PYTHON_PROVIDER_NAME) == 0) {
            int rc = add_parent_dir(p, row, "bootstrapPath", v, &n);
            if (rc == 0)
                rc = add_parent_dir(p, row, "python", v, &n);
            if (rc < 0)
                return rc;
            break;
        }
        if (row->disabled || strcmp(row->name, PTC_PROVIDER_NAME) != 0 || !p)
            continue;
        int rc = add_parent_dir(p, row, "launch.bootstrapPath", v, &n);
        if (rc == 0)
            rc = add_parent_dir(p, row, "launch.stripperPath", v, &n);
        if (rc == 0) {
            char *kind = NULL;
            if (dsh_config_is_set(p, row_doc(row), row->config, "launch.kind") &&
                dsh_config_get_str(p, row_doc(row), row->config, "launch.kind", &kind) == 0 &&
                strcmp(kind, "embedded") == 0)
                rc = add_parent_dir(p, row, "launch.executable", v, &n);
            free(kind);
        }
        if (rc < 0)
            return rc;
        break;
    }
    return 0;
}

static int read_service_rows(const struct dshh_profile *profile, const struct dsh_provider *provider,
                             struct svc_values *v)
{
    struct dsh_catalog *cat;
    char msg[512] = "";
    if (dsh_catalog_open(&cat, msg, sizeof msg) < 0) {
        fprintf(stderr, "dsh: cannot read the catalog: %s\n", msg);
        return -1;
    }
    int rc = 0;
    const struct dshh_row *row;
    if ((rc = enabled_row(profile, DSHH_NAME_SANDBOX, &row)) == 0 && row) {
        v->sandbox_row = row->id;
        rc = dsh_sandbox_linux_config_read(dsh_catalog_find(cat, DSHH_NAME_SANDBOX), row_doc(row), row->config,
                                           &v->sandbox);
    }
    if (rc == 0 && (rc = enabled_row(profile, DSHH_NAME_SUBPROCESS, &row)) == 0 && row)
        rc = dsh_subprocess_local_config_read(dsh_catalog_find(cat, DSHH_NAME_SUBPROCESS), row_doc(row),
                                              row->config, &v->subprocess);
    if (rc == 0 && (rc = enabled_row(profile, DSHH_NAME_POLICY, &row)) == 0 && row) {
        v->policy_row = row->id;
        rc = dsh_sandbox_policy_config_read(dsh_catalog_find(cat, DSHH_NAME_POLICY), row_doc(row), row->config,
                                            &v->policy);
    }
    if (rc == 0)
        rc = readable_roots(cat, profile, provider, v);
    dsh_catalog_close(cat);
    if (rc < 0 && rc != -1)
        fprintf(stderr, "dsh: cannot read the service rows: %s\n", strerror(-rc));
    /* Without a policy row the mode is read-only (the zeroed config's) and the workspace is
     * where dsh was started. */
    v->workspace_root = v->policy.workspace_root;
    if (!v->workspace_root && rc == 0 && !(v->workspace_root = v->cwd = getcwd(NULL, 0)))
        rc = -errno;
    return rc < 0 ? -1 : 0;
}

/* $HOME itself, resolved; a writable workspace never defaults to it (README, "Roots"). */
static bool is_home(const char *dir)
{
    const char *home = getenv("HOME");
    char a[4096], b[4096];
    return home && home[0] == '/' && realpath(home, a) && realpath(dir, b) && !strcmp(a, b);
}

/* The services refuse a root that defeats the policy; asked here first, so the message names
 * the row and field it came from (and, for a workspace taken from the current directory, how to
 * name another). */
static int check_roots(const struct dsh_linux_services_options *o, const struct svc_values *v)
{
    bool writable = v->policy.mode != DSH_SANDBOX_READ_ONLY;
    struct dsh_error err = {0};
    int rc = dsh_linux_services_check_root(o, "workspaceRoot", v->workspace_root, writable, &err);
    if (rc == 0 && writable && !v->policy.workspace_root && is_home(v->workspace_root)) {
        snprintf(err.message, sizeof err.message,
                 "workspaceRoot \"%s\" is refused: it is $HOME, and a writable policy never defaults to it",
                 v->workspace_root);
        rc = DSH_E_CONFIG_INVALID;
    }
    if (rc < 0 && !v->policy.workspace_root) {
        fprintf(stderr, "dsh: the workspace defaults to the current directory: %s; start dsh in a project "
                "directory or name one with --workspace DIR (the workspaceRoot of the %s row)\n",
                err.message, DSHH_NAME_POLICY);
        return -1;
    }
    if (rc < 0) {
        fprintf(stderr, "dsh: row '%s' (%s): %s\n", v->policy_row ? v->policy_row : "?", DSHH_NAME_POLICY,
                err.message);
        return -1;
    }
    for (size_t i = 0; v->sandbox.extra_writable_roots && v->sandbox.extra_writable_roots[i]; i++) {
        char field[64];
        snprintf(field, sizeof field, "extraWritableRoots[%zu]", i);
        if (dsh_linux_services_check_root(o, field, v->sandbox.extra_writable_roots[i], true, &err) < 0) {
            fprintf(stderr, "dsh: row '%s' (%s): %s\n", v->sandbox_row ? v->sandbox_row : "?",
                    DSHH_NAME_SANDBOX, err.message);
            return -1;
        }
    }
    return 0;
}

static int mount_services(struct dshh_host *host, const struct dshh_profile *profile)
{
    struct svc_values *vp = calloc(1, sizeof(*vp));
    if (!vp)
        return -1;
    /* Kept until close: the services may borrow the option strings. */
    host->svc_values = vp;
    if (read_service_rows(profile, host->provider, vp))
        return -1;
    const struct svc_values *v = vp;
    struct dsh_linux_services_options o = {
        .struct_size = sizeof(o),
        .launcher_path = dshh__path(DSHH_PATH_LAUNCHER),
        .extra_writable_roots = (const char *const *)v->sandbox.extra_writable_roots,
        .max_landlock_abi = v->sandbox.has_max_landlock_abi ? (int)v->sandbox.max_landlock_abi : 0,
        .confine_delay_ms = (uint32_t)v->sandbox.confine_delay_ms,
        .default_mode = dsh_sandbox_mode_name(v->policy.mode),
        .workspace_root = v->workspace_root,
        .defer = dshh__loop_defer,
        .loop = host->loop,
        .logger = &host->logger,
        .extra_readable_roots = (const char *const *)v->readable,
        .fail_quiescence_observations = (uint32_t)v->subprocess.fail_quiescence_observations,
        .require_full_enforcement = v->sandbox.require_full_enforcement,
        .fault_freeze_skipped_ms = (uint32_t)v->subprocess.fault_freeze_skipped_ms,
        .cgroup_root = v->subprocess.cgroup_root,
        .max_total_memory_bytes = (uint64_t)v->subprocess.max_total_memory_mb << 20,
        .max_total_processes = (uint32_t)v->subprocess.max_total_processes,
        .network_mode = v->policy.network_mode,
        .network_allow = (const char *const *)v->policy.network_allow,
        .network_deny = (const char *const *)v->policy.network_deny,
        .network_allow_private_addresses = v->policy.network_allow_private_addresses,
        .network_resolver_override = (const char *const *)v->policy.network_resolver_override,
    };
    if (check_roots(&o, v))
        return -1;
    struct dsh_error err = {0};
    int rc = dsh_linux_services_create(&o, &host->services_impl, &err);
    if (rc < 0) {
        fprintf(stderr, "dsh: cannot create the services: %s\n",
                *err.message ? err.message : dsh_strerror(rc));
        return -1;
    }
    /* A disabled service row lends nothing: the provider then sees a NULL service. */
    const struct dshh_row *row;
    if (enabled_row(profile, DSHH_NAME_FS, &row) < 0 ||
        enabled_row(profile, DSHH_NAME_SUBPROCESS, &row) < 0 ||
        enabled_row(profile, DSHH_NAME_DEMO, &row) < 0)
        return -1;
    host->demo_tools = row != NULL;
    host->services = (struct dsh_services){.struct_size = sizeof(host->services),
                                           .abi_major = DSH_ABI_MAJOR,
                                           .abi_minor = DSH_ABI_MINOR,
                                           .logger = &host->logger};
    if (enabled_row(profile, DSHH_NAME_FS, &row) == 0 && row)
        host->services.fs = dsh_linux_fs(host->services_impl);
    if (enabled_row(profile, DSHH_NAME_SUBPROCESS, &row) == 0 && row)
        host->services.subprocess = dsh_linux_subprocess(host->services_impl);
    if (enabled_row(profile, DSHH_NAME_SANDBOX, &row) == 0 && row)
        host->services.sandbox = dsh_linux_sandbox(host->services_impl);
    if (enabled_row(profile, DSHH_NAME_POLICY, &row) == 0 && row)
        host->services.sandbox_policy = dsh_linux_sandbox_policy(host->services_impl);
    return 0;
}

static void on_provider_fd(void *arg, uint32_t events)
{
    (void)events;
    struct dshh_host *host = arg;
    int rc = host->provider->dispatch(host->instance);
    /* Reported once: a broken instance would otherwise flood stderr at every wakeup. */
    if (rc < 0 && rc != host->dispatch_error)
        fprintf(stderr, "dsh: provider dispatch failed: %s\n", dsh_strerror(rc));
    host->dispatch_error = rc < 0 ? rc : 0;
}

/* dlopen()s the provider row's object before the services exist: they need its readable_roots. */
static int open_provider(struct dshh_host *host, const struct dshh_profile *profile,
                         const struct dshh_row **ret_row)
{
    const struct dshh_row *prow = NULL;
    for (size_t i = 0; i < profile->nrows; i++) {
        const struct dshh_row *row = &profile->rows[i];
        if (row->disabled || is_builtin(row->name))
            continue;
        if (prow) {
            fprintf(stderr, "dsh: rows '%s' and '%s' are both provider rows; dsh runs one\n",
                    prow->id, row->id);
            return -1;
        }
        prow = row;
    }
    if (!prow) {
        fprintf(stderr, "dsh: the composition has no enabled provider row\n");
        return -1;
    }
    /* A row without path: the shared object of this installation for that provider name. */
    host->provider_path = prow->path ? prow->path
                          : dshh__path(strcmp(prow->name, PTC_PYTHON_PROVIDER_NAME) == 0 ? DSHH_PATH_PYTHON_PROVIDER
                                                                                         : DSHH_PATH_PROVIDER);
    *ret_row = prow;
    return dshh__provider_open(host->provider_path, prow->name, &host->dl, &host->provider, stderr);
}

static int load_provider(struct dshh_host *host, const struct dshh_row *prow)
{
    char *text = NULL;
    size_t len = 0;
    if (prow->config) {
        int rc = dsh_yaml_node_emit(row_doc(prow), prow->config, &text, &len);
        if (rc < 0) {
            fprintf(stderr, "dsh: cannot emit row '%s': %s\n", prow->id, strerror(-rc));
            return -1;
        }
    }
    struct dsh_error err = {0};
    int rc = host->provider->load(text ? text : "", len, &host->services, &host->instance, &err);
    free(text);
    if (rc < 0) {
        fprintf(stderr, "dsh: row '%s': %s cannot load (%s): %s\n", prow->id, prow->name,
                dsh_error_name(rc) ? dsh_error_name(rc) : dsh_strerror(rc),
                *err.message ? err.message : dsh_strerror(rc));
        host->instance = NULL;
        return -1;
    }
    int fd = host->provider->get_fd(host->instance);
    if (fd < 0 || dshh__loop_add_fd(host->loop, fd, EPOLLIN, on_provider_fd, host) < 0) {
        fprintf(stderr, "dsh: the provider has no pollable fd\n");
        return -1;
    }
    if (host->verbose)
        fprintf(stderr, "dsh: loaded %s %s from %s\n", host->provider->name,
                host->provider->version, host->provider_path);
    return 0;
}

/* Every enabled dsh-native-bindings row: libraries opened, symbols resolved, calls prepared. */
static int load_native_rows(struct dshh_host *host, const struct dshh_profile *profile)
{
    if (dshh__native_set_new(&host->logger, &host->native) < 0)
        return -1;
    for (size_t i = 0; i < profile->nrows; i++) {
        const struct dshh_row *row = &profile->rows[i];
        if (row->disabled || strcmp(row->name, DSHH_NAME_NATIVE) != 0)
            continue;
        const char *file = row->config_layer ? row->config_layer->path : row->layer->path;
        int rc = dshh__native_add_row(host->native, file, row->id, row_doc(row), row->config, stderr);
        if (rc < 0)
            fprintf(stderr, "dsh: row '%s': %s\n", row->id, strerror(-rc));
        if (rc != 0)
            return -1;
    }
    return 0;
}

bool dshh__host_native_call(struct dshh_host *host, dsh_run_id run, uint64_t call,
                            const char *global, const char *name, const char *args_json,
                            size_t args_len)
{
    struct dshh_native_answer answer;
    if (!dshh__native_call(host->native, global, name, args_json, args_len, &answer))
        return false;
    int rc = host->provider->reply(host->instance, run, call, answer.ok, answer.text, answer.len);
    /* NOT_FOUND: the run ended first. Anything else (a result over maxMessageBytes): say so. */
    if (rc < 0 && rc != DSH_E_NOT_FOUND) {
        char message[512];
        snprintf(message, sizeof message, "%s.%s: the result cannot be delivered (%s)", global, name,
                 dsh_error_name(rc) ? dsh_error_name(rc) : dsh_strerror(rc));
        host->provider->reply(host->instance, run, call, false, message, strlen(message));
    }
    free(answer.text);
    return true;
}

/* --initializer FILE: environment initializers, registered before any run is admitted. */
static int register_initializers(struct dshh_host *host, const char *const *initializers, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        FILE *f = fopen(initializers[i], "re");
        char *text = NULL;
        size_t len = 0;
        if (f) {
            FILE *mem = open_memstream(&text, &len);
            char buf[8192];
            size_t n;
            while (mem && (n = fread(buf, 1, sizeof buf, f)) > 0)
                fwrite(buf, 1, n, mem);
            if (mem)
                fclose(mem);
            fclose(f);
        }
        if (!text) {
            fprintf(stderr, "dsh: cannot read initializer %s: %s\n", initializers[i], strerror(errno));
            return -1;
        }
        struct dsh_error err = {0};
        dsh_registration registration;
        int rc = host->provider->registerEnvironmentInitializer(host->instance, text, len, &registration, &err);
        free(text);
        if (rc < 0) {
            fprintf(stderr, "dsh: initializer %s was rejected (%s): %s\n", initializers[i],
                    dsh_error_name(rc) ? dsh_error_name(rc) : dsh_strerror(rc), err.message);
            return -1;
        }
    }
    return 0;
}

int dshh__host_open(struct dshh_host *host, const struct dshh_profile *profile, bool verbose,
                    const char *const *initializers, size_t ninitializers)
{
    memset(host, 0, sizeof(*host));
    host->verbose = verbose;
    host->logger = (struct dsh_logger){.struct_size = sizeof(host->logger),
                                       .abi_major = DSH_ABI_MAJOR,
                                       .abi_minor = DSH_ABI_MINOR,
                                       .ctx = host,
                                       .log = log_stderr};
    int rc = dshh__loop_new(&host->loop);
    if (rc < 0) {
        fprintf(stderr, "dsh: epoll: %s\n", strerror(-rc));
        return -1;
    }
    const struct dshh_row *prow = NULL;
    if (open_provider(host, profile, &prow) || mount_services(host, profile) ||
        load_native_rows(host, profile) || load_provider(host, prow) ||
        register_initializers(host, initializers, ninitializers))
        return -1;
    return 0;
}

void dshh__host_unload(struct dshh_host *host)
{
    if (host->instance) {
        /* Blocking: cancels runs and delivers their on_done before it returns. */
        host->provider->unload(host->instance);
        host->instance = NULL;
    }
}

void dshh__host_close(struct dshh_host *host)
{
    dshh__host_unload(host);
    if (host->dl) {
        dlclose(host->dl);
        host->dl = NULL;
    }
    /* After unload: no run can call a native function any more. */
    dshh__native_set_free(host->native);
    host->native = NULL;
    dsh_linux_services_destroy(host->services_impl);
    host->services_impl = NULL;
    if (host->svc_values)
        svc_values_free(host->svc_values);
    free(host->svc_values);
    host->svc_values = NULL;
    dshh__loop_free(host->loop);
    host->loop = NULL;
    free(host->kernel_facts);
    host->kernel_facts = NULL;
    free(host->identity_note);
    host->identity_note = NULL;
}

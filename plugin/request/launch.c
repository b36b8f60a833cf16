/* The argv that starts the bootstrap in the execution world. The local carrier is the project's
 * pinned Node plus bootstrap/child.cjs (the bundled bootstrap), both host files crossing through
 * the fs mapping; an explicit launch names paths that already live in the subprocess world (or
 * an executable's bare name, found on PATH). */
#include "launch.h"
#include "own_files.h"
#include "dsh_strv.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char **ptc__argv_dup(const char *const *argv, size_t n)
{
    char **out = calloc(n + 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        if (!(out[i] = strdup(argv[i]))) {
            dsh_strv_free(out);
            return NULL;
        }
    return out;
}

int ptc__launch_map_path(struct ptc_host *host, const char *host_path, char *buf, size_t len,
                    struct dsh_error *err)
{
    const struct dsh_fs_service *fs = host->services.fs;
    int n = fs->map_host_path(fs->ctx, host_path, buf, len);
    if (n < 0)
        return ptc__fail(err, n, "the execution world cannot see %s: %s", host_path, dsh_strerror(n));
    if ((size_t)n >= len)
        return ptc__fail(err, -ENAMETOOLONG, "mapped path of %s is too long", host_path);
    return 0;
}

/* launch.executable: an absolute path of the subprocess world, used as it is, or a bare name
 * looked up on the host's PATH and mapped into the execution world, which must see it. */
int ptc__launch_resolve_executable(struct ptc_host *host, const char *field, const char *name, char *buf,
                                   size_t len, struct dsh_error *err)
{
    if (strchr(name, '/')) {
        if (name[0] != '/')
            return ptc__fail(err, DSH_E_CONFIG_INVALID, "%s %s must be an absolute path or a bare name", field, name);
        if ((size_t)snprintf(buf, len, "%s", name) >= len)
            return ptc__fail(err, -ENAMETOOLONG, "%s is too long", field);
        /* A subprocess-world path: the Linux services' world shows host paths as they are, so a
         * missing file is named here instead of failing inside the sandbox. */
        if (access(name, X_OK) != 0 && errno == ENOENT)
            return ptc__fail(err, DSH_E_NOT_FOUND, "%s %s does not exist", field, name);
        return 0;
    }
    const char *search = getenv("PATH");
    if (!search || !*search)
        search = "/usr/local/bin:/usr/bin:/bin";
    for (const char *dir = search; *dir;) {
        size_t dir_len = strcspn(dir, ":");
        char candidate[PATH_MAX];
        struct stat st;
        if (dir_len > 0 && dir[0] == '/' &&
            snprintf(candidate, sizeof candidate, "%.*s/%s", (int)dir_len, dir, name) < (int)sizeof candidate &&
            stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0)
            return ptc__launch_map_path(host, candidate, buf, len, err);
        dir += dir_len;
        if (*dir == ':')
            dir++;
    }
    return ptc__fail(err, DSH_E_NOT_FOUND, "%s %s was not found on PATH", field, name);
}

int ptc__launch_argv(struct ptc_host *host, char ***ret_argv, char ***ret_env,
                     struct dsh_error *err)
{
    const struct ptc_launch *launch = &host->config.launch;
    char node[PATH_MAX], bootstrap[PATH_MAX], heap[64], message[64], pending[64];
    int rc;
    if (!launch->is_explicit) {
        if (access(ptc__own_node(), X_OK) != 0 && ptc__own_node_is_pinned())
            return ptc__fail(err, DSH_E_NOT_FOUND,
                             "the pinned Node.js is missing (%s does not exist): run examples/setup.sh in the "
                             "source tree (npm ci in bootstrap/runtime), then build and install again",
                             ptc__own_node());
        if (access(ptc__own_node(), X_OK) != 0)
            return ptc__fail(err, DSH_E_NOT_FOUND,
                             "the Node.js this plugin was built for (meson -Dnode) is missing: %s", ptc__own_node());
        if ((rc = ptc__launch_map_path(host, ptc__own_node(), node, sizeof node, err)) < 0 ||
            (rc = ptc__launch_map_path(host, ptc__own_bootstrap(), bootstrap, sizeof bootstrap, err)) < 0)
            return rc;
    } else {
        if ((rc = ptc__launch_resolve_executable(host, "launch.executable", launch->executable, node, sizeof node, err)) < 0)
            return rc;
        if (launch->kind == PTC_LAUNCH_NODE_SCRIPT) {
            if (launch->bootstrap_path)
                snprintf(bootstrap, sizeof bootstrap, "%s", launch->bootstrap_path);
            else if ((rc = ptc__launch_map_path(host, ptc__own_bootstrap(), bootstrap, sizeof bootstrap, err)) < 0)
                return rc;
        }
    }
    snprintf(heap, sizeof heap, "--max-old-space-size=%lld",
             (long long)host->config.max_old_generation_size_mb);
    snprintf(message, sizeof message, "--max-message-bytes=%lld", (long long)host->config.max_message_bytes);
    snprintf(pending, sizeof pending, "--max-pending-calls=%lld", (long long)host->config.max_pending_calls);

    const char *argv[9];
    const char *env[2] = {NULL, NULL};
    size_t n = 0;
    char node_options[96];
    argv[n++] = node;
    if (launch->is_explicit && launch->kind == PTC_LAUNCH_EMBEDDED) {
        /* An embedded carrier runs its own bootstrap; the heap limit travels in a
         * provider-created NODE_OPTIONS (the ambient one is never inherited). */
        snprintf(node_options, sizeof node_options, "NODE_OPTIONS=%s", heap);
        env[0] = node_options;
    } else {
        argv[n++] = heap;
        argv[n++] = "--experimental-vm-modules";
        /* Optimizing compiles on the main thread: a fresh process's binding calls cost less
         * CPU and time, a CPU-bound program no more (bootstrap/README.md). */
        argv[n++] = "--no-concurrent-recompilation";
        argv[n++] = bootstrap;
    }
    argv[n++] = message;
    argv[n++] = pending;
    argv[n] = NULL;

    char **out_argv = ptc__argv_dup(argv, n), **out_env = ptc__argv_dup(env, env[0] ? 1 : 0);
    if (!out_argv || !out_env) {
        dsh_strv_free(out_argv);
        dsh_strv_free(out_env);
        return ptc__fail(err, -ENOMEM, "out of memory");
    }
    *ret_argv = out_argv;
    *ret_env = out_env;
    return 0;
}

int ptc__launch_stripper_argv(struct ptc_host *host, char ***ret_argv, char *ret_dir, size_t dir_len,
                              struct dsh_error *err)
{
    const struct ptc_launch *launch = &host->config.launch;
    if (launch->is_explicit && launch->kind == PTC_LAUNCH_EMBEDDED)
        return ptc__fail(err, DSH_E_UNSUPPORTED, "an embedded carrier strips types in its own process");
    char node[PATH_MAX], script[PATH_MAX], message[64];
    int rc;
    if (!launch->is_explicit)
        rc = ptc__launch_map_path(host, ptc__own_node(), node, sizeof node, err);
    else
        rc = ptc__launch_resolve_executable(host, "launch.executable", launch->executable, node, sizeof node, err);
    if (rc < 0)
        return rc;
    if (launch->is_explicit && launch->stripper_path)
        snprintf(script, sizeof script, "%s", launch->stripper_path);
    else if ((rc = ptc__launch_map_path(host, ptc__own_stripper(), script, sizeof script, err)) < 0)
        return rc;
    /* The stripper's only readable root besides the host's own: the directory of its script. */
    const char *slash = strrchr(script, '/');
    if (!slash || slash == script || (size_t)(slash - script) >= dir_len)
        return ptc__fail(err, DSH_E_CONFIG_INVALID, "the type stripper %s has no directory to confine it to", script);
    snprintf(ret_dir, dir_len, "%.*s", (int)(slash - script), script);
    snprintf(message, sizeof message, "--max-message-bytes=%lld", (long long)host->config.max_message_bytes);
    const char *argv[] = {node, script, message};
    if (!(*ret_argv = ptc__argv_dup(argv, 3)))
        return ptc__fail(err, -ENOMEM, "out of memory");
    return 0;
}

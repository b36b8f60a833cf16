/* Reference Linux implementations of the four host services (fs, subprocess, sandbox,
 * sandboxPolicy) that the reference host `dsh` lends to providers. See examples/providers/README.md.
 */
#ifndef DSH_LINUX_SERVICES_H
#define DSH_LINUX_SERVICES_H

#include "dsh_services.h"

#include <stdbool.h>

struct dsh_linux_services;

/* Lets the services complete asynchronous work (a delayed confine) on the host's loop: the host
 * calls fn(arg) on its thread after at least delay_ms. NULL = complete synchronously. */
typedef int (*dsh_defer_fn)(void *loop, uint32_t delay_ms, void (*fn)(void *arg), void *arg);

struct dsh_linux_services_options {
    uint32_t struct_size;
    /* sandbox row (dsh-sandbox-linux) */
    const char *launcher_path;              /* absolute path of dsh-sandbox-launch; NULL = built one */
    const char *const *extra_writable_roots; /* NULL-terminated, may be NULL */
    int max_landlock_abi;                   /* 0 = the kernel's; test-only cap otherwise
                                               (< 0 pretends Landlock is missing) */
    uint32_t confine_delay_ms;              /* test-only: delay confine completion (needs defer) */
    /* sandbox-policy row (dsh-sandbox-policy) */
    const char *default_mode;   /* read-only | workspace-write | danger-full-access */
    const char *workspace_root; /* absolute; NULL = the current directory; never "/" */
    /* host loop integration */
    dsh_defer_fn defer;
    void *loop;
    const struct dsh_logger *logger; /* may be NULL */
    /* ---- appended fields (read only when struct_size covers them) ---- */
    /* Host paths the execution world may read (besides the system, the workspace and the program
     * binary); NULL-terminated, may be NULL. The bootstrap directory belongs here: fs maps only
     * what the execution world can see. */
    const char *const *extra_readable_roots;
    const char *supervisor_path; /* dsh-range-supervisor; NULL = next to launcher_path */
    const char *temp_root;       /* where per-run private temp dirs live; NULL = "/tmp" */
    uint32_t max_processes;      /* bound on live processes per range (see README); 0 = 512 */
    bool disable_namespaces;     /* test-only: act as if PID/mount/network namespaces were
                                    unavailable (subreaper fallback, no read-only mount layer) */
    uint32_t fail_quiescence_observations; /* test-only fault injection: the first N observations
                                               after a termination report cleanup failure */
};

int dsh_linux_services_create(const struct dsh_linux_services_options *options,
                              struct dsh_linux_services **ret_services,
                              struct dsh_error *ret_error);
void dsh_linux_services_destroy(struct dsh_linux_services *services); /* accepts NULL */

const struct dsh_fs_service *dsh_linux_fs(struct dsh_linux_services *services);
const struct dsh_subprocess_service *dsh_linux_subprocess(struct dsh_linux_services *services);
const struct dsh_sandbox_service *dsh_linux_sandbox(struct dsh_linux_services *services);
const struct dsh_sandbox_policy_service *dsh_linux_sandbox_policy(struct dsh_linux_services *services);

/* Commits a new mode for session_id (NULL = default session) and notifies subscribers at once. */
int dsh_linux_policy_set_mode(struct dsh_linux_services *services, const char *session_id,
                              const char *mode, struct dsh_error *ret_error);

#endif /* DSH_LINUX_SERVICES_H */

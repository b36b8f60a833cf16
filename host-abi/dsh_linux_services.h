/* dsh host ABI v1 -- the reference Linux services (fs, subprocess, sandbox, sandboxPolicy) as the
 * shared library libdsh-linux-services.so.1 (pkg-config dsh-linux-services). A host creates one
 * services instance, lends its four vtables to a provider at load(), and destroys it after the
 * provider's unload(). See ABI.md, "The reference Linux services", and
 * examples/providers/README.md for what the sandbox enforces.
 *
 * Thread rule: as for providers (ABI.md): one thread at a time, the host thread.
 */
#ifndef DSH_LINUX_SERVICES_H
#define DSH_LINUX_SERVICES_H

#include "dsh_services.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dsh_linux_services; /* opaque */

/* Lets the services complete asynchronous work (a delayed confine) on the host's loop: the host
 * calls fn(arg) on its thread after at least delay_ms. NULL = complete synchronously. */
typedef int (*dsh_defer_fn)(void *loop, uint32_t delay_ms, void (*fn)(void *arg), void *arg);

/* Options of dsh_linux_services_create(). Append-only (ABI.md, "Versioning"): set struct_size to
 * sizeof the struct you compiled against, zero every field you do not set; the library reads a
 * field only when struct_size covers it. Every field below exists since host ABI 1.1; strings
 * and arrays are transfer none (copied during create). */
struct dsh_linux_services_options {
    DSH_RECORD_HEADER;
    /* sandbox row (dsh-sandbox-linux) */
    const char *launcher_path;               /* dsh-sandbox-launch; NULL = the installed one
                                                (libexecdir/dsh, found relative to the library) */
    const char *const *extra_writable_roots; /* NULL-terminated, may be NULL */
    int max_landlock_abi;                    /* 0 = the kernel's; else a cap (< 0 pretends
                                                Landlock is missing), for tests and `dsh doctor` */
    uint32_t confine_delay_ms;               /* test-only: delay confine completion (needs defer) */
    /* sandbox-policy row (dsh-sandbox-policy) */
    const char *default_mode;   /* read-only (NULL) | workspace-write | danger-full-access */
    const char *workspace_root; /* absolute; NULL = the current directory; never "/" */
    /* host loop integration */
    dsh_defer_fn defer;
    void *loop;
    const struct dsh_logger *logger; /* may be NULL; confine failures are explained here */
    /* Host directories the execution world may read besides the system, the workspace and the
     * program binary; NULL-terminated, may be NULL. Pass the provider's readable_roots() here
     * (its bootstrap and Node): fs maps only what the execution world can see. */
    const char *const *extra_readable_roots;
    const char *supervisor_path; /* dsh-range-supervisor; NULL = next to launcher_path */
    const char *temp_root;       /* where per-run private temp dirs live; NULL = "/tmp" */
    uint32_t max_processes;      /* bound on live processes per range (see README); 0 = 512 */
    bool disable_namespaces;     /* test-only: act as if PID/mount/network namespaces were
                                    unavailable (subreaper fallback, no read-only mount layer) */
    uint32_t fail_quiescence_observations; /* test-only fault injection: the first N observations
                                               after a termination report cleanup failure */
    /* A restricted policy that this machine would enforce only partially fails closed with
     * DSH_E_SANDBOX_UNAVAILABLE (the logger names the weak capabilities) instead of running. */
    bool require_full_enforcement;
    /* Appended in 1.3. Test-only fault injection (0 = off): freeze() reports every range frozen
     * without stopping it, and terminate() sends SIGTERM and kills only this many ms later, so a
     * result is delivered while its range still runs. */
    uint32_t fault_freeze_skipped_ms;
    /* Appended in 1.3. Test-only: the cgroup filesystem is this directory instead of /sys/fs/cgroup, and this
     * process's membership is its file `self-cgroup` instead of /proc/self/cgroup (a fake tree;
     * an empty directory means: no cgroup can be delegated here). NULL = the host's. */
    const char *cgroup_root;
    /* Appended in 1.4. The totals of every range this instance starts (its session), held by
     * one parent cgroup of them all: memory in bytes (0 = 16 GiB) and live tasks (0 = 4096).
     * The per-range limits still apply inside them; README of the services, "Limits". */
    uint64_t max_total_memory_bytes;
    uint32_t max_total_processes;
    /* Appended in 1.7. The network policy of restricted runs (sandbox-policy row, `network`):
     * mode NULL or "none" (a private namespace with nothing in it) or "allow-list" (the
     * services' README, "Network allow-list"): host patterns (`name`, `*.suffix`, optional
     * `:port`), deny wins; private addresses refused unless network_allow_private_addresses.
     * network_resolver_override is test-only: those names resolve to 127.0.0.1 and are exempt
     * from the private-address rule. NULL-terminated lists, may be NULL; checked at create
     * (config-invalid names the option). */
    const char *network_mode;
    const char *const *network_allow;
    const char *const *network_deny;
    bool network_allow_private_addresses;
    const char *const *network_resolver_override;
};

/* Probes the kernel and creates the four services. 0, or a negative status with ret_error
 * filled (config-invalid names the option; request-invalid: options NULL or too small). */
int dsh_linux_services_create(const struct dsh_linux_services_options *options,
                              struct dsh_linux_services **ret_services,
                              struct dsh_error *ret_error);
/* (1.3) Checks one root the way dsh_linux_services_create() checks its roots with these
 * options (their temp root, readable roots and helpers), so a host can name the field of its own
 * configuration a refused root came from: 0, or DSH_E_CONFIG_INVALID with
 * `FIELD "PATH" is refused: REASON` (ABI.md, "Roots") in ret_error. */
int dsh_linux_services_check_root(const struct dsh_linux_services_options *options,
                                  const char *field, const char *path, bool writable,
                                  struct dsh_error *ret_error);
/* Destroys the services; call it after the provider's unload(). Accepts NULL. */
void dsh_linux_services_destroy(struct dsh_linux_services *services);

/* The vtables, owned by the services instance (valid until destroy). */
const struct dsh_fs_service *dsh_linux_fs(struct dsh_linux_services *services);
const struct dsh_subprocess_service *dsh_linux_subprocess(struct dsh_linux_services *services);
const struct dsh_sandbox_service *dsh_linux_sandbox(struct dsh_linux_services *services);
const struct dsh_sandbox_policy_service *dsh_linux_sandbox_policy(struct dsh_linux_services *services);

/* Commits a new mode for session_id (NULL = default session) and notifies subscribers at once. */
int dsh_linux_policy_set_mode(struct dsh_linux_services *services, const char *session_id,
                              const char *mode, struct dsh_error *ret_error);

/* The library also exports dsh_strerror() and dsh_error_name() (dsh_abi.h) as real functions,
 * for hosts that call through an FFI; C hosts use the inline ones of dsh_abi.h. */

#ifdef __cplusplus
}
#endif

#endif /* DSH_LINUX_SERVICES_H */

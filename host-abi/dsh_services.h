/* dsh host ABI v1 -- the services a host lends to a provider at load().
 *
 * A provider delegates all confinement and process lifetime to these services. Each service is a
 * versioned vtable with an opaque ctx. All methods are called on the host thread only (see the
 * thread rule in ABI.md). Text results use the snprintf convention: the callee writes at most
 * buflen bytes including the NUL and returns the full length it needed (excluding the NUL); a
 * return >= buflen means "retry with a larger buffer". No allocation crosses a service boundary
 * except the handles below, which are released through the service that made them.
 */
#ifndef DSH_SERVICES_H
#define DSH_SERVICES_H

#include "dsh_abi.h"

#include <stdbool.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- fs: host-file mapping -------------------------------------------------------------------
 * Provider files (the bootstrap, images) live on the host; programs run in the execution world of
 * the subprocess service. A path crosses only through this explicit mapping. */
struct dsh_fs_service {
    DSH_STRUCT_HEADER;
    void *ctx;
    /* Execution-world path of host_path (transfer none) into buf. Returns the length, or
     * DSH_E_NOT_MAPPED when the execution world cannot see that file. */
    int (*map_host_path)(void *ctx, const char *host_path, char *buf, size_t buflen);
};

/* ---- sandbox: argv confinement ----------------------------------------------------------------
 * Policy text (JSON, UTF-8), as resolved by the sandboxPolicy service:
 *   {"mode": "read-only"|"workspace-write"|"danger-full-access",
 *    "workspaceRoot": "/abs", "sessionId": "..."}
 * A confinement is owned by the sandbox service until release_confinement(); every pointer inside
 * it stays valid until then. Releasing removes per-run resources such as the private temp dir. */
struct dsh_confinement {
    DSH_RECORD_HEADER;
    const char *const *argv; /* NULL-terminated; starts the launcher that confines, then execs */
    const char *const *env;  /* NULL-terminated NAME=VALUE entries the process must receive
                                (e.g. TMPDIR of the private temp dir); may be empty, never NULL */
    /* {"mode": "...", "enforcement": "full"|"partial"|"none",
     *  "capabilities": {"files": "full", "network": "full", ...}, "landlockAbi": 7} */
    const char *report_json;
};

typedef void (*dsh_confined_fn)(void *userdata, int status, struct dsh_confinement *confinement);

struct dsh_sandbox_service {
    DSH_STRUCT_HEADER;
    void *ctx;
    /* Starts confining argv (NULL-terminated, transfer none) under policy_json. Completion is
     * reported exactly once through on_confined, on the host thread, possibly before confine()
     * returns: status 0 with a confinement (transfer full: give it back with
     * release_confinement), or a negative status (DSH_E_SANDBOX_UNAVAILABLE when the policy needs
     * a mechanism the machine lacks -- never a silently unconfined argv) with NULL.
     * If confine() itself returns a negative status, on_confined is never called.
     * *ret_op identifies the operation for cancel_confine(). */
    int (*confine)(void *ctx, const char *const *argv, const char *policy_json, size_t policy_len,
                   dsh_confined_fn on_confined, void *userdata, uint64_t *ret_op);
    /* Abandons a pending confine: on_confined will not be called. Returns DSH_E_NOT_FOUND when
     * the operation already completed. */
    int (*cancel_confine)(void *ctx, uint64_t op);
    /* 1 when text (program diagnostics, transfer none) carries this backend's signature of a
     * denied operation, 0 otherwise. */
    int (*is_denial)(void *ctx, const struct dsh_confinement *confinement, const char *text,
                     size_t len);
    void (*release_confinement)(void *ctx, struct dsh_confinement *confinement);
    /* Appended in 1.7. The network accounting of a confinement whose policy has a network
     * allow-list, as JSON into buf (snprintf convention): {"mode":"allow-list","connections":
     * [{"host","port","verdict":"allowed"|"refused","reason"?,"bytesSent","bytesReceived",
     * "open"?}],"refused":N,"omitted":N,"diagnostic"?}. 0 when the confinement has none. Never
     * waits: the connections as accounted so far. */
    int (*network_json)(void *ctx, const struct dsh_confinement *confinement, char *buf, size_t buflen);
    /* Appended in 1.8. A run begins in this confinement (a retained environment or a prewarmed
     * process serves runs one after another): network_json reports from now on only what this
     * run does, the decisions after this call and the connections still open at it (with the
     * bytes since). Never waits. */
    void (*network_begin_run)(void *ctx, const struct dsh_confinement *confinement);
};

/* ---- subprocess: managed process ranges --------------------------------------------------------
 * spawn() starts argv under a supervisor that owns the managed process range: every descendant,
 * including ones that double-fork or setsid, belongs to it. The child gets fd 0 = /dev/null,
 * fd 1/2 = pipes, fd 3 = its end of a dedicated control socketpair, and only an allow-listed
 * environment plus request->env. */
struct dsh_spawn_request {
    DSH_RECORD_HEADER;
    const char *const *argv; /* NULL-terminated, transfer none; argv[0] is an absolute path */
    const char *const *env;  /* NULL-terminated NAME=VALUE additions, transfer none */
    const char *cwd;         /* absolute, transfer none */
    /* ---- appended in 1.3: limits of the whole range (every process and thread of it); 0 = no
     * limit of that kind (max_processes 0 = the services' own bound). A service that cannot
     * enforce a limit says so in the confinement's report (capabilities.resources). ---- */
    uint64_t max_memory_bytes; /* RSS + page cache charged to the range, no swap */
    uint32_t max_processes;    /* live tasks: processes and their threads */
    uint32_t max_cpu_percent;  /* CPU time per period, in percent of one CPU (100 = one CPU) */
};

struct dsh_process {
    DSH_RECORD_HEADER;
    pid_t pid; /* the supervisor, as seen from the host */
    /* Host ends, O_CLOEXEC | O_NONBLOCK, transfer full: the caller closes them. */
    int control_fd;
    int stdout_fd;
    int stderr_fd;
    /* Owned by the process handle. Becomes readable when the range is quiescent (no process of
     * it is left), never merely when pipes reach EOF. */
    int quiescence_fd;
};

/* Appended in 1.3: what a range's resource accounting counted, filled by usage(). The caller sets
 * struct_size; counters a service does not keep read 0. */
struct dsh_range_usage {
    DSH_RECORD_HEADER;
    uint32_t oom_kills;             /* processes the kernel killed at max_memory_bytes */
    uint64_t memory_peak_bytes;     /* highest memory charged to the range */
    uint64_t cpu_usage_usec;        /* CPU time of every process of the range */
    uint64_t cpu_periods;           /* enforcement periods of max_cpu_percent that elapsed */
    uint64_t cpu_throttled_periods; /* periods in which the range was stopped at its CPU limit */
    uint64_t process_limit_hits;    /* forks and clones refused at max_processes */
};

struct dsh_exit_status {
    int32_t exited;    /* 1 when the program exited normally */
    int32_t code;      /* exit code when exited */
    int32_t signal;    /* terminating signal otherwise, 0 if unknown */
};

struct dsh_subprocess_service {
    DSH_STRUCT_HEADER;
    void *ctx;
    /* Synchronous. *ret_process is transfer full: give it back with release(). */
    int (*spawn)(void *ctx, const struct dsh_spawn_request *request, struct dsh_process **ret_process,
                 struct dsh_error *ret_error);
    /* Non-blocking: begins terminating every process of the range, SIGTERM then SIGKILL after
     * grace_ms (0 = SIGKILL at once). Idempotent. */
    int (*terminate)(void *ctx, struct dsh_process *process, uint32_t grace_ms);
    /* Non-blocking: 1 when the range is quiescent (fills *ret_status with the program's own exit),
     * 0 when not yet, DSH_E_CLEANUP_FAILED when the range can no longer be observed. */
    int (*poll_quiescent)(void *ctx, struct dsh_process *process, struct dsh_exit_status *ret_status);
    /* Frees the handle. If the range is not quiescent yet it is killed first and waited for. */
    void (*release)(void *ctx, struct dsh_process *process);
    /* Appended in 1.2. Non-blocking and idempotent: stops every process of the range where it
     * stands (a cgroup freezer) and keeps any it would start stopped. 1 once all are frozen, 0
     * while freezing (call again), DSH_E_UNSUPPORTED when this range cannot be frozen (the
     * caller waits for quiescence instead). A frozen range runs nothing more: terminate() kills
     * it, release() kills and reaps it. */
    int (*freeze)(void *ctx, struct dsh_process *process);
    /* Appended in 1.3. Non-blocking: fills *ret_usage (up to its struct_size) with the range's
     * counters so far; after poll_quiescent() returned 1 they are final (until release()). 0, or
     * DSH_E_UNSUPPORTED when the range has no resource accounting. An exit by SIGKILL with
     * oom_kills > 0 is the memory limit's kill. */
    int (*usage)(void *ctx, struct dsh_process *process, struct dsh_range_usage *ret_usage);
};

/* ---- sandboxPolicy: standing policy and mode changes ------------------------------------------- */
typedef void (*dsh_mode_change_fn)(void *userdata, const char *session_id, const char *new_mode);

struct dsh_sandbox_policy_service {
    DSH_STRUCT_HEADER;
    void *ctx;
    /* Standing policy of session_id (NULL = the host's default session) as policy JSON (see the
     * sandbox section) into buf; snprintf convention. */
    int (*resolve)(void *ctx, const char *session_id, char *buf, size_t buflen);
    /* on_change is called on the host thread the moment a session's mode changes, after the new
     * mode is committed (resolve() already returns it). Arguments are transfer none. */
    int (*subscribe)(void *ctx, dsh_mode_change_fn on_change, void *userdata,
                     uint64_t *ret_subscription);
    int (*unsubscribe)(void *ctx, uint64_t subscription);
};

/* ---- logger ------------------------------------------------------------------------------------ */
enum dsh_log_level { DSH_LOG_DEBUG = 0, DSH_LOG_INFO = 1, DSH_LOG_WARN = 2, DSH_LOG_ERROR = 3 };

struct dsh_logger {
    DSH_STRUCT_HEADER;
    void *ctx;
    void (*log)(void *ctx, int level, const char *message); /* message: transfer none */
};

/* ---- runtime: a loaded PTC runtime lent to another provider ------------------------------------
 * Lets a provider (e.g. the workflow engine) run programs through an already loaded runtime using
 * only the public provider ABI: the provider table and its instance. The borrowing provider calls
 * the runtime on the host thread and must integrate the runtime's get_fd() into its own loop (or
 * let the host dispatch it). Both pointers are borrowed until the borrower's unload() returns. */
struct dsh_provider;
struct dsh_instance;
struct dsh_runtime_service {
    DSH_STRUCT_HEADER;
    const struct dsh_provider *provider;
    struct dsh_instance *instance;
};

/* The bundle handed to load(). Borrowed: the host keeps every service alive until unload()
 * returns. A NULL service means the host does not offer it. */
struct dsh_services {
    DSH_STRUCT_HEADER;
    const struct dsh_fs_service *fs;
    const struct dsh_subprocess_service *subprocess;
    const struct dsh_sandbox_service *sandbox;
    const struct dsh_sandbox_policy_service *sandbox_policy;
    const struct dsh_logger *logger;
    /* ---- appended in 1.0 ---- */
    const struct dsh_runtime_service *runtime; /* NULL unless the host lends a runtime */
};

#ifdef __cplusplus
}
#endif

#endif /* DSH_SERVICES_H */

/* Test harness for the hostile sandbox suite: a fixture tree per test, real confined Node runs
 * through the real services, and a snapshot of everything outside the workspace. */
#ifndef DSH_SANDBOX_HARNESS_H
#define DSH_SANDBOX_HARNESS_H

#include "dsh_linux_services.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RO "read-only"
#define WW "workspace-write"
#define DANGER "danger-full-access"

/* The fixture tree (all under one mkdtemp root in /tmp):
 *   ws/           the workspace (holds a copy of the hostile probe as ws/probe)
 *   outside/      invisible to the program: victim.txt, dir/
 *   shared/       an extra readable root: victim.txt, empty/
 *   secret/.ssh/  id_rsa, invisible
 *   extra/        an extra writable root (writable in workspace-write, readable in read-only)
 *   tmp/          the temp root for per-run private temp dirs */
struct fx {
    char root[128];
    char ws[160], outside[160], shared[160], secret[160], extra[160], tmproot[160];
    struct dsh_linux_services *svc;
    char *snapshot; /* of everything but ws/, taken at setup */
    pid_t decoy;    /* a stand-in host process outside every range, or 0 */
};

struct fx_options {
    int max_landlock_abi;
    uint32_t max_processes;
    bool no_namespaces; /* the services' test knob: subreaper fallback, no mount layer */
    const char *cgroup_root; /* the services' test knob: a fake cgroup filesystem */
};

/* Limits of one range (the spawn request's 1.3 fields); 0 = none. */
struct range_limits {
    uint64_t memory_bytes;
    uint32_t processes;
    uint32_t cpu_percent;
};

struct run {
    int confine_status; /* < 0: confine failed; nothing ran */
    int usage_status;   /* usage() before release: 0, or why not */
    struct dsh_range_usage usage;
    char *report;
    int quiescent; /* poll_quiescent's final answer */
    struct dsh_exit_status st;
    char *out, *err, *ctl;
    bool timed_out;
};

struct live {
    struct fx *f;
    struct dsh_confinement *conf;
    struct dsh_process *proc;
    char *out, *err, *ctl;
    size_t nout, nerr, nctl;
    bool eof[3];
    int quiescent;
    struct dsh_exit_status st;
};

void fx_setup(struct fx *f, const struct fx_options *o); /* o may be NULL */
void fx_teardown(struct fx *f);

/* Runs `node -e <prelude + js>` in mode and waits (<= timeout_ms, then SIGKILL) for quiescence.
 * env: extra NAME=VALUE entries (NULL-terminated, may be NULL); the fixture's paths are always
 * passed as DSH_T_WS, DSH_T_OUT, DSH_T_SHARED, DSH_T_SECRET, DSH_T_PROBE, DSH_T_DECOY. */
void fx_run(struct fx *f, const char *mode, const char *js, const char *const *env,
            struct run *ret);
void fx_run_argv(struct fx *f, const char *mode, const char *const *argv, const char *const *env,
                 int timeout_ms, struct run *ret);
void run_free(struct run *r);
/* fx_run with the range's limits set in the spawn request. */
void fx_run_limited(struct fx *f, const char *mode, const char *js, const struct range_limits *limits,
                    struct run *ret);

/* Step by step, for tests that act while the range runs. */
int live_start(struct fx *f, const char *mode, const char *js, const char *const *env,
               struct live *l);
/* live_start with the range's limits set in the spawn request (limits may be NULL). */
int live_start_limited(struct fx *f, const char *mode, const char *js, const struct range_limits *limits,
                       struct live *l);
bool live_pump(struct live *l, int ms);         /* waits up to ms; true once quiescent */
void live_end(struct live *l, struct run *ret); /* terminate(0) if needed, release all */

/* "TAG:VALUE" lines printed by the prelude's R()/RA(); NULL when absent. Static buffer. */
const char *tag_value(const struct run *r, const char *tag);
bool tag_denied(const struct run *r, const char *tag); /* EACCES | EPERM | EROFS | EXDEV */
bool tag_ok(const struct run *r, const char *tag);

/* Everything outside ws/ is exactly as at the last snapshot (contents, inodes, modes, times,
 * entries). fx_setup takes one; take another after adding fixtures (listeners, files). */
bool fx_outside_unchanged(struct fx *f);
void fx_snapshot(struct fx *f);

/* The common shape of a hostile case: js prints "<tag>:<result>". Confined in mode the action
 * must be denied (EACCES/EPERM/EROFS/EXDEV) and nothing outside the workspace may change; the
 * negative control runs the same js in control_mode (NULL = danger-full-access) and must
 * succeed, proving the action is real and the tools for it are present. */
void hostile_case(struct fx *f, const char *mode, const char *tag, const char *js,
                  const char *const *env, const char *control_mode);
char *fx_read(const char *path); /* whole file or NULL */
void fx_write(const char *path, const char *text);

/* Processes (host view) whose environment holds DSH_T_MARK=<mark>. */
int count_marked(const char *mark);
pid_t start_decoy(void);
bool decoy_alive_untraced(pid_t pid);

/* Local listeners for network controls; return the fd, port in *ret_port. */
int listen_tcp(int *ret_port);
int bind_udp(int *ret_port);
int listen_unix(const char *path, bool abstract);
bool udp_received(int fd);

#endif /* DSH_SANDBOX_HARNESS_H */

/* Execution environments: one confined Node process (its managed range, control channel and
 * output pipes) that exists on its own and serves one consumer at a time -- a run -- attached to
 * it. The environment knows nothing of runs: it reports to whatever is attached through the
 * struct ptc_env_events table declared here.
 *
 *   CONFINING --confined + spawned--> STARTING --hello [+ warm-up]--> IDLE <--attach/detach--> BUSY
 *        any state --terminate--> CLOSING --quiescent + drained--> CLOSED (freed)
 *
 * An environment is bound to one mode, workspace root and session. Only this layer (env/) writes
 * its fields; everyone else uses the functions below. */
#ifndef PTC_ENV_H
#define PTC_ENV_H

#include "frames.h"
#include "ptc_host.h"

#include <json-c/json.h>

struct ptc_env;

enum ptc_env_state { PTC_ENV_CONFINING, PTC_ENV_STARTING, PTC_ENV_IDLE, PTC_ENV_BUSY, PTC_ENV_CLOSING };

/* What an environment reports to its attached consumer (arg). Called from the loop. */
struct ptc_env_events {
    /* The process said hello while attached, or the consumer attached to an idle process: it may
     * send its evaluation now. */
    void (*ready)(void *arg);
    /* A frame of the consumer's evaluation (its wire id); any other frame ends the environment. */
    void (*frame)(void *arg, const struct ptc_frame *frame);
    /* Raw stdout/stderr text (valid UTF-8): it has no evaluation identity and belongs to the
     * attached consumer. */
    void (*output)(void *arg, const char *text, size_t len);
    /* The environment can no longer serve (protocol violation, lost control channel, early exit,
     * confinement or spawn failure); it is terminating. */
    void (*failed)(void *arg, enum ptc_failure kind, const char *message);
    /* Control bytes arrived after the environment began closing; they are not read. */
    void (*trailing)(void *arg);
    /* The environment is done with its consumer: 0 -- quiescent and drained, or (a temporary one)
     * frozen with its pipes read, to be killed and reaped after this -- or DSH_E_CLEANUP_FAILED.
     * Either way nothing of the range runs any more. The consumer is detached before this is
     * called. */
    void (*closed)(void *arg, int status);
};

/* The identity a retained owner may not change, and the owner (NULL: temporary). */
struct ptc_env_identity {
    const char *owner;
    const char *mode, *workspace_root, *session_id;
};

/* Told that an owner's idle environment is released because it ran nothing for idleReleaseMs,
 * just before it is terminated (the owner layer keeps the notice for the owner's next run). */
typedef void (*ptc_envs_expired_fn)(void *ctx, const struct ptc_env *env);

/* Every environment of one instance not yet freed. Written only by env/. */
struct ptc_envs {
    struct ptc_host *host;
    struct ptc_env *head;
    uint64_t idle_seq; /* counts the times an owned environment became idle: least recently used first */
    ptc_envs_expired_fn expired;
    void *expired_ctx;
};

void ptc__envs_init(struct ptc_envs *set, struct ptc_host *host);
/* With the runtime's idleReleaseMs above 0, an owned environment that stays idle that long (its
 * timer starts when its consumer detaches and stops when one attaches) calls fn, then terminates. */
void ptc__envs_on_expired(struct ptc_envs *set, ptc_envs_expired_fn fn, void *ctx);
/* The environment after env in the set (env NULL: the first), or NULL. */
struct ptc_env *ptc__envs_next(const struct ptc_envs *set, const struct ptc_env *env);
/* True while an environment whose cleanup has not failed is still listed (unload waits). */
bool ptc__envs_closing(const struct ptc_envs *set);
/* Which environments of an owner ptc__envs_find_owned looks for. */
enum ptc_owned {
    PTC_OWNED_CURRENT, /* usable by the owner's next run: not invalidated, closing or closed */
    PTC_OWNED_ENDING,  /* invalidated or closing, not yet closed: blocks a new one */
    PTC_OWNED_ANY,     /* any not yet closed */
};
struct ptc_env *ptc__envs_find_owned(const struct ptc_envs *set, const char *owner, enum ptc_owned which);
/* Frees every environment now (unload); releasing a process kills and waits for its range. */
void ptc__envs_destroy_all(struct ptc_envs *set);

/* Attaches a consumer. Returns the wire id of its evaluation (1, 2, ... per environment) and sets
 * *ret_ready when the process was idle (it is busy now: call the consumer's evaluation at once);
 * otherwise events->ready follows. */
uint64_t ptc__env_attach(struct ptc_env *env, const struct ptc_env_events *events, void *arg, bool *ret_ready);
/* Detaches arg if it is attached; a busy process becomes idle. */
void ptc__env_detach(struct ptc_env *env, void *arg);
/* The attached consumer's arg, or NULL. */
void *ptc__env_consumer(const struct ptc_env *env);
/* Flow control for the attached consumer (ABI 1.5 pause_output): while held nothing more is read
 * from the child (control channel, stdout, stderr), so it blocks once those buffers fill. Released
 * by any caller, and when the consumer detaches, the range is stopped or becomes quiescent: what a
 * stop or an exit left in the buffers is always read. Holding for another consumer is ignored. */
void ptc__env_hold_reading(struct ptc_env *env, const void *consumer, bool held);

/* Begins terminating the range (idempotent): a temporary one with a consumer is frozen first
 * where the subprocess service can. The environment is freed once closed and every waiter was
 * told. */
void ptc__env_terminate(struct ptc_env *env);
/* Terminates an environment nobody is attached to (unload). */
void ptc__env_terminate_unattached(struct ptc_env *env);
/* Retries termination of an environment whose cleanup failed (release). */
void ptc__env_retry_cleanup(struct ptc_env *env);
/* Never reused again: the session's sandbox mode changed. */
void ptc__env_invalidate(struct ptc_env *env);
/* Before the process says hello (right after ptc__env_create): after its hello it is warmed with
 * one constant evaluation (env_io.c) and becomes ready only once that succeeded. The warm-up takes
 * wire id 1; consumers get 2, 3, ... */
void ptc__env_request_warm_up(struct ptc_env *env);
/* The environment initializer ran and was accepted: later evaluations do not carry it. */
void ptc__env_mark_initialized(struct ptc_env *env);

typedef void (*ptc_env_closed_fn)(void *arg, int status);
/* Calls fn(arg, status) once the environment is closed: 0, or DSH_E_CLEANUP_FAILED. */
int ptc__env_wait_closed(struct ptc_env *env, ptc_env_closed_fn fn, void *arg);
/* Forgets the waiter registered with ptc__env_wait_closed for arg (it is going away). */
void ptc__env_cancel_wait(struct ptc_env *env, void *arg);
/* Holders of a reference may read the environment after it closed; the last one frees it. */
void ptc__env_ref(struct ptc_env *env);
void ptc__env_unref(struct ptc_env *env);

/* Queues a frame to the child. Returns 0, -E2BIG (queue bound) or another negative errno. */
int ptc__env_send(struct ptc_env *env, json_object *frame);
/* The same for a frame's one-line text (no newline inside). */
int ptc__env_send_text(struct ptc_env *env, const char *text, size_t len);

enum ptc_env_state ptc__env_state(const struct ptc_env *env);
const struct ptc_env_identity *ptc__env_identity(const struct ptc_env *env);
const char *ptc__env_format(const struct ptc_env *env);
bool ptc__env_retains(const struct ptc_env *env);
bool ptc__env_initialized(const struct ptc_env *env);
bool ptc__env_invalidated(const struct ptc_env *env);
/* Its hello announced `strippedPrograms`: a run frame may carry a program the host stripped. */
bool ptc__env_runs_stripped(const struct ptc_env *env);
bool ptc__env_cleanup_failed(const struct ptc_env *env);
/* When an owned, idle environment became idle, in the set's order (smaller: less recently used);
 * 0 while it is not idle. */
uint64_t ptc__env_idle_order(const struct ptc_env *env);
/* Quiescent and drained; it stays readable while references remain. */
bool ptc__env_closed(const struct ptc_env *env);
/* The sandbox's confinement, NULL when none was made. */
const struct dsh_confinement *ptc__env_confinement(const struct ptc_env *env);
/* A description of how the process ended, for worker-exit messages (transfer full). */
char *ptc__env_exit_description(const struct ptc_env *env);

#endif

/* The body of struct ptc_env and the functions env.c lends the other files of env/. Included by
 * env/ only (and by the env layer's unit tests). */
#ifndef PTC_ENV_PRIVATE_H
#define PTC_ENV_PRIVATE_H

#include "control.h"
#include "env.h"
#include "image.h"
#include "utf8.h"

struct ptc_pipe {
    struct ptc_watch watch;
    struct ptc_env *env;
    bool is_stderr;
    bool eof;
    struct ptc_utf8_carry carry; /* an incomplete UTF-8 sequence carried to the next read */
};

struct ptc_env_waiter {
    struct ptc_env_waiter *next;
    ptc_env_closed_fn fn;
    void *arg;
};

#define PTC_STDERR_TAIL 4096

/* A prewarmed process answers two constant evaluations before it is ready: the bootstrap reads
 * its first run frame synchronously and adopts the control socket only then
 * (bootstrap/control-reader.js), so the second one is what warms the socket's read path that
 * the program's run frame then takes. */
#define PTC_WARM_UP_EVALUATIONS 2u
/* The most binding calls a process's warm-up evaluations may make together; one more ends it. */
#define PTC_WARM_UP_CALLS_MAX 128u

struct ptc_env {
    struct ptc_env *next;
    struct ptc_envs *set;
    struct ptc_host *host;
    struct ptc_env_identity identity; /* strings owned here */
    char *policy_json;  /* the resolved policy (confine() got it with the row's limits added) */
    const char *format; /* program format sent in each run frame */
    bool retain;        /* the child keeps its context between runs */
    enum ptc_env_state state;
    bool invalidated;   /* the session's mode changed: never reused */

    bool confine_pending;
    uint64_t confine_op;
    int confine_status;
    struct dsh_confinement *confinement;
    char **launch_env;

    struct dsh_process *process;
    struct ptc_control control;
    struct ptc_watch control_watch;
    struct ptc_pipe out, err;
    struct ptc_watch quiescence_watch;
    struct ptc_timer drain;
    struct ptc_timer freeze_poll;
    struct ptc_timer idle; /* an owned environment's idleReleaseMs, armed while it is idle */
    uint64_t idle_order;   /* set->idle_seq when it last became idle; 0 while not idle */
    bool freezing;      /* a temporary range is being frozen: its result waits until it is */
    uint64_t freeze_started_ns; /* when the freeze was asked for (ptc__loop_now_ns) */
    unsigned freeze_spins;      /* polls made on consecutive dispatches so far */
    bool quiescent, drained, cleanup_failed, control_lost;
    bool reading_held;  /* the consumer's host reads slower than the child writes (env_io.c) */
    int control_error; /* the negative errno that ended the control channel; 0 for end of file */
    struct dsh_exit_status exit_status;
    uint32_t memory_limit_kills; /* processes of the range the kernel killed at maxMemoryMb */
    char *launch_error; /* why no launch argv could be built (nothing was confined) */
    char stderr_tail[PTC_STDERR_TAIL];
    size_t stderr_tail_len;

    bool warm_up;       /* a prewarmed process: constant evaluations before it is ready */
    bool warming;       /* a warm-up evaluation was sent; its result is awaited */
    unsigned warm_ups_left; /* warm-up evaluations still to answer (PTC_WARM_UP_EVALUATIONS) */
    uint64_t warm_up_wire_id;
    unsigned warm_up_calls; /* binding calls its warm-up evaluations made (answered) */
    bool initialized;   /* the environment initializer ran and was accepted */
    bool runs_stripped; /* its hello said it runs programs the host stripped */
    uint64_t wire_ids_issued; /* wire run ids are 1, 2, ... per environment */
    const struct ptc_env_events *events; /* the attached consumer, if any */
    void *consumer;
    uint64_t consumer_wire_id; /* the attached consumer's evaluation */
    struct ptc_env_waiter *waiters; /* notified once closed (quiescent, drained) */
    /* What it has pending on the loop: the continuation after confinement (env_start.c), the
     * close, and the step of a frozen delivery (deliver, poll again or kill: one at a time). */
    struct ptc_deferred confined_call, close_call, freeze_call;
    bool closed;   /* quiescent and drained: freed once no reference remains */
    unsigned refs; /* holders that still read it (a run's result needs the confinement) */
    struct ptc_image *images; /* registered images: they live as long as the process */
};

/* env.c: a new CONFINING environment in set (nothing started yet), or NULL. */
struct ptc_env *ptc__env_new(struct ptc_envs *set, json_object *policy, const char *owner, const char *format,
                             bool retain);
/* env.c: closes it on the loop once quiescent and drained (or its cleanup failed). */
void ptc__env_schedule_close(struct ptc_env *env);
/* env.c: removes the watches and closes the host ends of the process's fds. */
void ptc__env_close_fds(struct ptc_env *env);
/* env.c: the environment failed; its consumer is told (or the host's logger, for an idle
 * retained one) and it is terminated. */
void ptc__env_fail(struct ptc_env *env, enum ptc_failure kind, const char *message);
/* env.c: the range became quiescent or a pipe reached EOF. */
void ptc__env_progress(struct ptc_env *env);

#endif

/* Execution environments: one confined Node process (its managed range, control channel and
 * output pipes) serving one run (temporary) or every run of a state owner (retained).
 *
 *   CONFINING --confined--> STARTING --hello--> IDLE <--> BUSY
 *        any state --terminate--> CLOSING --quiescent + drained--> CLOSED (freed)
 *
 * An environment is bound to one mode, workspace root and session. The active run receives the
 * frames of its evaluation; an environment never replays a program. */
#ifndef PTC_ENV_H
#define PTC_ENV_H

#include "internal.h"
#include "images.h"

struct ptc_run;
struct ptc_env;

enum ptc_env_state { PTC_ENV_CONFINING, PTC_ENV_STARTING, PTC_ENV_IDLE, PTC_ENV_BUSY, PTC_ENV_CLOSING };

struct ptc_pipe {
    struct ptc_watch watch;
    struct ptc_env *env;
    bool is_stderr;
    bool eof;
    unsigned char partial[4]; /* an incomplete UTF-8 sequence carried to the next read */
    size_t partial_len;
};

typedef void (*ptc_env_closed_fn)(void *arg, int status);

struct ptc_env_waiter {
    struct ptc_env_waiter *next;
    ptc_env_closed_fn fn;
    void *arg;
};

#define PTC_STDERR_TAIL 4096

struct ptc_env {
    struct ptc_env *next;
    struct dsh_instance *inst;
    char *owner;        /* NULL: temporary, ends with its run */
    char *policy_json;  /* the policy it was confined with */
    char *mode, *workspace_root, *session_id; /* identity a retained owner may not change */
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
    bool quiescent, drained, cleanup_failed, control_lost;
    int control_error; /* the negative errno that ended the control channel; 0 for end of file */
    struct dsh_exit_status exit_status;
    char *failure; /* why the environment ended, when it ended unexpectedly */
    char *launch_error; /* why no launch argv could be built (nothing was confined) */
    char stderr_tail[PTC_STDERR_TAIL];
    size_t stderr_tail_len;

    bool initialized;   /* the environment initializer ran and was accepted */
    uint64_t runs_sent; /* wire run ids are 1, 2, ... per environment */
    struct ptc_run *run; /* the active run, if any */
    struct ptc_env_waiter *waiters; /* notified once closed (quiescent, drained) */
    bool close_scheduled;
    bool closed;   /* quiescent and drained: freed once no run refers to it */
    unsigned refs; /* runs that still read it (their result needs the confinement) */
    struct ptc_image *images; /* registered images: they live as long as the process */
};

/* Creates an environment and starts confining it (completion continues on the loop). */
struct ptc_env *ptc__env_create(struct dsh_instance *inst, const struct ptc_spec *spec, const char *owner,
                                const char *format, bool retain);
/* Begins terminating the range (idempotent). The environment is freed once closed and every
 * waiter was told. */
void ptc__env_terminate(struct ptc_env *env, const char *why);
/* Calls fn(arg, status) once the environment is closed: 0, or DSH_E_CLEANUP_FAILED. */
int ptc__env_wait_closed(struct ptc_env *env, ptc_env_closed_fn fn, void *arg);
/* Forgets a waiter registered with ptc__env_wait_closed (its arg is going away). */
void ptc__env_cancel_wait(struct ptc_env *env, ptc_env_closed_fn fn, void *arg);
/* Queues a frame to the child. Returns 0, -E2BIG (queue bound) or another negative errno. */
int ptc__env_send(struct ptc_env *env, json_object *frame);
/* Runs hold a reference while they may read the environment; the last one frees a closed one. */
void ptc__env_ref(struct ptc_env *env);
void ptc__env_unref(struct ptc_env *env);
/* Frees the environment now (unload); releasing the process kills and waits for its range. */
void ptc__env_destroy(struct ptc_env *env);
/* Retries termination of an environment whose cleanup failed (release). */
void ptc__env_retry_cleanup(struct ptc_env *env);
/* True when the environment can take a new run now. */
bool ptc__env_usable(const struct ptc_env *env);
/* A description of how the process ended, for worker-exit messages (transfer full). */
char *ptc__env_exit_description(const struct ptc_env *env);

/* Called when the range became quiescent or a pipe reached EOF. */
void ptc__env_progress(struct ptc_env *env);

/* env_io.c */
int ptc__env_watch_process(struct ptc_env *env);
void ptc__env_close_fds(struct ptc_env *env);
/* utf8.c: sanitized text of bytes, carrying incomplete sequences in pipe->partial */
int ptc__utf8_sanitize(struct ptc_pipe *pipe, const char *bytes, size_t len, bool at_eof,
                       char **ret_text, size_t *ret_len);

#endif

/* One run: admission, the evaluation in an environment, outcome selection and delivery.
 *
 *   WAITING (for an owner's old environment to close) -> STARTING (environment starting)
 *     -> RUNNING (program submitted) -> [STOPPING: revoke sent, stopGraceMs] -> FINISHING
 *
 * Selecting an outcome stops the deadline. A temporary environment is then terminated and the
 * result waits for quiescence; a retained environment stays (ok, exception) or is asked to revoke
 * (timeout, abort) and is terminated when it does not acknowledge within stopGraceMs. */
#ifndef PTC_RUN_H
#define PTC_RUN_H

#include "env.h"
#include "frames.h"

enum ptc_phase { PTC_RUN_WAITING, PTC_RUN_STARTING, PTC_RUN_RUNNING, PTC_RUN_STOPPING, PTC_RUN_FINISHING };

struct ptc_open_call {
    uint64_t id;
    size_t arg_bytes;
};

struct ptc_run {
    struct ptc_run *next;
    struct dsh_instance *inst;
    dsh_run_id id;
    struct dsh_run_callbacks cb;
    struct ptc_spec spec;
    enum ptc_phase phase;
    struct ptc_env *env;
    struct ptc_env *waiting_for; /* the owner's closing environment, referenced while waited for */
    uint64_t wire_id;  /* this run's id on the environment's control channel */
    bool code_started; /* the program was submitted to the ready process */
    bool initializing; /* the environment initializer is running */
    bool refused_before_program; /* the host refused the run before sending its program */
    bool retained;     /* runs in an owner's retained environment */

    struct ptc_open_call *calls;
    size_t n_calls, cap_calls;
    uint64_t open_arg_bytes;
    struct ptc_ledger ledger;
    struct ptc_timer deadline, stop_grace;

    bool outcome_selected;
    bool terminal_seen;
    const char *kind; /* NULL = ok */
    char *message;
    bool has_value;
    json_object *value;
    const char *retained_state; /* "preserved" | "cleared" | NULL */
    bool finish_scheduled;
};

/* run.c */
void ptc__run_select(struct ptc_run *run, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Replaces a selected outcome with a protocol failure (nothing may follow a terminal frame). */
void ptc__run_override_protocol(struct ptc_run *run, const char *message);
void ptc__run_schedule_finish(struct ptc_run *run);
void ptc__run_attach(struct ptc_run *run, struct ptc_env *env);

/* Environment events (env.c / env_io.c -> run). */
void ptc__run_on_env_ready(struct ptc_run *run);
void ptc__run_on_frame(struct ptc_run *run, const struct ptc_frame *frame);
void ptc__run_on_output(struct ptc_run *run, const char *text, size_t len);
/* The environment failed while the run used it (protocol, lost control, process exit). */
void ptc__run_on_env_failed(struct ptc_run *run, const char *kind, const char *message);
/* The environment is closed (quiescent and drained, or cleanup failed). */
void ptc__run_on_env_closed(struct ptc_run *run, int status);

/* run_frames.c */
void ptc__run_send_program(struct ptc_run *run);
/* result.c: the result JSON (transfer full) */
char *ptc__run_result_json(struct ptc_run *run, size_t *ret_len);

/* owners.c: retained environments by owner, release and policy changes */
struct ptc_env *ptc__owners_find(struct dsh_instance *inst, const char *owner);
/* Environments of owner that are closing (invalidated or stopped) and block a new one. */
struct ptc_env *ptc__owners_find_closing(struct dsh_instance *inst, const char *owner);
int ptc__owners_subscribe(struct dsh_instance *inst);
void ptc__owners_unsubscribe(struct dsh_instance *inst);
int ptc__owners_release(struct dsh_instance *inst, const char *owner, dsh_released_fn fn, void *userdata,
                        struct dsh_error *err);

#endif

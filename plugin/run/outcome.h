/* One run (its body is private to run/; the run layer's unit tests read it too) and the
 * functions of outcome.c.
 *
 *   WAITING (for an owner's old environment to close) -> STARTING (environment starting)
 *     -> RUNNING (program submitted) -> [STOPPING: revoke sent, stopGraceMs] -> FINISHING
 *
 * Selecting an outcome stops the deadline. A temporary environment is then terminated and the
 * result waits until nothing of its range can run (frozen, else quiescent); a retained environment stays (ok, exception) or is asked to revoke
 * (timeout, abort) and is terminated when it does not acknowledge within stopGraceMs. */
#ifndef PTC_OUTCOME_H
#define PTC_OUTCOME_H

#include "ledger.h"
#include "ptc_runs.h"
#include "spec.h"

enum ptc_phase { PTC_RUN_WAITING, PTC_RUN_STARTING, PTC_RUN_RUNNING, PTC_RUN_STOPPING, PTC_RUN_FINISHING };

struct ptc_open_call {
    uint64_t id;
    size_t arg_bytes;
};

/* A run's deadline and stop-grace timer. A finished run leaves it to the next run: a timerfd of
 * its own and its epoll registration cost every run four system calls. Written by outcome.c. */
struct ptc_run_timer {
    struct ptc_timer timer;
    struct ptc_run *run; /* NULL while spare: a spare's stale expiration is ignored */
    bool armed;          /* set since the last disarm: disarming an idle timer costs nothing */
    struct ptc_run_timer *next_spare;
};

struct ptc_run {
    struct ptc_run *next;
    struct ptc_runs *runs;
    struct ptc_host *host;
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
    struct ptc_strip_request *strip; /* the stripper's answer is awaited (env/stripper.h) */
    bool ready_for_program; /* the environment became ready while the answer was awaited */
    char *stripped;    /* the program as the stripper blanked it, checked; NULL: the child strips */
    size_t stripped_len;
    char *strip_refusal; /* the stripper's syntax error for the program; NULL: none */
    size_t strip_refusal_len;

    struct ptc_open_call *calls;
    size_t n_calls, cap_calls;
    uint64_t open_arg_bytes;
    struct ptc_ledger ledger;
    /* The deadline until an outcome is selected, then the stop grace (they never overlap):
     * one timer, so a run costs at most one timerfd, and none when a spare is left. */
    struct ptc_run_timer *timer;

    bool outcome_selected;
    bool terminal_seen;
    enum ptc_failure kind; /* PTC_FAILURE_NONE = ok */
    char *message;
    bool has_value;
    char *value; /* the completion's JSON text (NUL-terminated) */
    size_t value_len;
    const char *retained_state; /* "preserved" | "cleared" | NULL */
    const char *released_reason; /* the owner's earlier environment was released on its own, or NULL */
    char *released_message;
    struct ptc_deferred finish_call; /* the delivery, queued once the outcome is settled */
};

struct ptc_run *ptc__run_find(struct ptc_runs *runs, dsh_run_id id);
/* Selects the outcome once: kind (PTC_FAILURE_NONE = ok) and a formatted message. */
void ptc__run_select(struct ptc_run *run, enum ptc_failure kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Replaces a selected outcome with a protocol failure (nothing may follow a terminal frame). */
void ptc__run_override_protocol(struct ptc_run *run, const char *message);
void ptc__run_schedule_finish(struct ptc_run *run);
/* Abort before the result: the host cancelled, released the owner or the instance unloads. */
int ptc__run_cancel(struct ptc_run *run, const char *reason);
/* Gives run a timer calling fn: a spare one (disarmed) or a new one. */
int ptc__run_timer_take(struct ptc_run *run, void (*fn)(struct ptc_timer *));
/* The run a timer serves, or NULL for a spare whose old deadline expired. */
struct ptc_run *ptc__run_timer_owner(struct ptc_timer *timer);
/* Arms (delay_ms > 0) or disarms (0) the run's timer. */
void ptc__run_timer_arm(struct ptc_run *run, uint64_t delay_ms);
/* Frees a run that delivered its result, or one refused at admission; its timer becomes a spare. */
void ptc__run_destroy(struct ptc_run *run);
/* Closes the spare timers (the instance unloads). */
void ptc__run_timers_close(struct ptc_runs *runs);

#endif

/* A run's outcome: selected once (the deadline stops), then the environment is kept, asked to
 * revoke or terminated, and the result is delivered exactly once through on_done. */
#include "outcome.h"
#include "result.h"
#include "dsh_list.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ptc_run *ptc__run_find(struct ptc_runs *runs, dsh_run_id id)
{
    for (struct ptc_run *run = runs->head; run; run = run->next)
        if (run->id == id)
            return run;
    return NULL;
}

static void stop_waiting(struct ptc_run *run)
{
    struct ptc_env *old = run->waiting_for;
    if (!old)
        return;
    run->waiting_for = NULL;
    ptc__env_cancel_wait(old, run);
    ptc__env_unref(old);
}

/* Spares kept at most: sequential runs need one; more would be fds kept after a burst of
 * concurrent runs (tests/soak holds the host's fd count steady). */
#define SPARE_TIMERS_MAX 1

int ptc__run_timer_take(struct ptc_run *run, void (*fn)(struct ptc_timer *))
{
    struct ptc_runs *runs = run->runs;
    struct ptc_run_timer *t = runs->spare_timers;
    if (t) {
        runs->spare_timers = t->next_spare;
        runs->n_spare_timers--;
    } else {
        t = calloc(1, sizeof *t);
        if (!t)
            return -ENOMEM;
        int rc = ptc__timer_init(&run->host->loop, &t->timer, fn);
        if (rc < 0) {
            free(t);
            return rc;
        }
    }
    t->run = run;
    t->next_spare = NULL;
    run->timer = t;
    ptc__run_timer_arm(run, 0); /* a spare may still hold its last run's stop grace */
    return 0;
}

struct ptc_run *ptc__run_timer_owner(struct ptc_timer *timer)
{
    return ptc__container_of(timer, struct ptc_run_timer, timer)->run;
}

void ptc__run_timer_arm(struct ptc_run *run, uint64_t delay_ms)
{
    struct ptc_run_timer *t = run->timer;
    if (!delay_ms && !t->armed)
        return;
    t->armed = delay_ms > 0;
    ptc__timer_arm(&t->timer, delay_ms);
}

static void release_timer(struct ptc_run *run)
{
    struct ptc_run_timer *t = run->timer;
    struct ptc_runs *runs = run->runs;
    if (!t)
        return;
    run->timer = NULL;
    t->run = NULL;
    if (runs->n_spare_timers >= SPARE_TIMERS_MAX) {
        ptc__timer_destroy(&run->host->loop, &t->timer);
        free(t);
        return;
    }
    t->next_spare = runs->spare_timers;
    runs->spare_timers = t;
    runs->n_spare_timers++;
}

void ptc__run_timers_close(struct ptc_runs *runs)
{
    while (runs->spare_timers) {
        struct ptc_run_timer *t = runs->spare_timers;
        runs->spare_timers = t->next_spare;
        ptc__timer_destroy(&runs->host->loop, &t->timer);
        free(t);
    }
    runs->n_spare_timers = 0;
}

void ptc__run_destroy(struct ptc_run *run)
{
    stop_waiting(run);
    ptc__strip_cancel(run->strip);
    free(run->stripped);
    free(run->strip_refusal);
    if (run->env)
        ptc__env_unref(run->env);
    release_timer(run);
    ptc__ledger_destroy(&run->ledger);
    free(run->value);
    free(run->message);
    free(run->released_message);
    free(run->calls);
    ptc__spec_destroy(&run->spec);
    ptc__defer_cancel(&run->finish_call);
    free(run);
}

/* Settles kind and message from what was observed while closing: output that overflowed
 * replaces the program's own outcome, and a failure carries no value. */
static void settle_outcome(struct ptc_run *run)
{
    if (run->ledger.overflowed && ptc_outcome_by_program(run->kind)) {
        run->kind = PTC_FAILURE_OUTPUT_LIMIT;
        free(run->message);
        run->message = NULL;
        (void)!asprintf(&run->message, "output exceeded maxOutputBytes (%llu bytes)",
                        (unsigned long long)run->ledger.budget);
    }
    if (run->kind != PTC_FAILURE_NONE) {
        free(run->value);
        run->value = NULL;
        run->has_value = false;
    }
}

static char *result_json(struct ptc_run *run, size_t *ret_len, void **ret_block)
{
    settle_outcome(run);
    struct ptc_result result = {
        .kind = run->kind,
        .message = run->message,
        .value = run->value, /* taken over by ptc__result_json */
        .value_len = run->value_len,
        .has_value = run->has_value,
        .ledger = &run->ledger,
        .mode = run->spec.mode,
        .sandbox = run->host->services.sandbox,
        .confinement = run->env ? ptc__env_confinement(run->env) : NULL,
        .retained_owner = run->retained ? run->spec.state_owner : NULL,
        .retained_state = run->retained_state ? run->retained_state : "cleared",
        .released_reason = run->released_reason,
        .released_message = run->released_message,
    };
    run->value = NULL; /* ptc__result_json frees it */
    run->has_value = false;
    return ptc__result_json(&result, ret_len, ret_block);
}

static void finish(struct ptc_deferred *call)
{
    struct ptc_run *run = ptc__container_of(call, struct ptc_run, finish_call);
    if (run->env)
        ptc__env_detach(run->env, run);
    size_t len = 0;
    void *block = NULL;
    char *result = result_json(run, &len, &block);
    DSH_LIST_REMOVE(&run->runs->head, run);
    static const char fallback[] =
        "{\"ok\":false,\"error\":{\"kind\":\"worker-exit\",\"message\":\"out of memory\"},\"output\":[]}";
    if (result && run->cb.on_done_owned) {
        /* ABI 1.5: the host keeps the block; the text moves to its start (in place, no new pages). */
        if (result != block)
            memmove(block, result, len + 1);
        run->cb.on_done_owned(run->cb.userdata, run->id, block, len);
    } else {
        run->cb.on_done(run->cb.userdata, run->id, result ? result : fallback, result ? len : sizeof fallback - 1);
        free(block);
    }
    /* After delivery, so starting the next process never delays this result. */
    if (!run->retained && run->env)
        ptc__pool_refill(run->runs->pool, run->spec.policy);
    ptc__run_destroy(run);
}

void ptc__run_schedule_finish(struct ptc_run *run)
{
    run->phase = PTC_RUN_FINISHING;
    /* Deferred: a run is never freed inside a callback that still uses it. */
    ptc__defer(&run->host->loop, &run->finish_call, finish);
}

static bool settled_by_program(const struct ptc_run *run)
{
    return run->terminal_seen && ptc_outcome_by_program(run->kind);
}

static void keep_environment(struct ptc_run *run)
{
    ptc__env_detach(run->env, run);
    run->retained_state = "preserved";
    ptc__run_schedule_finish(run);
}

static void send_revoke(struct ptc_run *run)
{
    json_object *frame = ptc__frame_for_run(PTC_FRAME_REVOKE, run->wire_id);
    int rc = ptc__env_send(run->env, frame);
    json_object_put(frame);
    run->phase = PTC_RUN_STOPPING;
    if (rc < 0)
        ptc__env_terminate(run->env);
    else
        ptc__run_timer_arm(run, (uint64_t)run->host->config.stop_grace_ms);
}

static void close_after_outcome(struct ptc_run *run)
{
    struct ptc_env *env = run->env;
    if (!env) { /* still waiting for an owner's old environment */
        ptc__run_schedule_finish(run);
        return;
    }
    if (!run->retained) {
        /* Temporary environments end with their run; the result waits for `closed`: the range
         * frozen and its pipes read, or quiescent where it cannot be frozen. */
        ptc__env_terminate(env);
        return;
    }
    if (ptc__env_invalidated(env)) {
        /* A policy change: the next program waits for this cleanup, not this result. */
        ptc__env_terminate(env);
        ptc__env_detach(env, run);
        run->retained_state = "cleared";
        ptc__run_schedule_finish(run);
        return;
    }
    bool stop = run->kind == PTC_FAILURE_TIMEOUT || run->kind == PTC_FAILURE_ABORT;
    if ((settled_by_program(run) && !run->initializing) || run->refused_before_program) {
        keep_environment(run);
    } else if (stop && run->code_started && !run->initializing && ptc__env_state(env) == PTC_ENV_BUSY) {
        send_revoke(run);
    } else {
        /* Startup stops, initializer failures, protocol, output overflow, lost processes. */
        ptc__env_terminate(env);
    }
}

void ptc__run_select(struct ptc_run *run, enum ptc_failure kind, const char *fmt, ...)
{
    if (run->outcome_selected)
        return;
    run->outcome_selected = true;
    run->kind = kind;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&run->message, fmt, ap) < 0)
            run->message = NULL;
        va_end(ap);
    }
    /* The deadline stops when an outcome is selected, before cleanup; a stop reads what the
     * child still has to say (a revoked frame, the rest of its output) however slow the host. */
    ptc__run_timer_arm(run, 0);
    if (run->env)
        ptc__env_hold_reading(run->env, run, false);
    close_after_outcome(run);
}

void ptc__run_override_protocol(struct ptc_run *run, const char *message)
{
    if (!run->outcome_selected) {
        ptc__run_select(run, PTC_FAILURE_PROTOCOL, "%s", message);
        return;
    }
    run->kind = PTC_FAILURE_PROTOCOL;
    free(run->message);
    run->message = strdup(message);
    free(run->value);
    run->value = NULL;
    run->has_value = false;
}

int ptc__run_cancel(struct ptc_run *run, const char *reason)
{
    if (run->outcome_selected)
        return 0;
    ptc__run_select(run, PTC_FAILURE_ABORT, "execution aborted %s%s%s",
                    run->code_started ? "during execution" : "before code started",
                    reason && *reason ? ": " : "", reason && *reason ? reason : "");
    return 0;
}

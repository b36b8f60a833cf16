/* Run lifecycle: admission into a temporary or retained environment, the deadline, outcome
 * selection, cooperative stop of retained work, and delivery of the result exactly once.
 * Frames of the evaluation are handled in run_frames.c, the result shape in result.c. */
#include "run.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ptc_run *ptc__run_find(struct dsh_instance *inst, dsh_run_id id)
{
    for (struct ptc_run *run = inst->runs; run; run = run->next)
        if (run->id == id)
            return run;
    return NULL;
}

static void on_deadline(struct ptc_timer *timer)
{
    struct ptc_run *run = ptc__container_of(timer, struct ptc_run, deadline);
    ptc__run_select(run, "timeout", "execution timed out %s (%lld ms)",
                    run->code_started ? "during execution" : "before code started",
                    (long long)run->spec.timeout_ms);
}

static void on_stop_grace(struct ptc_timer *timer)
{
    struct ptc_run *run = ptc__container_of(timer, struct ptc_run, stop_grace);
    /* No acknowledgment (a synchronous loop, or a failed revoke): terminate and lose the state. */
    if (run->env)
        ptc__env_terminate(run->env, NULL);
}

/* ---- delivery ---------------------------------------------------------------------------- */

static void on_old_env_closed(void *arg, int status);

/* Ends the wait for the owner's previous environment (it closed, or this run is going away). */
static void stop_waiting(struct ptc_run *run)
{
    struct ptc_env *old = run->waiting_for;
    if (!old)
        return;
    run->waiting_for = NULL;
    ptc__env_cancel_wait(old, on_old_env_closed, run);
    ptc__env_unref(old);
}

static void destroy_run(struct ptc_run *run)
{
    struct dsh_instance *inst = run->inst;
    stop_waiting(run);
    if (run->env)
        ptc__env_unref(run->env);
    ptc__timer_destroy(&inst->loop, &run->deadline);
    ptc__timer_destroy(&inst->loop, &run->stop_grace);
    ptc__ledger_destroy(&run->ledger);
    json_object_put(run->value);
    free(run->message);
    free(run->calls);
    ptc__spec_destroy(&run->spec);
    ptc__defer_cancel(&inst->loop, run);
    free(run);
}

static void finish(void *arg)
{
    struct ptc_run *run = arg;
    struct dsh_instance *inst = run->inst;
    if (run->env && run->env->run == run)
        run->env->run = NULL;
    size_t len = 0;
    char *result = ptc__run_result_json(run, &len);
    for (struct ptc_run **link = &inst->runs; *link; link = &(*link)->next)
        if (*link == run) {
            *link = run->next;
            break;
        }
    static const char fallback[] =
        "{\"ok\":false,\"error\":{\"kind\":\"worker-exit\",\"message\":\"out of memory\"},\"output\":[]}";
    run->cb.on_done(run->cb.userdata, run->id, result ? result : fallback, result ? len : sizeof fallback - 1);
    free(result);
    destroy_run(run);
}

void ptc__run_schedule_finish(struct ptc_run *run)
{
    if (run->finish_scheduled)
        return;
    run->finish_scheduled = true;
    run->phase = PTC_RUN_FINISHING;
    /* Deferred: a run is never freed inside a callback that still uses it. */
    if (ptc__defer(&run->inst->loop, finish, run) < 0)
        run->finish_scheduled = false;
}

/* ---- outcome -------------------------------------------------------------------------------- */

static bool settled_by_program(const struct ptc_run *run)
{
    return run->terminal_seen && (!run->kind || strcmp(run->kind, "exception") == 0 ||
                                  strcmp(run->kind, "invalid-output") == 0);
}

/* Keeps a retained environment for its owner's next run. */
static void keep_environment(struct ptc_run *run)
{
    struct ptc_env *env = run->env;
    env->run = NULL;
    if (env->state == PTC_ENV_BUSY)
        env->state = PTC_ENV_IDLE;
    run->retained_state = "preserved";
    ptc__run_schedule_finish(run);
}

static void send_revoke(struct ptc_run *run)
{
    json_object *frame = json_object_new_object();
    json_object_object_add(frame, "type", json_object_new_string("revoke"));
    json_object_object_add(frame, "run", json_object_new_int64((int64_t)run->wire_id));
    int rc = ptc__env_send(run->env, frame);
    json_object_put(frame);
    run->phase = PTC_RUN_STOPPING;
    if (rc < 0)
        ptc__env_terminate(run->env, NULL);
    else
        ptc__timer_arm(&run->stop_grace, (uint64_t)run->inst->config.stop_grace_ms);
}

static void close_after_outcome(struct ptc_run *run)
{
    struct ptc_env *env = run->env;
    if (!env) { /* still waiting for an owner's old environment */
        ptc__run_schedule_finish(run);
        return;
    }
    if (!run->retained) {
        /* Temporary environments end with their run; the result waits for quiescence. */
        ptc__env_terminate(env, NULL);
        return;
    }
    if (env->invalidated) {
        /* A policy change: the next program waits for this cleanup, not this result. */
        ptc__env_terminate(env, NULL);
        env->run = NULL;
        run->retained_state = "cleared";
        ptc__run_schedule_finish(run);
        return;
    }
    bool stop = run->kind && (strcmp(run->kind, "timeout") == 0 || strcmp(run->kind, "abort") == 0);
    if ((settled_by_program(run) && !run->initializing) || run->refused_before_program) {
        keep_environment(run);
    } else if (stop && run->code_started && !run->initializing && env->state == PTC_ENV_BUSY) {
        send_revoke(run);
    } else {
        /* Startup stops, initializer failures, protocol, output overflow, lost processes. */
        ptc__env_terminate(env, NULL);
    }
}

void ptc__run_select(struct ptc_run *run, const char *kind, const char *fmt, ...)
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
    /* The timer stops when an outcome is selected, before cleanup. */
    ptc__timer_arm(&run->deadline, 0);
    close_after_outcome(run);
}

void ptc__run_override_protocol(struct ptc_run *run, const char *message)
{
    if (!run->outcome_selected) {
        ptc__run_select(run, "protocol", "%s", message);
        return;
    }
    run->kind = "protocol";
    free(run->message);
    run->message = strdup(message);
    json_object_put(run->value);
    run->value = NULL;
    run->has_value = false;
}

/* ---- environment events ------------------------------------------------------------------- */

void ptc__run_on_env_ready(struct ptc_run *run)
{
    if (run->outcome_selected)
        return;
    run->phase = PTC_RUN_RUNNING;
    run->env->state = PTC_ENV_BUSY;
    ptc__run_send_program(run);
}

void ptc__run_on_env_failed(struct ptc_run *run, const char *kind, const char *message)
{
    if (run->phase == PTC_RUN_STOPPING) {
        ptc__timer_arm(&run->stop_grace, 0);
        return; /* stays timeout/abort; the closure reports the state as cleared */
    }
    ptc__run_select(run, kind, "%s", message);
}

void ptc__run_on_env_closed(struct ptc_run *run, int status)
{
    if (!run->outcome_selected) {
        char *why = ptc__env_exit_description(run->env);
        ptc__run_select(run, "worker-exit", "%s", why ? why : "the Node process exited");
        free(why);
    }
    if (status < 0) {
        run->kind = "worker-exit";
        free(run->message);
        run->message = strdup("managed cleanup failed: the process range could not be observed; "
                              "release the owner to retry");
    }
    if (run->retained)
        run->retained_state = "cleared";
    ptc__timer_arm(&run->stop_grace, 0);
    ptc__run_schedule_finish(run);
}

/* ---- admission ------------------------------------------------------------------------------ */

void ptc__run_attach(struct ptc_run *run, struct ptc_env *env)
{
    run->env = env;
    ptc__env_ref(env);
    env->run = run;
    run->wire_id = ++env->runs_sent;
    run->phase = PTC_RUN_STARTING;
    if (env->state == PTC_ENV_IDLE)
        ptc__run_on_env_ready(run);
}

static void start_in_new_env(struct ptc_run *run)
{
    struct dsh_instance *inst = run->inst;
    const char *owner = run->retained ? run->spec.state_owner : NULL;
    struct ptc_env *env = ptc__env_create(inst, &run->spec, owner, inst->program_format, run->retained);
    if (!env) {
        ptc__run_select(run, "worker-exit", "out of memory");
        return;
    }
    ptc__run_attach(run, env);
}

static void on_old_env_closed(void *arg, int status)
{
    struct ptc_run *run = arg;
    /* The environment drops this waiter itself once it has called it. */
    if (run->waiting_for) {
        ptc__env_unref(run->waiting_for);
        run->waiting_for = NULL;
    }
    if (run->outcome_selected)
        return;
    if (status < 0) {
        ptc__run_select(run, "worker-exit",
                        "cleanup of the owner's previous environment failed; release the owner to retry");
        return;
    }
    start_in_new_env(run);
}

static bool same_identity(const struct ptc_env *env, const struct ptc_spec *spec)
{
    json_object *v;
    const char *root = json_object_object_get_ex(spec->policy, "workspaceRoot", &v) ? json_object_get_string(v) : "";
    const char *session = json_object_object_get_ex(spec->policy, "sessionId", &v) ? json_object_get_string(v) : "";
    return strcmp(env->mode, spec->mode) == 0 && strcmp(env->workspace_root, root) == 0 &&
           strcmp(env->session_id, session) == 0;
}

static int admit(struct ptc_run *run, struct dsh_error *err)
{
    struct dsh_instance *inst = run->inst;
    if (!run->retained) {
        start_in_new_env(run);
        return 0;
    }
    const char *owner = run->spec.state_owner;
    for (struct ptc_run *other = inst->runs; other; other = other->next)
        if (other != run && other->retained && strcmp(other->spec.state_owner, owner) == 0)
            return ptc__fail(err, DSH_E_OWNER_BUSY, "state owner \"%s\" has a run or cleanup in progress", owner);
    struct ptc_env *env = ptc__owners_find(inst, owner);
    if (env) {
        if (env->cleanup_failed)
            return ptc__fail(err, DSH_E_OWNER_BUSY,
                             "cleanup of state owner \"%s\" failed; release it before running again", owner);
        if (!same_identity(env, &run->spec))
            return ptc__fail(err, DSH_E_OWNER_INCONSISTENT,
                             "state owner \"%s\" is bound to mode %s, workspace %s and session \"%s\"; release it first",
                             owner, env->mode, env->workspace_root, env->session_id);
        ptc__run_attach(run, env);
        return 0;
    }
    struct ptc_env *closing = ptc__owners_find_closing(inst, owner);
    if (closing) {
        if (closing->cleanup_failed)
            return ptc__fail(err, DSH_E_OWNER_BUSY,
                             "cleanup of state owner \"%s\" failed; release it before running again", owner);
        run->phase = PTC_RUN_WAITING;
        int rc = ptc__env_wait_closed(closing, on_old_env_closed, run);
        if (rc == 0) {
            ptc__env_ref(closing);
            run->waiting_for = closing;
        }
        return rc;
    }
    start_in_new_env(run);
    return 0;
}

/* Upper bound of the run frame's size: the escaped spec plus the frame's own fields. */
static size_t run_frame_estimate(const struct ptc_spec *spec)
{
    const char *text = json_object_to_json_string_ext(spec->root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    return strlen(text) + 256;
}

int ptc__run_start(struct dsh_instance *inst, const char *spec_json, size_t spec_len,
                   const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run, struct dsh_error *err)
{
    if (!callbacks || !callbacks->on_done || !callbacks->on_call)
        return ptc__fail(err, -EINVAL, "run needs on_call and on_done callbacks");
    if (callbacks->struct_size < offsetof(struct dsh_run_callbacks, on_output))
        return ptc__fail(err, -EINVAL, "the run callbacks' struct_size is smaller than ABI 1.0's");
    struct ptc_run *run = calloc(1, sizeof *run);
    if (!run)
        return ptc__fail(err, -ENOMEM, "out of memory");
    int rc = ptc__spec_parse(spec_json, spec_len, &run->spec, err);
    if (rc == 0 && (rc = ptc__check_cwd(inst, run->spec.cwd, err)) < 0)
        ptc__spec_destroy(&run->spec);
    if (rc < 0) {
        free(run);
        return rc;
    }
    if (run_frame_estimate(&run->spec) > (uint64_t)inst->config.max_message_bytes) {
        ptc__spec_destroy(&run->spec);
        free(run);
        return ptc__fail(err, DSH_E_LIMIT, "the program does not fit in maxMessageBytes");
    }
    run->inst = inst;
    /* A 1.0 host's table ends before on_output: copy only what it has. */
    memcpy(&run->cb, callbacks, callbacks->struct_size < sizeof run->cb ? callbacks->struct_size : sizeof run->cb);
    run->retained = inst->retains_state && run->spec.state_owner;
    ptc__ledger_init(&run->ledger, (uint64_t)inst->config.max_output_bytes);
    if ((rc = ptc__timer_init(&inst->loop, &run->deadline, on_deadline)) < 0 ||
        (rc = ptc__timer_init(&inst->loop, &run->stop_grace, on_stop_grace)) < 0) {
        ptc__timer_destroy(&inst->loop, &run->deadline);
        ptc__ledger_destroy(&run->ledger);
        ptc__spec_destroy(&run->spec);
        free(run);
        return ptc__fail(err, rc, "cannot create timers: %s", dsh_strerror(rc));
    }
    run->next = inst->runs;
    inst->runs = run;
    if ((rc = admit(run, err)) < 0) {
        inst->runs = run->next;
        destroy_run(run);
        return rc;
    }
    run->id = ++inst->next_run_id;
    inst->admitted_any = true;
    *ret_run = run->id;
    /* The deadline starts now and covers setup, launch and every binding wait. */
    if (run->spec.has_timeout && !run->outcome_selected)
        ptc__timer_arm(&run->deadline, (uint64_t)run->spec.timeout_ms);
    return 0;
}

int ptc__run_cancel(struct ptc_run *run, const char *reason)
{
    if (run->outcome_selected)
        return 0;
    ptc__run_select(run, "abort", "execution aborted %s%s%s",
                    run->code_started ? "during execution" : "before code started",
                    reason && *reason ? ": " : "", reason && *reason ? reason : "");
    return 0;
}

/* Run lifecycle: admission, confinement, spawn, outcome selection, closing and delivery.
 * Frame and pipe handling live in run_io.c, the result shape in result.c. */
#include "run.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static void schedule_finish(struct ptc_run *run);

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

static void on_drain_timeout(struct ptc_timer *timer)
{
    struct ptc_run *run = ptc__container_of(timer, struct ptc_run, drain);
    /* Pipes still open after the range is gone and graceMs passed: deliver what we have. */
    schedule_finish(run);
}

static void begin_close(struct ptc_run *run)
{
    const struct dsh_subprocess_service *sp = run->inst->services.subprocess;
    run->phase = PTC_CLOSING;
    if (run->confine_pending) {
        /* A late provider must not start the program: drop the pending confinement. */
        const struct dsh_sandbox_service *sb = run->inst->services.sandbox;
        if (sb->cancel_confine(sb->ctx, run->confine_op) == 0)
            run->confine_pending = false;
        /* else on_confined is still coming and releases the confinement itself */
    }
    if (run->process && !run->quiescent) {
        /* Per-call outcomes terminate the managed range at once. */
        int rc = sp->terminate(sp->ctx, run->process, 0);
        if (rc < 0) {
            run->cleanup_failed = true;
            schedule_finish(run);
        }
        return;
    }
    if (!run->confine_pending)
        schedule_finish(run);
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
    begin_close(run);
}

static void start_process(struct ptc_run *run)
{
    struct dsh_instance *inst = run->inst;
    char **launch_env = run->launch_env;
    struct dsh_error err = {0};
    size_t n_conf = 0, n_launch = 0;
    while (run->confinement->env[n_conf])
        n_conf++;
    while (launch_env[n_launch])
        n_launch++;
    const char **env = calloc(n_conf + n_launch + 1, sizeof *env);
    if (!env) {
        ptc__run_select(run, "worker-exit", "out of memory");
        return;
    }
    memcpy(env, run->confinement->env, n_conf * sizeof *env);
    memcpy(env + n_conf, launch_env, n_launch * sizeof *env);
    struct dsh_spawn_request request = {
        .struct_size = sizeof request,
        .argv = run->confinement->argv,
        .env = env,
        .cwd = run->spec.cwd,
    };
    const struct dsh_subprocess_service *sp = inst->services.subprocess;
    int rc = sp->spawn(sp->ctx, &request, &run->process, &err);
    free(env);
    if (rc < 0) {
        run->process = NULL;
        ptc__run_select(run, "worker-exit", "the process could not be started: %s",
                        err.message[0] ? err.message : dsh_strerror(rc));
        return;
    }
    if (ptc__run_watch_process(run) < 0) {
        ptc__run_select(run, "worker-exit", "the process could not be observed");
        return;
    }
    run->phase = PTC_STARTING;
}

static void after_confined(void *arg)
{
    struct ptc_run *run = arg;
    if (run->outcome_selected) { /* cancelled or timed out while confining */
        schedule_finish(run);
        return;
    }
    if (run->confine_status < 0 || !run->confinement) {
        ptc__run_select(run, "sandbox-unavailable", "the sandbox could not confine the program: %s",
                        dsh_strerror(run->confine_status ? run->confine_status : DSH_E_SANDBOX_UNAVAILABLE));
        return;
    }
    start_process(run);
}

static void on_confined(void *userdata, int status, struct dsh_confinement *confinement)
{
    struct ptc_run *run = userdata;
    run->confine_pending = false;
    run->confine_status = status;
    run->confinement = confinement;
    /* Possibly called from inside confine(): continue from the loop, never re-entrantly. */
    if (ptc__defer(&run->inst->loop, after_confined, run) < 0)
        ptc__run_select(run, "worker-exit", "out of memory");
}

static int begin_confinement(struct ptc_run *run)
{
    char **argv = NULL, **env = NULL;
    struct dsh_error err = {0};
    if (ptc__launch_argv(run->inst, &argv, &env, &err) < 0) {
        ptc__run_select(run, "worker-exit", "the runtime could not be launched: %s", err.message);
        return 0;
    }
    run->launch_env = env;
    const char *policy = json_object_to_json_string_ext(run->spec.policy, JSON_C_TO_STRING_PLAIN);
    const struct dsh_sandbox_service *sb = run->inst->services.sandbox;
    run->confine_pending = true;
    int rc = sb->confine(sb->ctx, (const char *const *)argv, policy, strlen(policy), on_confined, run,
                         &run->confine_op);
    ptc__argv_free(argv);
    if (rc < 0) {
        run->confine_pending = false;
        ptc__run_select(run, "sandbox-unavailable", "the sandbox could not confine the program: %s",
                        dsh_strerror(rc));
    }
    return 0;
}

int ptc__run_start(struct dsh_instance *inst, const char *spec_json, size_t spec_len,
                   const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run, struct dsh_error *err)
{
    if (!callbacks || !callbacks->on_done || !callbacks->on_call)
        return ptc__fail(err, -EINVAL, "run needs on_call and on_done callbacks");
    struct ptc_run *run = calloc(1, sizeof *run);
    if (!run)
        return ptc__fail(err, -ENOMEM, "out of memory");
    int rc = ptc__spec_parse(spec_json, spec_len, &run->spec, err);
    if (rc < 0) {
        free(run);
        return rc;
    }
    if (strlen(run->spec.program) + 4096 > (uint64_t)inst->config.max_message_bytes) {
        ptc__spec_destroy(&run->spec);
        free(run);
        return ptc__fail(err, DSH_E_LIMIT, "the program does not fit in maxMessageBytes");
    }
    run->inst = inst;
    run->cb = *callbacks;
    run->id = ++inst->next_run_id;
    run->control.fd = -1;
    run->out.watch.fd = run->err.watch.fd = -1;
    ptc__ledger_init(&run->ledger, (uint64_t)inst->config.max_output_bytes);
    if ((rc = ptc__timer_init(&inst->loop, &run->deadline, on_deadline)) < 0 ||
        (rc = ptc__timer_init(&inst->loop, &run->drain, on_drain_timeout)) < 0) {
        ptc__timer_destroy(&inst->loop, &run->deadline);
        ptc__ledger_destroy(&run->ledger);
        ptc__spec_destroy(&run->spec);
        free(run);
        return ptc__fail(err, rc, "cannot create timers: %s", dsh_strerror(rc));
    }
    run->next = inst->runs;
    inst->runs = run;
    *ret_run = run->id;
    /* The deadline starts now and covers setup, launch and every binding wait. */
    if (run->spec.has_timeout)
        ptc__timer_arm(&run->deadline, (uint64_t)run->spec.timeout_ms);
    return begin_confinement(run);
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

/* ---- delivery ---------------------------------------------------------------------------- */

static void destroy_run(struct ptc_run *run)
{
    struct dsh_instance *inst = run->inst;
    ptc__timer_destroy(&inst->loop, &run->deadline);
    ptc__timer_destroy(&inst->loop, &run->drain);
    ptc__watch_remove(&inst->loop, &run->control_watch);
    ptc__control_destroy(&run->control);
    ptc__run_pipe_close(run, &run->out);
    ptc__run_pipe_close(run, &run->err);
    ptc__watch_remove(&inst->loop, &run->quiescence_watch);
    if (run->process) {
        const struct dsh_subprocess_service *sp = inst->services.subprocess;
        sp->release(sp->ctx, run->process); /* kills and waits if somehow not quiescent */
    }
    if (run->confinement) {
        const struct dsh_sandbox_service *sb = inst->services.sandbox;
        sb->release_confinement(sb->ctx, run->confinement);
    }
    ptc__ledger_destroy(&run->ledger);
    ptc__argv_free(run->launch_env);
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
    if (run->confine_pending) {
        /* The provider refused to drop the confinement; wait for on_confined. */
        run->finish_scheduled = false;
        return;
    }
    size_t len = 0;
    char *result = ptc__run_result_json(run, &len);
    for (struct ptc_run **link = &inst->runs; *link; link = &(*link)->next)
        if (*link == run) {
            *link = run->next;
            break;
        }
    static const char fallback[] =
        "{\"ok\":false,\"error\":{\"kind\":\"worker-exit\",\"message\":\"out of memory\"},\"output\":[]}";
    run->cb.on_done(run->cb.userdata, run->id, result ? result : fallback,
                    result ? len : sizeof fallback - 1);
    free(result);
    destroy_run(run);
}

static void schedule_finish(struct ptc_run *run)
{
    if (run->finish_scheduled)
        return;
    run->finish_scheduled = true;
    if (ptc__defer(&run->inst->loop, finish, run) < 0)
        run->finish_scheduled = false; /* retried on the next event */
}

void ptc__run_maybe_finish(struct ptc_run *run)
{
    if (!run->quiescent && !run->cleanup_failed)
        return;
    if (!run->outcome_selected) {
        /* The range ended without a result: early process exit. */
        ptc__run_select(run, "worker-exit", NULL);
    }
    if (run->cleanup_failed || (run->out.eof && run->err.eof)) {
        schedule_finish(run);
        return;
    }
    ptc__timer_arm(&run->drain, (uint64_t)run->inst->config.grace_ms);
}

/* Runs: admission into a temporary or an owner's retained environment (or waiting for the
 * owner's previous one to close), the deadline and stop grace, and the environment's events.
 * Outcome selection and delivery are in outcome.c, the evaluation's frames in run_frames.c. */
#include "ptc_run.h"
#include "outcome.h"
#include "run_frames.h"
#include "owners.h"
#include "env_start.h"
#include "type_marks.h"
#include "dsh_list.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ptc__runs_init(struct ptc_runs *runs, struct ptc_host *host, struct ptc_envs *envs, struct ptc_pool *pool,
                    struct ptc_strippers *strippers, const char *program_format, bool retains_state,
                    struct ptc_runs_source source)
{
    *runs = (struct ptc_runs){
        .host = host,
        .envs = envs,
        .pool = pool,
        .strippers = strippers,
        .program_format = program_format,
        .retains_state = retains_state,
        .source = source,
    };
}

bool ptc__runs_active(const struct ptc_runs *runs)
{
    return runs->head != NULL;
}

void ptc__runs_cancel_all(struct ptc_runs *runs, const char *reason)
{
    for (struct ptc_run *run = runs->head; run; run = run->next)
        ptc__run_cancel(run, reason);
}

void ptc__runs_destroy(struct ptc_runs *runs)
{
    ptc__run_timers_close(runs);
}

static void on_timer(struct ptc_timer *timer)
{
    struct ptc_run *run = ptc__run_timer_owner(timer);
    if (!run)
        return; /* a spare's stale deadline */
    if (!run->outcome_selected) { /* the deadline */
        ptc__run_select(run, PTC_FAILURE_TIMEOUT, "execution timed out %s (%lld ms)",
                        run->code_started ? "during execution" : "before code started",
                        (long long)run->spec.timeout_ms);
        return;
    }
    /* The stop grace ended without acknowledgment (a synchronous loop, or a failed revoke):
     * terminate and lose the state. */
    if (run->env)
        ptc__env_terminate(run->env);
}

/* ---- environment events ------------------------------------------------------------------- */

static void on_env_ready(void *arg)
{
    struct ptc_run *run = arg;
    if (run->outcome_selected)
        return;
    /* The program goes out with the answer. A retained run waits for it even while the stripper
     * starts: a strip in the owner's process would keep amaro loaded there for good. */
    if (run->strip && (run->retained || ptc__strip_imminent(run->strip))) {
        run->ready_for_program = true;
        return;
    }
    /* A stripper still starting (the first run of a session) would be slower than a temporary
     * child's own strip: the child strips this program. */
    ptc__strip_cancel(run->strip);
    run->strip = NULL;
    run->phase = PTC_RUN_RUNNING;
    ptc__run_send_program(run);
}

/* The stripper's answer (env/stripper.h); the run frame waits for it. */
static void on_stripped(void *arg, enum ptc_strip_answer answer, const char *text, size_t len)
{
    struct ptc_run *run = arg;
    run->strip = NULL;
    if (run->outcome_selected)
        return;
    if (answer == PTC_STRIP_ANSWER_REFUSED) {
        ptc__run_select(run, PTC_FAILURE_PROTOCOL, "%s", text);
        return;
    }
    if (answer == PTC_STRIP_ANSWER_CODE) {
        run->stripped = strndup(text, len); /* out of memory: the child strips */
        run->stripped_len = len;
    } else if (answer == PTC_STRIP_ANSWER_SYNTAX_ERROR) {
        run->strip_refusal = strndup(text, len); /* out of memory: the child strips */
        run->strip_refusal_len = len;
    }
    if (run->ready_for_program)
        on_env_ready(run);
}

static void on_env_failed(void *arg, enum ptc_failure kind, const char *message)
{
    struct ptc_run *run = arg;
    /* Nothing may follow a terminal frame: a violation after it replaces the program's outcome. */
    if (run->terminal_seen && kind == PTC_FAILURE_PROTOCOL) {
        ptc__run_override_protocol(run, message);
        return;
    }
    if (run->phase == PTC_RUN_STOPPING) {
        ptc__run_timer_arm(run, 0);
        return; /* stays timeout/abort; the closure reports the state as cleared */
    }
    ptc__run_select(run, kind, "%s", message);
}

static void on_env_trailing(void *arg)
{
    struct ptc_run *run = arg;
    if (run->terminal_seen)
        ptc__run_override_protocol(run, "control frame after the result");
}

static void on_env_closed(void *arg, int status)
{
    struct ptc_run *run = arg;
    if (!run->outcome_selected) {
        char *why = ptc__env_exit_description(run->env);
        ptc__run_select(run, PTC_FAILURE_WORKER_EXIT, "%s", why ? why : "the Node process exited");
        free(why);
    }
    if (status < 0) {
        run->kind = PTC_FAILURE_WORKER_EXIT;
        free(run->message);
        run->message = strdup("managed cleanup failed: the process range could not be observed; "
                              "release the owner to retry");
    }
    if (run->retained)
        run->retained_state = "cleared";
    ptc__run_timer_arm(run, 0);
    ptc__run_schedule_finish(run);
}

static const struct ptc_env_events env_events = {
    .ready = on_env_ready,
    .frame = ptc__run_on_frame,
    .output = ptc__run_on_output,
    .failed = on_env_failed,
    .trailing = on_env_trailing,
    .closed = on_env_closed,
};

/* ---- admission ------------------------------------------------------------------------------ */

static void attach(struct ptc_run *run, struct ptc_env *env)
{
    run->env = env;
    ptc__env_ref(env);
    bool ready = false;
    run->wire_id = ptc__env_attach(env, &env_events, run, &ready);
    run->phase = PTC_RUN_STARTING;
    if (ready)
        on_env_ready(run);
}

/* Asks the session's stripper to strip the run's program; the run frame then waits for the
 * answer (on_env_ready). */
static void request_strip(struct ptc_run *run)
{
    struct ptc_runs *runs = run->runs;
    if (runs->strippers)
        run->strip = ptc__strip_request(runs->strippers, ptc__spec_policy_string(&run->spec, "sessionId"),
                                        runs->program_format, run->spec.program, on_stripped, run);
}

/* A retained run's program may need its types stripped when it has a mark of TypeScript
 * (base/type_marks.h). Without one the owner runs it as it is (bootstrap/plain-javascript.js) and
 * no round trip is worth it; a program the owner's parser refuses then is stripped there. The
 * owner decides again on the whole text, so a NUL byte that ends this scan early costs only the
 * in-process strip. */
static bool may_need_stripping(const char *program)
{
    return ptc__program_may_have_types(program, strlen(program));
}

static void start_in_new_env(struct ptc_run *run)
{
    struct ptc_runs *runs = run->runs;
    const char *owner = run->retained ? run->spec.state_owner : NULL;
    /* A temporary run takes a prewarmed process confined by exactly its policy when one is pooled. */
    struct ptc_env *env = run->retained ? NULL : ptc__pool_take(runs->pool, run->spec.policy);
    /* A cold temporary process gets its program stripped while it starts, and so does a retained
     * one whose program may have types; a prewarmed one strips in its own process, where its
     * warm-up left amaro warm (bootstrap/README.md, "Where types are stripped"). */
    if (!env && (!run->retained || may_need_stripping(run->spec.program)))
        request_strip(run);
    if (!env)
        env = ptc__env_create(runs->envs, run->spec.policy, owner, runs->program_format, run->retained);
    if (!env) {
        ptc__run_select(run, PTC_FAILURE_WORKER_EXIT, "out of memory");
        return;
    }
    attach(run, env);
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
        ptc__run_select(run, PTC_FAILURE_WORKER_EXIT,
                        "cleanup of the owner's previous environment failed; release the owner to retry");
        return;
    }
    start_in_new_env(run);
}

static bool same_identity(const struct ptc_env *env, const struct ptc_spec *spec)
{
    const struct ptc_env_identity *id = ptc__env_identity(env);
    return strcmp(id->mode, spec->mode) == 0 &&
           strcmp(id->workspace_root, ptc__spec_policy_string(spec, "workspaceRoot")) == 0 &&
           strcmp(id->session_id, ptc__spec_policy_string(spec, "sessionId")) == 0;
}

static int admit(struct ptc_run *run, struct dsh_error *err)
{
    struct ptc_runs *runs = run->runs;
    if (!run->retained) {
        start_in_new_env(run);
        return 0;
    }
    const char *owner = run->spec.state_owner;
    for (struct ptc_run *other = runs->head; other; other = other->next)
        if (other != run && other->retained && strcmp(other->spec.state_owner, owner) == 0)
            return ptc__fail(err, DSH_E_OWNER_BUSY, "state owner \"%s\" has a run or cleanup in progress", owner);
    struct ptc_env *env = ptc__envs_find_owned(runs->envs, owner, PTC_OWNED_CURRENT);
    if (env) {
        if (ptc__env_cleanup_failed(env))
            return ptc__fail(err, DSH_E_OWNER_BUSY,
                             "cleanup of state owner \"%s\" failed; release it before running again", owner);
        if (!same_identity(env, &run->spec)) {
            const struct ptc_env_identity *id = ptc__env_identity(env);
            return ptc__fail(err, DSH_E_OWNER_INCONSISTENT,
                             "state owner \"%s\" is bound to mode %s, workspace %s and session \"%s\"; release it first",
                             owner, id->mode, id->workspace_root, id->session_id);
        }
        if (may_need_stripping(run->spec.program))
            request_strip(run);
        attach(run, env);
        return 0;
    }
    struct ptc_env *closing = ptc__envs_find_owned(runs->envs, owner, PTC_OWNED_ENDING);
    if (closing && ptc__env_cleanup_failed(closing))
        return ptc__fail(err, DSH_E_OWNER_BUSY,
                         "cleanup of state owner \"%s\" failed; release it before running again", owner);
    /* A new environment for this owner: another one may have to make room (maxRetainedOwners). */
    int rc = ptc__owners_make_room(runs, owner, err);
    if (rc < 0)
        return rc;
    enum ptc_release_reason reason;
    if (ptc__owners_take_notice(runs, owner, &reason, &run->released_message))
        run->released_reason = ptc__release_reason_name(reason);
    if (closing) {
        run->phase = PTC_RUN_WAITING;
        rc = ptc__env_wait_closed(closing, on_old_env_closed, run);
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
    return strlen(ptc__frame_text(spec->root)) + 256;
}

int ptc__run_start(struct ptc_runs *runs, const char *spec_json, size_t spec_len,
                   const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run, struct dsh_error *err)
{
    struct ptc_host *host = runs->host;
    if (!callbacks || !callbacks->on_done || !callbacks->on_call)
        return ptc__fail(err, -EINVAL, "run needs on_call and on_done callbacks");
    if (callbacks->struct_size < offsetof(struct dsh_run_callbacks, on_output))
        return ptc__fail(err, -EINVAL, "the run callbacks' struct_size is smaller than ABI 1.0's");
    struct ptc_run *run = calloc(1, sizeof *run);
    if (!run)
        return ptc__fail(err, -ENOMEM, "out of memory");
    int rc = ptc__spec_parse(spec_json, spec_len, &run->spec, err);
    if (rc == 0 && (rc = ptc__check_cwd(host, run->spec.cwd, err)) < 0)
        ptc__spec_destroy(&run->spec);
    if (rc < 0) {
        free(run);
        return rc;
    }
    if (run_frame_estimate(&run->spec) > (uint64_t)host->config.max_message_bytes) {
        ptc__spec_destroy(&run->spec);
        free(run);
        return ptc__fail(err, DSH_E_LIMIT, "the program does not fit in maxMessageBytes");
    }
    run->runs = runs;
    run->host = host;
    /* A 1.0 host's table ends before on_output: copy only what it has. */
    memcpy(&run->cb, callbacks, callbacks->struct_size < sizeof run->cb ? callbacks->struct_size : sizeof run->cb);
    run->retained = runs->retains_state && run->spec.state_owner;
    ptc__ledger_init(&run->ledger, (uint64_t)host->config.max_output_bytes);
    if ((rc = ptc__run_timer_take(run, on_timer)) < 0) {
        ptc__ledger_destroy(&run->ledger);
        ptc__spec_destroy(&run->spec);
        free(run);
        return ptc__fail(err, rc, "cannot create a timer: %s", dsh_strerror(rc));
    }
    run->next = runs->head;
    runs->head = run;
    if ((rc = admit(run, err)) < 0) {
        DSH_LIST_REMOVE(&runs->head, run);
        ptc__run_destroy(run);
        return rc;
    }
    run->id = ++runs->next_id;
    runs->admitted_any = true;
    *ret_run = run->id;
    /* The deadline starts now and covers setup, launch and every binding wait. */
    if (run->spec.has_timeout && !run->outcome_selected)
        ptc__run_timer_arm(run, (uint64_t)run->spec.timeout_ms);
    return 0;
}


int ptc__runs_cancel(struct ptc_runs *runs, dsh_run_id id, const char *reason)
{
    struct ptc_run *run = ptc__run_find(runs, id);
    if (!run || run->outcome_selected)
        return DSH_E_NOT_FOUND;
    return ptc__run_cancel(run, reason);
}

int ptc__runs_pause_output(struct ptc_runs *runs, dsh_run_id id, bool paused)
{
    struct ptc_run *run = ptc__run_find(runs, id);
    if (!run || run->phase == PTC_RUN_FINISHING)
        return DSH_E_NOT_FOUND;
    /* Only a run whose process is reading for it and that has no outcome yet is held. */
    if (run->env)
        ptc__env_hold_reading(run->env, run, paused && !run->outcome_selected);
    return 0;
}

/* The result JSON of a run (DESIGN section 5 / host-abi/schemas/result.json). */
#include "frames.h"
#include "run.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *describe_exit(struct ptc_run *run)
{
    char status[64] = "";
    if (run->quiescent && run->exit_status.exited)
        snprintf(status, sizeof status, " (exit code %d)", run->exit_status.code);
    else if (run->quiescent && run->exit_status.signal)
        snprintf(status, sizeof status, " (signal %s)", sigabbrev_np(run->exit_status.signal)
                                                              ? sigabbrev_np(run->exit_status.signal)
                                                              : "unknown");
    const char *what = run->control_lost ? "the control channel closed before the result"
                                         : "the Node process exited before completing";
    char *text = NULL;
    if (run->stderr_tail_len)
        (void)!asprintf(&text, "%s%s; stderr: %.*s", what, status, (int)run->stderr_tail_len, run->stderr_tail);
    else
        (void)!asprintf(&text, "%s%s", what, status);
    return text;
}

/* Settles kind and message from what was observed while closing. */
static void settle_outcome(struct ptc_run *run)
{
    if (run->cleanup_failed) {
        run->kind = "worker-exit";
        free(run->message);
        run->message = strdup("managed cleanup failed: the process range could not be observed");
        return;
    }
    bool program_outcome = !run->kind || strcmp(run->kind, "exception") == 0 ||
                           strcmp(run->kind, "invalid-output") == 0;
    if (run->ledger.overflowed && program_outcome) {
        run->kind = "output-limit";
        free(run->message);
        run->message = NULL;
        (void)!asprintf(&run->message, "output exceeded maxOutputBytes (%llu bytes)",
                        (unsigned long long)run->ledger.budget);
    }
    if (run->kind && strcmp(run->kind, "worker-exit") == 0 && !run->message)
        run->message = describe_exit(run);
    if (run->kind) {
        json_object_put(run->value);
        run->value = NULL;
        run->has_value = false;
    }
}

static bool observed_denial(struct ptc_run *run)
{
    const struct dsh_sandbox_service *sb = run->inst->services.sandbox;
    if (!run->confinement)
        return false;
    if (run->message && sb->is_denial(sb->ctx, run->confinement, run->message, strlen(run->message)) == 1)
        return true;
    for (size_t i = 0; i < run->ledger.count; i++) {
        const struct ptc_entry *e = &run->ledger.entries[i];
        if (!e->is_image && sb->is_denial(sb->ctx, run->confinement, e->text, e->len) == 1)
            return true;
    }
    return false;
}

static json_object *sandbox_json(struct ptc_run *run)
{
    json_object *sandbox = json_object_new_object();
    json_object *report = NULL, *v;
    if (run->confinement && run->confinement->report_json)
        report = ptc__json_parse_strict(run->confinement->report_json, strlen(run->confinement->report_json));
    json_object_object_add(sandbox, "mode", json_object_new_string(run->spec.mode));
    json_object_object_add(sandbox, "denied", json_object_new_boolean(observed_denial(run)));
    if (report && json_object_object_get_ex(report, "enforcement", &v))
        json_object_object_add(sandbox, "enforcement", json_object_get(v));
    else
        json_object_object_add(sandbox, "enforcement", json_object_new_string("none"));
    if (report && json_object_object_get_ex(report, "capabilities", &v))
        json_object_object_add(sandbox, "capabilities", json_object_get(v));
    json_object_put(report);
    return sandbox;
}

char *ptc__run_result_json(struct ptc_run *run, size_t *ret_len)
{
    settle_outcome(run);
    json_object *result = json_object_new_object();
    json_object_object_add(result, "ok", json_object_new_boolean(run->kind == NULL));
    if (!run->kind && run->has_value)
        json_object_object_add(result, "value", json_object_get(run->value));
    if (run->kind) {
        json_object *error = json_object_new_object();
        json_object_object_add(error, "kind", json_object_new_string(run->kind));
        json_object_object_add(error, "message", json_object_new_string(run->message ? run->message : run->kind));
        json_object_object_add(result, "error", error);
    }
    json_object_object_add(result, "output", ptc__ledger_to_json(&run->ledger));
    json_object_object_add(result, "sandbox", sandbox_json(run));
    const char *text = json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *copy = text ? strdup(text) : NULL;
    if (copy && ret_len)
        *ret_len = strlen(copy);
    json_object_put(result);
    return copy;
}

/* The result JSON of a run (DESIGN section 5 / host-abi/schemas/result.json). */
#include "frames.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Settles kind and message from what was observed while closing. */
static void settle_outcome(struct ptc_run *run)
{
    bool program_outcome = !run->kind || strcmp(run->kind, "exception") == 0 ||
                           strcmp(run->kind, "invalid-output") == 0;
    if (run->ledger.overflowed && program_outcome) {
        run->kind = "output-limit";
        free(run->message);
        run->message = NULL;
        (void)!asprintf(&run->message, "output exceeded maxOutputBytes (%llu bytes)",
                        (unsigned long long)run->ledger.budget);
    }
    if (run->kind) {
        json_object_put(run->value);
        run->value = NULL;
        run->has_value = false;
    }
}

static bool observed_denial(struct ptc_run *run)
{
    const struct dsh_sandbox_service *sb = run->inst->services.sandbox;
    const struct dsh_confinement *confinement = run->env ? run->env->confinement : NULL;
    if (!confinement)
        return false;
    if (run->message && sb->is_denial(sb->ctx, confinement, run->message, strlen(run->message)) == 1)
        return true;
    for (size_t i = 0; i < run->ledger.count; i++) {
        const struct ptc_entry *e = &run->ledger.entries[i];
        if (!e->is_image && sb->is_denial(sb->ctx, confinement, e->text.data, e->text.len) == 1)
            return true;
    }
    return false;
}

static json_object *sandbox_json(struct ptc_run *run)
{
    json_object *sandbox = json_object_new_object();
    json_object *report = NULL, *v;
    const struct dsh_confinement *confinement = run->env ? run->env->confinement : NULL;
    if (confinement && confinement->report_json)
        report = dsh_json_parse_strict(confinement->report_json, strlen(confinement->report_json));
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
    if (run->retained) {
        json_object *retained = json_object_new_object();
        json_object_object_add(retained, "owner", json_object_new_string(run->spec.state_owner));
        json_object_object_add(retained, "state", json_object_new_string(run->retained_state ? run->retained_state : "cleared"));
        json_object_object_add(result, "retained", retained);
    }
    const char *text = json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *copy = text ? strdup(text) : NULL;
    if (copy && ret_len)
        *ret_len = strlen(copy);
    json_object_put(result);
    return copy;
}

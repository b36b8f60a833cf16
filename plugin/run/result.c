/* The result JSON of a run (DESIGN section 5 / host-abi/schemas/result.json). */
#include "result.h"
#include "dsh_json_strict.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool observed_denial(const struct ptc_result *r)
{
    const struct dsh_sandbox_service *sb = r->sandbox;
    if (!r->confinement)
        return false;
    if (r->message && sb->is_denial(sb->ctx, r->confinement, r->message, strlen(r->message)) == 1)
        return true;
    for (size_t i = 0; i < r->ledger->count; i++) {
        const struct ptc_entry *e = &r->ledger->entries[i];
        if (!e->is_image && sb->is_denial(sb->ctx, r->confinement, ptc__entry_text(e), e->len) == 1)
            return true;
    }
    return false;
}

/* The network accounting of a run with an allow-list (sandbox service 1.7), or NULL. */
static json_object *network_json(const struct ptc_result *r)
{
    const struct dsh_sandbox_service *sb = r->sandbox;
    if (!r->confinement || !sb ||
        sb->struct_size < offsetof(struct dsh_sandbox_service, network_json) + sizeof(sb->network_json) ||
        !sb->network_json)
        return NULL;
    char small[4096];
    int n = sb->network_json(sb->ctx, r->confinement, small, sizeof small);
    if (n <= 0)
        return NULL;
    char *text = (size_t)n < sizeof small ? small : malloc((size_t)n + 1);
    if (text != small && (!text || sb->network_json(sb->ctx, r->confinement, text, (size_t)n + 1) != n)) {
        free(text);
        return NULL;
    }
    json_object *o = dsh_json_parse_strict(text, (size_t)n);
    if (text != small)
        free(text);
    if (o && !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = NULL;
    }
    return o;
}

static json_object *sandbox_json(const struct ptc_result *r)
{
    json_object *sandbox = json_object_new_object();
    json_object *report = NULL, *v;
    if (r->confinement && r->confinement->report_json)
        report = dsh_json_parse_strict(r->confinement->report_json, strlen(r->confinement->report_json));
    json_object *network = network_json(r);
    /* A refused connection or name is a denial too; the diagnostic names the hosts. */
    bool refused = network && json_object_object_get_ex(network, "refused", &v) && json_object_get_int64(v) > 0;
    json_object_object_add(sandbox, "mode", json_object_new_string(r->mode));
    json_object_object_add(sandbox, "denied", json_object_new_boolean(refused || observed_denial(r)));
    if (report && json_object_object_get_ex(report, "enforcement", &v))
        json_object_object_add(sandbox, "enforcement", json_object_get(v));
    else
        json_object_object_add(sandbox, "enforcement", json_object_new_string("none"));
    if (report && json_object_object_get_ex(report, "capabilities", &v))
        json_object_object_add(sandbox, "capabilities", json_object_get(v));
    if (network)
        json_object_object_add(sandbox, "network", network);
    json_object_put(report);
    return sandbox;
}

/* A json-c object's text without its closing brace, followed by more. */
static char *open_object_text(json_object *object, const char *more, size_t *ret_len)
{
    size_t len;
    const char *text = json_object_to_json_string_length(object, DSH_JSON_PRINT_FLAGS, &len);
    char *open = NULL;
    if (text && len > 0 && asprintf(&open, "%.*s%s", (int)(len - 1), text, more) < 0)
        open = NULL;
    if (open)
        *ret_len = strlen(open);
    return open;
}

char *ptc__result_json(const struct ptc_result *r, size_t *ret_len, void **ret_block)
{
    /* {ok, value, error} + "output" + {sandbox, retained}: the output is printed by the ledger
     * into its own largest buffer, so it is never copied whole. */
    json_object *first = json_object_new_object(), *last = json_object_new_object();
    json_object_object_add(first, "ok", json_object_new_boolean(r->kind == PTC_FAILURE_NONE));
    if (r->kind != PTC_FAILURE_NONE) {
        json_object *error = json_object_new_object();
        const char *kind = ptc_failure_name(r->kind);
        json_object_object_add(error, "kind", json_object_new_string(kind));
        json_object_object_add(error, "message", json_object_new_string(r->message ? r->message : kind));
        json_object_object_add(first, "error", error);
    }
    /* The tail is printed as an object of its own: "{" stands in for the "," before it. */
    json_object_object_add(last, "sandbox", sandbox_json(r));
    if (r->retained_owner) {
        json_object *retained = json_object_new_object();
        json_object_object_add(retained, "owner", json_object_new_string(r->retained_owner));
        json_object_object_add(retained, "state", json_object_new_string(r->retained_state));
        if (r->released_reason) {
            json_object *released = json_object_new_object();
            json_object_object_add(released, "reason", json_object_new_string(r->released_reason));
            const char *message = r->released_message ? r->released_message : r->released_reason;
            json_object_object_add(released, "message", json_object_new_string(message));
            json_object_object_add(retained, "released", released);
        }
        json_object_object_add(last, "retained", retained);
    }
    size_t head_len = 0, tail_len = 0;
    char *head = open_object_text(first, ",\"output\":", &head_len);
    if (head && r->kind == PTC_FAILURE_NONE && r->has_value) {
        /* The value is spliced in as the text the child sent (validated, never a tree): after
         * "ok", before "output". */
        static const char value_key[] = ",\"value\":";
        size_t ok_len = head_len - strlen(",\"output\":");
        char *spliced = malloc(head_len + sizeof value_key - 1 + r->value_len + 1);
        if (spliced) {
            char *p = spliced;
            memcpy(p, head, ok_len);
            p += ok_len;
            memcpy(p, value_key, sizeof value_key - 1);
            p += sizeof value_key - 1;
            memcpy(p, r->value, r->value_len);
            p += r->value_len;
            memcpy(p, head + ok_len, head_len - ok_len + 1);
            head_len += sizeof value_key - 1 + r->value_len;
        }
        free(head);
        head = spliced;
    }
    /* Given back before the whole text is printed: a large value is held at most twice. */
    free(r->value);
    const char *tail = json_object_to_json_string_length(last, DSH_JSON_PRINT_FLAGS, &tail_len);
    char *result = NULL;
    if (head && tail && tail_len > 0) {
        char *comma_tail = strdup(tail);
        if (comma_tail) {
            comma_tail[0] = ',';
            result = ptc__ledger_take_json(r->ledger, head, head_len, comma_tail, tail_len, ret_len, ret_block);
        }
        free(comma_tail);
    }
    free(head);
    json_object_put(first);
    json_object_put(last);
    return result;
}

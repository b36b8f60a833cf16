/* The background runs of one --serve client: the output entries each produced that no answer
 * returned yet, its result until wait_run collects it, and the events answering run, wait_run,
 * terminate_run and list_runs. examples/host/README.md, "Background runs in --serve". */
#include "dshh_serve_background.h"

#include "dsh_json_strict.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

static void free_run(struct dshh_bg_entry *e)
{
    struct dshh_serve_bg_run *r = (struct dshh_serve_bg_run *)e;
    dshh__bg_entry_release(e);
    free(r->pending.data);
    free(r->ends);
    free(r);
}

void dshh__serve_bg_init(struct dshh_serve_background *bg)
{
    *bg = (struct dshh_serve_background){.list = {.free_entry = free_run}};
}

struct dshh_serve_bg_run *dshh__serve_bg_add(struct dshh_serve_background *bg, const char *id_text)
{
    struct dshh_serve_bg_run *r = calloc(1, sizeof(*r));
    if (r && !dshh__bg_link(&bg->list, &r->base, id_text)) {
        free(r);
        r = NULL;
    }
    return r;
}

void dshh__serve_bg_output(struct dshh_serve_bg_run *r, const char *entry_json, size_t len)
{
    if (r->nends == r->capends) {
        size_t cap = r->capends ? r->capends * 2 : 16;
        size_t *ends = realloc(r->ends, cap * sizeof(*ends));
        if (!ends)
            return; /* the entry is still in the result */
        r->ends = ends;
        r->capends = cap;
    }
    if (dsh_text_buffer_write(&r->pending, (unsigned char *)entry_json, len))
        r->ends[r->nends++] = r->pending.len;
}

/* The pending entries ends[first..upto) as a JSON array (each entry the provider's own text). */
static json_object *entries(const struct dshh_serve_bg_run *r, size_t upto)
{
    json_object *out = json_object_new_array();
    for (size_t i = r->first; i < upto; i++) {
        size_t start = i ? r->ends[i - 1] : 0;
        json_object *entry = dsh_json_parse_strict(r->pending.data + start, r->ends[i] - start);
        if (entry)
            json_object_array_add(out, entry);
    }
    return out;
}

bool dshh__serve_bg_answer(struct dshh_serve_background *bg, struct dshh_serve_bg_run *r,
                           const char *answer_id, struct dshh_serve_events *events)
{
    bool ended = r->base.result != NULL;
    /* Whole entries up to the byte bound, at least one. */
    size_t base = r->first ? r->ends[r->first - 1] : 0, upto = r->first;
    while (upto < r->nends && (upto == r->first || r->ends[upto] - base <= DSHH_SERVE_WAIT_MAX_BYTES))
        upto++;
    size_t pending = upto < r->nends ? r->ends[r->nends - 1] - r->ends[upto - 1] : 0;
    json_object *ev = dshh__event(ended && !pending ? "result" : "running", answer_id);
    json_object_object_add(ev, "runId", dsh_json_parse_strict(r->base.id, strlen(r->base.id)));
    if (ended && !pending) {
        /* Before any running answer the result alone carries the whole output. */
        if (r->returned)
            json_object_object_add(ev, "output", entries(r, upto));
        dshh__emit_event(events, ev, "result", r->base.result, r->base.result_len);
        json_object_put(ev);
        dshh__bg_collect(&bg->list, &r->base);
        return true;
    }
    json_object_object_add(ev, "running", json_object_new_boolean(!ended));
    json_object_object_add(ev, "output", entries(r, upto));
    json_object_object_add(ev, "pendingBytes", json_object_new_uint64(pending));
    dshh__emit_event(events, ev, NULL, NULL, 0);
    json_object_put(ev);
    r->returned = true;
    r->first = upto;
    if (r->first == r->nends) /* everything returned: the buffer starts over */
        r->first = r->nends = r->pending.len = 0;
    return false;
}

void dshh__serve_bg_list(const struct dshh_serve_background *bg, const char *answer_id,
                         struct dshh_serve_events *events)
{
    json_object *ev = dshh__event("runs", answer_id), *runs = json_object_new_array();
    int64_t now = dshh__bg_now_ms();
    for (const struct dshh_bg_entry *e = bg->list.head; e; e = e->next) {
        const struct dshh_serve_bg_run *r = (const struct dshh_serve_bg_run *)e;
        json_object *o = json_object_new_object();
        size_t base = r->first ? r->ends[r->first - 1] : 0;
        json_object_object_add(o, "runId", dsh_json_parse_strict(e->id, strlen(e->id)));
        json_object_object_add(o, "running", json_object_new_boolean(!e->result));
        json_object_object_add(o, "ageMs", json_object_new_int64(now - e->started_ms));
        json_object_object_add(o, "pendingBytes",
                               json_object_new_uint64(r->nends ? r->ends[r->nends - 1] - base : 0));
        json_object_array_add(runs, o);
    }
    json_object_object_add(ev, "runs", runs);
    dshh__emit_event(events, ev, NULL, NULL, 0);
    json_object_put(ev);
}

/* The background runs of one --serve client: the output entries each produced that no answer
 * returned yet, its result until wait_run collects it, and the events answering run, wait_run,
 * terminate_run and list_runs. examples/host/README.md, "Background runs in --serve". */
#include "dshh_serve_background.h"

#include "dsh_json_strict.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct dshh_serve_bg_run *dshh__serve_bg_add(struct dshh_serve_background *bg, const char *id_text)
{
    struct dshh_serve_bg_run *r = calloc(1, sizeof(*r));
    if (!r || !(r->id = strdup(id_text))) {
        free(r);
        return NULL;
    }
    r->started_ms = now_ms();
    struct dshh_serve_bg_run **tail = &bg->runs;
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    return r;
}

size_t dshh__serve_bg_running(const struct dshh_serve_background *bg)
{
    size_t n = 0;
    for (const struct dshh_serve_bg_run *r = bg->runs; r; r = r->next)
        n += !r->result;
    return n;
}

struct dshh_serve_bg_run *dshh__serve_bg_find(struct dshh_serve_background *bg, const char *id_text)
{
    for (struct dshh_serve_bg_run *r = bg->runs; r; r = r->next)
        if (!strcmp(r->id, id_text))
            return r;
    return NULL;
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

void dshh__serve_bg_ended(struct dshh_serve_bg_run *r, const char *result_json, size_t len)
{
    static const char oom[] = "{\"ok\":false,\"error\":{\"kind\":\"protocol\",\"message\":"
                              "\"dsh: out of memory\"},\"output\":[]}";
    if ((r->result = malloc(len + 1))) {
        memcpy(r->result, result_json, len);
        r->result[len] = '\0';
        r->result_len = len;
    } else if ((r->result = strdup(oom))) {
        r->result_len = sizeof oom - 1;
    }
    r->ended_ms = now_ms();
}

static void free_run(struct dshh_serve_bg_run *r)
{
    free(r->id);
    free(r->pending.data);
    free(r->ends);
    free(r->result);
    free(r);
}

static void collect(struct dshh_serve_background *bg, struct dshh_serve_bg_run *r)
{
    for (struct dshh_serve_bg_run **link = &bg->runs; *link; link = &(*link)->next)
        if (*link == r) {
            *link = r->next;
            break;
        }
    free_run(r);
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
    bool ended = r->result != NULL;
    /* Whole entries up to the byte bound, at least one. */
    size_t base = r->first ? r->ends[r->first - 1] : 0, upto = r->first;
    while (upto < r->nends && (upto == r->first || r->ends[upto] - base <= DSHH_SERVE_WAIT_MAX_BYTES))
        upto++;
    size_t pending = upto < r->nends ? r->ends[r->nends - 1] - r->ends[upto - 1] : 0;
    json_object *ev = dshh__event(ended && !pending ? "result" : "running", answer_id);
    json_object_object_add(ev, "runId", dsh_json_parse_strict(r->id, strlen(r->id)));
    if (ended && !pending) {
        /* Before any running answer the result alone carries the whole output. */
        if (r->returned)
            json_object_object_add(ev, "output", entries(r, upto));
        dshh__emit_event(events, ev, "result", r->result, r->result_len);
        json_object_put(ev);
        collect(bg, r);
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

void dshh__serve_bg_drop(struct dshh_serve_background *bg, struct dshh_serve_bg_run *r)
{
    collect(bg, r);
}

void dshh__serve_bg_list(const struct dshh_serve_background *bg, const char *answer_id,
                         struct dshh_serve_events *events)
{
    json_object *ev = dshh__event("runs", answer_id), *runs = json_object_new_array();
    int64_t now = now_ms();
    for (const struct dshh_serve_bg_run *r = bg->runs; r; r = r->next) {
        json_object *o = json_object_new_object();
        size_t base = r->first ? r->ends[r->first - 1] : 0;
        json_object_object_add(o, "runId", dsh_json_parse_strict(r->id, strlen(r->id)));
        json_object_object_add(o, "running", json_object_new_boolean(!r->result));
        json_object_object_add(o, "ageMs", json_object_new_int64(now - r->started_ms));
        json_object_object_add(o, "pendingBytes",
                               json_object_new_uint64(r->nends ? r->ends[r->nends - 1] - base : 0));
        json_object_array_add(runs, o);
    }
    json_object_object_add(ev, "runs", runs);
    dshh__emit_event(events, ev, NULL, NULL, 0);
    json_object_put(ev);
}

void dshh__serve_bg_expire(struct dshh_serve_background *bg)
{
    int64_t now = now_ms();
    for (struct dshh_serve_bg_run **link = &bg->runs; *link;) {
        struct dshh_serve_bg_run *r = *link;
        if (r->result && now - r->ended_ms > DSHH_SERVE_KEEP_MS) {
            *link = r->next;
            free_run(r);
        } else {
            link = &r->next;
        }
    }
}

void dshh__serve_bg_free(struct dshh_serve_background *bg)
{
    for (struct dshh_serve_bg_run *r = bg->runs, *next; r; r = next) {
        next = r->next;
        free_run(r);
    }
    bg->runs = NULL;
}

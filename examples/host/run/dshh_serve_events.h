/* Event lines of --serve, one writer per client, and whoever writes JSON lines to a client
 * (dshh_serve_events.c). */
#ifndef DSHH_SERVE_EVENTS_H
#define DSHH_SERVE_EVENTS_H

#include "dshh_out_queue.h"

#include <stdbool.h>
#include <stddef.h>

/* Where one client's event lines go; written only by dshh_serve_events.c. */
struct dshh_serve_events {
    struct dshh_out_queue *out; /* NULL: blocking writes to stdout */
    dshh_timer_fn on_full;      /* from the loop, once the client was dropped for not reading */
    void *on_full_arg;
    bool dropped;               /* every later line is discarded */
    char who[64];               /* names the client in dsh's stderr message */
};

struct json_object;
/* Compact JSON text of o (owned by o). */
const char *dshh__jstr(struct json_object *o);
/* {"type": type, "id": <id_text parsed>} (id omitted when id_text is NULL); caller puts it. */
struct json_object *dshh__event(const char *type, const char *id_text);
/* Event lines of w go through q (drained on its loop; q must outlive w's use); the first line q
 * refuses drops the client: every later line is discarded and on_full(arg) runs from the loop.
 * who names the client on stderr ("the client"). */
void dshh__events_init(struct dshh_serve_events *w, struct dshh_out_queue *q, dshh_timer_fn on_full, void *arg,
                       const char *who);
/* Whether the client was dropped for not reading. */
bool dshh__events_dropped(const struct dshh_serve_events *w);
/* Writes ev as one line; with raw_key, appends "raw_key": raw (JSON text spliced verbatim, so the
 * provider's number text survives). */
void dshh__emit_event(struct dshh_serve_events *w, struct json_object *ev, const char *raw_key, const char *raw,
                      size_t raw_len);
/* The same with raw handed over: it waits in the client's queue without a copy and is given back
 * with release(release_arg, raw) once written or dropped. */
void dshh__emit_event_owned(struct dshh_serve_events *w, struct json_object *ev, const char *raw_key, char *raw,
                            size_t raw_len, dshh_release_fn release, void *release_arg);
/* JSON text as one line: json itself when it holds no raw newline, else a copy (*ret_copy, free
 * it) with raw newlines (whitespace between tokens) blanked; NULL when out of memory. */
const char *dshh__one_line(const char *json, size_t len, char **ret_copy);
/* {"type":"error","id"?:..,"message":..} */
void dshh__emit_error(struct dshh_serve_events *w, const char *id_text, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

/* Event lines on stdout, for --serve and whoever writes JSON lines to the client
 * (dshh_serve_events.c). */
#ifndef DSHH_SERVE_EVENTS_H
#define DSHH_SERVE_EVENTS_H

#include "dshh_out_queue.h"

#include <stdbool.h>
#include <stddef.h>

struct json_object;
/* Compact JSON text of o (owned by o). */
const char *dshh__jstr(struct json_object *o);
/* {"type": type, "id": <id_text parsed>} (id omitted when id_text is NULL); caller puts it. */
struct json_object *dshh__event(const char *type, const char *id_text);
/* Writes ev as one line; with raw_key, appends "raw_key": raw (JSON text spliced verbatim, so the
 * provider's number text survives). */
void dshh__emit_event(struct json_object *ev, const char *raw_key, const char *raw, size_t raw_len);
/* The same with raw handed over: it waits in the stdout queue without a copy and is given back
 * with release(release_arg, raw) once written or dropped. */
void dshh__emit_event_owned(struct json_object *ev, const char *raw_key, char *raw, size_t raw_len,
                            dshh_release_fn release, void *release_arg);
/* JSON text as one line: json itself when it holds no raw newline, else a copy (*ret_copy, free
 * it) with raw newlines (whitespace between tokens) blanked; NULL when out of memory. */
const char *dshh__one_line(const char *json, size_t len, char **ret_copy);
/* From now on event lines go through q (drained on host->loop); the first line q refuses drops
 * the client: every later line is discarded and on_full(arg) runs from the loop. */
void dshh__events_queue(struct dshh_out_queue *q, dshh_timer_fn on_full, void *arg);
/* Whether the client was dropped for not reading. */
bool dshh__events_dropped(void);
/* {"type":"error","id"?:..,"message":..} */
void dshh__emit_error(const char *id_text, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif

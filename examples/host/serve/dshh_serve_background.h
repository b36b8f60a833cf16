/* --serve's background runs (dshh_serve_background.c): run requests with yieldAfterMs, the output
 * entries they produced that no answer returned yet, their results until collected, and the
 * `running`, `result` and `runs` events that answer run, wait_run, terminate_run and list_runs
 * (examples/host/README.md, "Background runs in --serve"). */
#ifndef DSHH_SERVE_BACKGROUND_H
#define DSHH_SERVE_BACKGROUND_H

#include "dsh_text_buffer.h"
#include "dshh_background.h"
#include "dshh_serve_events.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of output entries (their JSON text) one answer returns at most (at least one entry); the
 * rest stays pending for the next wait_run. */
#define DSHH_SERVE_WAIT_MAX_BYTES 65536
/* An ended run's result is kept this long for wait_run (dropped at the next request after:
 * dshh__bg_expire). */
#define DSHH_SERVE_KEEP_MS 600000

struct dshh_serve_bg_run {
    struct dshh_bg_entry base;       /* first: its runId (the run request's id as JSON text), times, result */
    struct dsh_text_buffer pending;  /* entries' JSON texts, back to back */
    size_t *ends;                    /* end offset in pending of each entry not returned yet */
    size_t nends, capends, first;    /* ends[first..nends) are pending */
    bool returned;                   /* an answer returned running: the end shows the rest */
};

struct dshh_serve_background {
    struct dshh_bg_list list; /* of struct dshh_serve_bg_run */
};

void dshh__serve_bg_init(struct dshh_serve_background *bg);
/* A new running entry for the run request id_text, or NULL (out of memory). The list
 * (dshh_background.h) finds, counts, ends, collects and expires them. */
struct dshh_serve_bg_run *dshh__serve_bg_add(struct dshh_serve_background *bg, const char *id_text);
/* An output entry the provider streamed (bounded by the run's maxOutputBytes). */
void dshh__serve_bg_output(struct dshh_serve_bg_run *r, const char *entry_json, size_t len);
/* Writes the event answering request answer_id with what r has not returned yet: `running`
 * (output entries, at most DSHH_SERVE_WAIT_MAX_BYTES, and pendingBytes) or, once r ended and
 * nothing more is pending, `result` (the rest of the output beside the provider's whole result);
 * r is then collected (freed) and it returns true. */
bool dshh__serve_bg_answer(struct dshh_serve_background *bg, struct dshh_serve_bg_run *r,
                           const char *answer_id, struct dshh_serve_events *events);
/* Writes the `runs` event answering list_runs request answer_id. */
void dshh__serve_bg_list(const struct dshh_serve_background *bg, const char *answer_id,
                         struct dshh_serve_events *events);

#endif

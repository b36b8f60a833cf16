/* --serve's background runs (dshh_serve_background.c): run requests with yieldAfterMs, the output
 * entries they produced that no answer returned yet, their results until collected, and the
 * `running`, `result` and `runs` events that answer run, wait_run, terminate_run and list_runs
 * (examples/host/README.md, "Background runs in --serve"). */
#ifndef DSHH_SERVE_BACKGROUND_H
#define DSHH_SERVE_BACKGROUND_H

#include "dsh_text_buffer.h"
#include "dshh_serve_events.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of output entries (their JSON text) one answer returns at most (at least one entry); the
 * rest stays pending for the next wait_run. */
#define DSHH_SERVE_WAIT_MAX_BYTES 65536
/* An ended run's result is kept this long for wait_run (dropped at the next request after). */
#define DSHH_SERVE_KEEP_MS 600000

struct dshh_serve_bg_run {
    struct dshh_serve_bg_run *next;
    char *id;                        /* JSON text of the run request's id: its runId */
    int64_t started_ms, ended_ms;    /* CLOCK_MONOTONIC; ended_ms 0 while running */
    struct dsh_text_buffer pending;  /* entries' JSON texts, back to back */
    size_t *ends;                    /* end offset in pending of each entry not returned yet */
    size_t nends, capends, first;    /* ends[first..nends) are pending */
    bool returned;                   /* an answer returned running: the end shows the rest */
    char *result;                    /* the provider's result once ended */
    size_t result_len;
};

struct dshh_serve_background {
    struct dshh_serve_bg_run *runs; /* in start order */
};

/* A new running entry for the run request id_text, or NULL (out of memory). */
struct dshh_serve_bg_run *dshh__serve_bg_add(struct dshh_serve_background *bg, const char *id_text);
/* Entries whose run has not ended. */
size_t dshh__serve_bg_running(const struct dshh_serve_background *bg);
struct dshh_serve_bg_run *dshh__serve_bg_find(struct dshh_serve_background *bg, const char *id_text);
/* An output entry the provider streamed (bounded by the run's maxOutputBytes). */
void dshh__serve_bg_output(struct dshh_serve_bg_run *r, const char *entry_json, size_t len);
/* The run's result (copied). */
void dshh__serve_bg_ended(struct dshh_serve_bg_run *r, const char *result_json, size_t len);
/* Writes the event answering request answer_id with what r has not returned yet: `running`
 * (output entries, at most DSHH_SERVE_WAIT_MAX_BYTES, and pendingBytes) or, once r ended and
 * nothing more is pending, `result` (the rest of the output beside the provider's whole result);
 * r is then collected (freed) and it returns true. */
bool dshh__serve_bg_answer(struct dshh_serve_background *bg, struct dshh_serve_bg_run *r,
                           const char *answer_id, struct dshh_serve_events *events);
/* Frees r unanswered (a run that never started). */
void dshh__serve_bg_drop(struct dshh_serve_background *bg, struct dshh_serve_bg_run *r);
/* Writes the `runs` event answering list_runs request answer_id. */
void dshh__serve_bg_list(const struct dshh_serve_background *bg, const char *answer_id,
                         struct dshh_serve_events *events);
/* Drops ended runs older than DSHH_SERVE_KEEP_MS. */
void dshh__serve_bg_expire(struct dshh_serve_background *bg);
void dshh__serve_bg_free(struct dshh_serve_background *bg);

#endif

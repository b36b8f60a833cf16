/* dsh mcp's background runs (dshh_mcp_background.c): run_code calls with yieldAfterMs, the output
 * they streamed and nobody read yet, their results until collected, and the answers of wait_run,
 * terminate_run and list_runs (examples/host/README.md, "Background runs"). */
#ifndef DSHH_MCP_BACKGROUND_H
#define DSHH_MCP_BACKGROUND_H

#include "dsh_text_buffer.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of output text one answer returns at most; the rest stays pending for the next wait_run. */
#define DSHH_MCP_WAIT_MAX_BYTES 65536
/* An ended run's result is kept this long for wait_run (dropped at the next tool call after). */
#define DSHH_MCP_KEEP_MS 600000

struct dshh_mcp_bg_run {
    struct dshh_mcp_bg_run *next;
    char id[32]; /* runId: "run-N" */
    char *description;
    int64_t started_ms, ended_ms;   /* CLOCK_MONOTONIC; ended_ms 0 while running */
    struct dsh_text_buffer pending; /* output text streamed; data[taken..len) not returned yet */
    size_t taken;
    size_t seen;   /* output entries streamed */
    bool returned; /* an answer returned part of the run: the end shows only the rest */
    char *result;  /* the provider's result once ended */
    size_t result_len;
};

struct dshh_mcp_background {
    struct dshh_mcp_bg_run *runs; /* in start order */
    uint64_t next_id;
    uint64_t max_output_bytes;
    bool show_value;
};

void dshh__mcp_bg_init(struct dshh_mcp_background *bg, uint64_t max_output_bytes, bool show_value);
/* A new running entry, or NULL (out of memory). */
struct dshh_mcp_bg_run *dshh__mcp_bg_add(struct dshh_mcp_background *bg, const char *description);
/* Entries whose run has not ended. */
size_t dshh__mcp_bg_running(const struct dshh_mcp_background *bg);
struct dshh_mcp_bg_run *dshh__mcp_bg_find(struct dshh_mcp_background *bg, const char *id);
/* An output entry the provider streamed. */
void dshh__mcp_bg_output(struct dshh_mcp_bg_run *r, const char *entry_json, size_t len);
/* The run's result (copied). */
void dshh__mcp_bg_ended(struct dshh_mcp_bg_run *r, const char *result_json, size_t len);
/* The tool result returning what r has not returned yet (at most DSHH_MCP_WAIT_MAX_BYTES of
 * output text): running ({running: true, runId} as text and structuredContent) or, once ended and
 * nothing more is pending, its result as run_code shows one; then r is collected (freed). */
json_object *dshh__mcp_bg_answer(struct dshh_mcp_background *bg, struct dshh_mcp_bg_run *r);
/* The tool result of list_runs. */
json_object *dshh__mcp_bg_list(struct dshh_mcp_background *bg);
/* Drops ended runs older than DSHH_MCP_KEEP_MS. */
void dshh__mcp_bg_expire(struct dshh_mcp_background *bg);
void dshh__mcp_bg_free(struct dshh_mcp_background *bg);

#endif

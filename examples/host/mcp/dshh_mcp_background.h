/* dsh mcp's background runs (dshh_mcp_background.c): run_code calls with yieldAfterMs, the output
 * they streamed and nobody read yet, their results until collected, and the answers of wait_run,
 * terminate_run and list_runs (examples/host/README.md, "Background runs"). */
#ifndef DSHH_MCP_BACKGROUND_H
#define DSHH_MCP_BACKGROUND_H

#include "dsh_text_buffer.h"
#include "dshh_background.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of output text one answer returns at most; the rest stays pending for the next wait_run. */
#define DSHH_MCP_WAIT_MAX_BYTES 65536
/* An ended run's result is kept this long for wait_run (dropped at the next tool call after). */
#define DSHH_MCP_KEEP_MS 600000

struct dshh_mcp_bg_run {
    struct dshh_bg_entry base;      /* first: its runId ("run-N"), times and result */
    char *description;
    struct dsh_text_buffer pending; /* output text streamed; data[taken..len) not returned yet */
    size_t taken;
    size_t seen;   /* output entries streamed */
    bool returned; /* an answer returned part of the run: the end shows only the rest */
};

struct dshh_mcp_background {
    struct dshh_bg_list list; /* of struct dshh_mcp_bg_run, in start order */
    uint64_t next_id;
    uint64_t max_output_bytes;
    bool show_value;
};

void dshh__mcp_bg_init(struct dshh_mcp_background *bg, uint64_t max_output_bytes, bool show_value);
/* A new running entry, or NULL (out of memory). The list (dshh_background.h) finds, counts, ends,
 * collects and expires them (DSHH_MCP_KEEP_MS). */
struct dshh_mcp_bg_run *dshh__mcp_bg_add(struct dshh_mcp_background *bg, const char *description);
/* An output entry the provider streamed. */
void dshh__mcp_bg_output(struct dshh_mcp_bg_run *r, const char *entry_json, size_t len);
/* The tool result returning what r has not returned yet (at most DSHH_MCP_WAIT_MAX_BYTES of
 * output text): running ({running: true, runId} as text and structuredContent) or, once ended and
 * nothing more is pending, its result as run_code shows one; then r is collected (freed). */
json_object *dshh__mcp_bg_answer(struct dshh_mcp_background *bg, struct dshh_mcp_bg_run *r);
/* The tool result of list_runs. */
json_object *dshh__mcp_bg_list(struct dshh_mcp_background *bg);

#endif

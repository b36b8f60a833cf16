/* What the programs of `dsh mcp` can call (dshh_mcp_tools.c): the host's `tools` namespace, the
 * native rows and the mounted servers, their TypeScript declarations, and the run_code
 * description's part that lists them, whole or (over the budget) discovered at run time. */
#ifndef DSHH_MCP_TOOLS_H
#define DSHH_MCP_TOOLS_H

#include "dshh_demo_tools.h"
#include "dshh_mcp_downstream.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

/* The host's functions that answer questions about the others (portable binding names: `$` is
 * not one, common/dsh_binding_names.h). */
#define DSHH_MCP_DESCRIBE_TOOL "describeTool"
#define DSHH_MCP_SEARCH_TOOLS  "searchTools"

struct dshh_mcp_entry; /* one callable function, for discovery */

struct dshh_mcp_tools {
    struct dshh_host *host;
    const struct dshh_mcp_downstream *ds;
    bool demo;                      /* the demonstration functions too (the demo-tools row's mcp) */
    struct dshh_mcp_entry *entries; /* every function programs can call, in declaration order */
    size_t nentries;
};

/* Lists the functions of the tools namespace, the native rows and ds (which must outlive t).
 * Returns 0 or -ENOMEM. */
int dshh__mcp_tools_open(struct dshh_mcp_tools *t, struct dshh_host *host,
                         const struct dshh_mcp_downstream *ds, bool demo);
void dshh__mcp_tools_close(struct dshh_mcp_tools *t);
/* Appends the tools namespace, the native namespaces and the servers' namespaces to a run
 * request's bindings. */
void dshh__mcp_tools_bindings(const struct dshh_mcp_tools *t, json_object *bindings);
/* Answers a call of the tools namespace or of a native namespace and returns true; false when
 * global is neither (nothing is answered). *pending holds the run's demo timers. */
bool dshh__mcp_tools_call(const struct dshh_mcp_tools *t, dsh_run_id run, uint64_t call,
                          const char *global, const char *name, const char *args_json,
                          size_t args_len, struct dshh_demo_pending **pending);
/* The description's part about what programs can call: every declaration when they take at most
 * budget bytes, else each namespace's functions with one-line summaries and how to ask for the
 * rest (appended to out). Returns the bytes every declaration takes. */
size_t dshh__mcp_tools_describe(const struct dshh_mcp_tools *t, size_t budget, FILE *out);

#endif

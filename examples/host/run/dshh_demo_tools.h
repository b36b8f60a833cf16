/* The `tools` namespace of the dsh-demo-tools row (dshh_demo_tools.c). */
#ifndef DSHH_DEMO_TOOLS_H
#define DSHH_DEMO_TOOLS_H

#include "dshh_host.h"

extern const char *const dshh__demo_functions[]; /* NULL-terminated */
struct json_object;
/* Appends {"global": "tools", "functions": [...]} to bindings unless a namespace with that global
 * is already there. Returns true when the demo namespace was added. */
bool dshh__add_demo_bindings(struct json_object *bindings);
struct dshh_demo_pending;
/* Answers a demo call (possibly later through a loop timer). *pending collects the run's timers
 * so dshh__demo_cancel() can drop them when the run ends. */
void dshh__demo_call(struct dshh_host *host, dsh_run_id run, uint64_t call, const char *name,
                     const char *args_json, size_t args_len, struct dshh_demo_pending **pending);
void dshh__demo_cancel(struct dshh_host *host, struct dshh_demo_pending **pending);

#endif

/* The engine instance (engine.c): load, its runs, the one pollable fd a host watches, dispatch,
 * unload. The functions behind the table in wf_entry.c. */
#ifndef WF_ENGINE_H
#define WF_ENGINE_H

#include "dsh_workflow.h"

int wf__engine_load(const char *config_yaml, size_t config_len, const struct dsh_services *services,
                    const struct dsh_subagent_provider *const *subagents,
                    struct dsh_workflow **ret_engine, struct dsh_error *ret_error);
int wf__engine_start(struct dsh_workflow *engine, const char *request_json, size_t request_len,
                     const struct dsh_workflow_callbacks *callbacks, dsh_workflow_run *ret_run,
                     struct dsh_error *ret_error);
int wf__engine_cancel(struct dsh_workflow *engine, dsh_workflow_run run, const char *reason);
int wf__engine_get_fd(struct dsh_workflow *engine);
int wf__engine_dispatch(struct dsh_workflow *engine);
void wf__engine_unload(struct dsh_workflow *engine);
void wf__engine_free_text(char *text);

#endif

/* Internals of dsh-workflow-ptc (prefix wf__). The engine owns no process: each run is one PTC
 * run of the lent runtime plus the subagent children the guest asked for. */
#ifndef WF_INTERNAL_H
#define WF_INTERNAL_H

#include "dsh_json_strict.h"
#include "dsh_provider.h"
#include "dsh_workflow.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

struct wf_config {
    int64_t max_concurrent_agents;
    int64_t max_total_agents;
    int64_t max_items_per_call;
    int64_t sync_timeout_ms;
};

struct wf_run;

/* One started child. Freed only after on_disposed: it is the subagent callbacks' userdata. */
struct wf_child {
    struct wf_run *run;
    const struct dsh_subagent_provider *provider;
    dsh_subagent_id id;
    uint64_t seq;  /* agentId in events, 1-based per run */
    uint64_t call; /* the PTC binding call waiting for this child */
    char *label, *phase; /* as the guest gave them, for agent-start and agent-end */
    bool has_result;
    bool cancel_sent;
    bool dispose_sent;
    struct wf_child *next;
};

struct wf_run {
    struct dsh_workflow *engine;
    dsh_workflow_run id;
    struct dsh_workflow_callbacks cb;
    const struct dsh_subagent_provider *provider; /* default provider of this run, may be NULL */
    char *session_id;
    char *cwd; /* the request's cwd, passed on to child agents (NULL: the workspace root) */
    char *agent_id;
    char *start_event; /* {"type":"start",...}, sent before any other event */
    dsh_run_id ptc_run;
    bool ptc_live;    /* the PTC run was accepted and its on_done has not come yet */
    char *ptc_result; /* the PTC result JSON once on_done came */
    uint64_t agents_started;
    bool cancelled;
    char *cancel_reason;
    bool done_queued; /* on_done is due in the engine's next dispatch() */
    struct wf_child *children;
    struct wf_run *next;
};

struct dsh_workflow {
    struct wf_config config;
    const struct dsh_provider *rt;  /* the lent runtime's table */
    struct dsh_instance *rt_inst;   /* and its instance */
    const struct dsh_logger *logger;
    const struct dsh_subagent_provider **subagents; /* NULL-terminated copy of the array */
    int efd;                        /* eventfd: deferred completions */
    dsh_workflow_run next_id;
    struct wf_run *runs;
};

/* error helper: fills err (may be NULL) and returns code */
#define wf__fail dsh_error_setf
void wf__wake(struct dsh_workflow *engine);
const struct dsh_subagent_provider *wf__find_provider(struct dsh_workflow *engine, const char *name);

/* config.c */
int wf__config_parse(const char *yaml, size_t len, struct wf_config *ret, struct dsh_error *err);

/* request.c: validates a start request; on success fills the run's fields and *ret_request
 * (the runtime request JSON, transfer full). */
int wf__request_build(struct dsh_workflow *engine, const char *json, size_t len, struct wf_run *run,
                      char **ret_request, struct dsh_error *err);
/* check.c: compiles the script through one short run of the lent runtime, blocking (wait())
 * until it ends; DSH_E_SCRIPT_INVALID with the SyntaxError when it does not parse. A check that
 * cannot run is not an error here: the real run reports the runtime's failure. */
int wf__check_script(struct dsh_workflow *engine, const char *script, const struct wf_run *run,
                     const char *cwd, struct dsh_error *err);
/* guest.js, embedded at build time. */
const char *wf__guest_text(size_t *ret_len);

/* run.c */
int wf__start(struct dsh_workflow *engine, const char *request_json, size_t request_len,
              const struct dsh_workflow_callbacks *callbacks, dsh_workflow_run *ret_run,
              struct dsh_error *err);
int wf__cancel(struct dsh_workflow *engine, dsh_workflow_run id, const char *reason);
/* Queues on_done once the PTC run and every child are gone. */
void wf__maybe_finish(struct wf_run *run);
/* Delivers due completions; returns how many runs ended. */
int wf__deliver_done(struct dsh_workflow *engine);
/* Sends event (consumed) to the observer, after the run's start event. */
void wf__emit(struct wf_run *run, json_object *event);
void wf__reply(struct wf_run *run, uint64_t call, const char *json);

/* children.c */
void wf__agent_call(struct wf_run *run, uint64_t call, json_object *request);
void wf__cancel_children(struct wf_run *run, const char *reason);

#endif

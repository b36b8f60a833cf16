/* The subagent children of one workflow run (children.c): started through a subagent provider
 * for each workflow.agent call, each reporting one result (agent-end, then the guest's answer),
 * then disposed. Reports upward only through struct wf_children_hooks. */
#ifndef WF_CHILDREN_H
#define WF_CHILDREN_H

#include "dsh_workflow.h"
#include "events.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* What the run that owns the children does for them. */
struct wf_children_hooks {
    /* Answers the guest's workflow.agent call (JSON text, transfer none). */
    void (*reply)(void *userdata, uint64_t call, const char *json);
    /* The last child was disposed. */
    void (*idle)(void *userdata);
};

/* What a child is started with (borrowed from the run; strings may be NULL). */
struct wf_children_context {
    const struct dsh_subagent_provider *const *providers; /* the engine's, NULL-terminated */
    const struct dsh_subagent_provider *default_provider; /* may be NULL */
    const char *agent_id, *session_id, *cwd;
    dsh_workflow_run run;
};

struct wf_child;

struct wf_children {
    const struct wf_children_hooks *hooks;
    void *userdata;
    struct wf_observer *observer; /* agent-start and agent-end go here */
    struct wf_children_context context;
    uint64_t started; /* agentsStarted */
    struct wf_child *list;
};

void wf__children_init(struct wf_children *c, const struct wf_children_hooks *hooks, void *userdata,
                       struct wf_observer *observer, const struct wf_children_context *context);
/* workflow.agent(request): starts a child, or refuses the call at once (closed: the run no
 * longer accepts children). */
void wf__children_agent_call(struct wf_children *c, uint64_t call, json_object *request,
                             bool closed);
/* Cancels every child without a result (each still reports its result and disposal). */
void wf__children_cancel(struct wf_children *c, const char *reason);
bool wf__children_empty(const struct wf_children *c);

/* The provider named name (NULL: the first), or NULL. */
const struct dsh_subagent_provider *wf__subagent_find(
    const struct dsh_subagent_provider *const *providers, const char *name);

#endif

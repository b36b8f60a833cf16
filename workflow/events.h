/* The observer of one workflow run (events.c): its events in order, the held start event, and
 * the result. The only file that calls the host's dsh_workflow_callbacks. */
#ifndef WF_EVENTS_H
#define WF_EVENTS_H

#include "dsh_workflow.h"

#include <json-c/json.h>
#include <stdbool.h>

struct wf_observer {
    struct dsh_workflow_callbacks cb;
    dsh_workflow_run run;
    char *start_event; /* {"type":"start",...} until it was sent or dropped */
};

/* Takes cb (copied) and start_event (transfer full) for run. */
void wf__observer_init(struct wf_observer *o, const struct dsh_workflow_callbacks *cb,
                       dsh_workflow_run run, char *start_event);
/* Sends the held start event, once. */
void wf__observer_start(struct wf_observer *o);
/* Sends event (consumed), after the start event. */
void wf__observer_emit(struct wf_observer *o, json_object *event);
/* One guest event of a workflow.progress batch, rebuilt from its documented fields only:
 * {type: "log", message, phase?} or {type: "phase", title}, NUL-free strings; {type: "compiled"}
 * (the script compiled) sends the start event and is not forwarded. -EINVAL for anything else. */
int wf__observer_guest_event(struct wf_observer *o, json_object *event);
/* Whether the start event went out (it is held until the guest reports `compiled`). */
bool wf__observer_started(const struct wf_observer *o);
/* The end event, then on_done with result (transfer none). A run whose script never compiled
 * (see workflow/README.md) reports only on_done: drop_events drops the held start event and the
 * end event. */
void wf__observer_done(struct wf_observer *o, json_object *result, bool drop_events);

/* The agent-start and agent-end events of child seq. */
json_object *wf__event_agent(const char *type, uint64_t seq, const char *label, const char *phase);

#endif

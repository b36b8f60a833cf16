/* See events.h. Events reach the host in the order they are emitted, the start event first. */
#include "events.h"

#include "dsh_json_strict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void wf__observer_init(struct wf_observer *o, const struct dsh_workflow_callbacks *cb,
                       dsh_workflow_run run, char *start_event)
{
    *o = (struct wf_observer){.cb = *cb, .run = run, .start_event = start_event};
}

void wf__observer_start(struct wf_observer *o)
{
    if (!o->start_event)
        return;
    char *text = o->start_event;
    o->start_event = NULL; /* first, so the callback cannot resend it */
    o->cb.on_event(o->cb.userdata, o->run, text, strlen(text));
    free(text);
}

bool wf__observer_started(const struct wf_observer *o)
{
    return !o->start_event;
}

void wf__observer_emit(struct wf_observer *o, json_object *event)
{
    wf__observer_start(o);
    const char *text = json_object_to_json_string_ext(event, DSH_JSON_PRINT_FLAGS);
    o->cb.on_event(o->cb.userdata, o->run, text, strlen(text));
    json_object_put(event);
}

int wf__observer_guest_event(struct wf_observer *o, json_object *ev)
{
    json_object *type, *text;
    if (!json_object_is_type(ev, json_type_object) ||
        !json_object_object_get_ex(ev, "type", &type) ||
        !json_object_is_type(type, json_type_string))
        return -EINVAL;
    const char *kind = json_object_get_string(type);
    if (!strcmp(kind, "compiled")) {
        wf__observer_start(o);
        return 0;
    }
    const char *field = !strcmp(kind, "log") ? "message" : !strcmp(kind, "phase") ? "title" : NULL;
    if (!field || !json_object_object_get_ex(ev, field, &text) || !dsh_json_is_text(text))
        return -EINVAL;
    json_object *phase = NULL;
    if (!strcmp(kind, "log") && json_object_object_get_ex(ev, "phase", &phase) && phase &&
        !dsh_json_is_text(phase))
        return -EINVAL;
    json_object *out = json_object_new_object();
    json_object_object_add(out, "type", json_object_new_string(kind));
    json_object_object_add(out, field, json_object_get(text));
    if (phase)
        json_object_object_add(out, "phase", json_object_get(phase));
    wf__observer_emit(o, out);
    return 0;
}

void wf__observer_done(struct wf_observer *o, json_object *result, bool drop_events)
{
    if (drop_events) {
        free(o->start_event);
        o->start_event = NULL;
    } else {
        json_object *end = json_object_new_object();
        json_object_object_add(end, "type", json_object_new_string("end"));
        json_object_object_add(end, "stopReason",
                               json_object_get(json_object_object_get(result, "stopReason")));
        json_object_object_add(end, "agentsStarted",
                               json_object_get(json_object_object_get(result, "agentsStarted")));
        wf__observer_emit(o, end);
    }
    const char *text = json_object_to_json_string_ext(result, DSH_JSON_PRINT_FLAGS);
    o->cb.on_done(o->cb.userdata, o->run, text, strlen(text));
}

json_object *wf__event_agent(const char *type, uint64_t seq, const char *label, const char *phase)
{
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string(type));
    json_object_object_add(ev, "agentId", json_object_new_int64((int64_t)seq));
    if (label)
        json_object_object_add(ev, "label", json_object_new_string(label));
    if (phase)
        json_object_object_add(ev, "phase", json_object_new_string(phase));
    return ev;
}

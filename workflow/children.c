/* Subagent children of a run: workflow.agent calls start them through the subagent provider;
 * each child reports one result (agent-end, then the guest's answer), then is disposed; the run
 * waits for every disposal, including children that publish after cancellation. */
#include "dsh_list.h"
#include "internal.h"
#include "dsh_json_strict.h"

#include <stdlib.h>
#include <string.h>

static void unlink_child(struct wf_child *child)
{
    DSH_LIST_REMOVE(&child->run->children, child);
}

static void on_disposed(void *userdata, dsh_subagent_id id)
{
    (void)id;
    struct wf_child *child = userdata;
    struct wf_run *run = child->run;
    unlink_child(child);
    free(child->label);
    free(child->phase);
    free(child);
    wf__maybe_finish(run);
}

static void end_event(struct wf_child *child, bool ok)
{
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string("agent-end"));
    json_object_object_add(ev, "agentId", json_object_new_int64((int64_t)child->seq));
    if (child->label)
        json_object_object_add(ev, "label", json_object_new_string(child->label));
    if (child->phase)
        json_object_object_add(ev, "phase", json_object_new_string(child->phase));
    json_object_object_add(ev, "ok", json_object_new_boolean(ok));
    wf__emit(child->run, ev);
}

static void on_result(void *userdata, dsh_subagent_id id, int status, const char *text, size_t len)
{
    (void)id;
    struct wf_child *child = userdata;
    if (child->has_result)
        return; /* a provider that reports twice: the first answer stands */
    child->has_result = true;
    struct wf_run *run = child->run;
    /* agent-end reaches observers before the guest hears of it and before disposal. */
    end_event(child, status == 0);
    json_object *answer = json_object_new_object(), *output = NULL;
    if (status == 0)
        output = text ? dsh_json_parse_strict(text, len) : NULL;
    if (status == 0 && json_object_is_type(output, json_type_object)) {
        json_object_object_add(answer, "ok", json_object_new_boolean(true));
        json_object_object_add(answer, "output", output);
    } else {
        json_object_put(output);
        json_object_object_add(answer, "ok", json_object_new_boolean(false));
        json_object_object_add(answer, "message", status == 0 ? json_object_new_string("malformed child output")
                                                              : json_object_new_string_len(text ? text : "", text ? (int)len : 0));
    }
    wf__reply(run, child->call, json_object_to_json_string_ext(answer, DSH_JSON_PRINT_FLAGS));
    json_object_put(answer);
    child->dispose_sent = true;
    child->provider->dispose(child->provider->ctx, child->id); /* may free child */
}

static void refuse(struct wf_run *run, uint64_t call, const char *message)
{
    json_object *a = json_object_new_object();
    json_object_object_add(a, "ok", json_object_new_boolean(false));
    json_object_object_add(a, "message", json_object_new_string(message));
    wf__reply(run, call, json_object_to_json_string_ext(a, DSH_JSON_PRINT_FLAGS));
    json_object_put(a);
}

static void copy_field(json_object *to, json_object *from, const char *key)
{
    json_object *v;
    if (json_object_object_get_ex(from, key, &v) && !json_object_is_type(v, json_type_null))
        json_object_object_add(to, key, json_object_get(v));
}

/* A string without NUL bytes (events and options carry C strings). */
static bool is_text(json_object *v)
{
    return json_object_is_type(v, json_type_string) &&
           strlen(json_object_get_string(v)) == (size_t)json_object_get_string_len(v);
}

void wf__agent_call(struct wf_run *run, uint64_t call, json_object *request)
{
    json_object *prompt, *v;
    if (run->cancelled || !run->ptc_live)
        { refuse(run, call, "the workflow was cancelled"); return; }
    if (!json_object_object_get_ex(request, "prompt", &prompt) || !json_object_is_type(prompt, json_type_string))
        { refuse(run, call, "agent(): prompt must be a string"); return; }
    /* The guest is untrusted: options have their documented types or the call is refused. */
    static const char *const text_options[] = {"label", "phase", "provider", "model"};
    for (size_t i = 0; i < sizeof text_options / sizeof text_options[0]; i++)
        if (json_object_object_get_ex(request, text_options[i], &v) && v && !is_text(v))
            { refuse(run, call, "agent(): label, phase, provider and model must be strings"); return; }
    if (json_object_object_get_ex(request, "schema", &v) && v && !json_object_is_type(v, json_type_object))
        { refuse(run, call, "agent(): schema must be an object"); return; }
    const struct dsh_subagent_provider *provider = run->provider;
    if (json_object_object_get_ex(request, "provider", &v) && json_object_is_type(v, json_type_string) &&
        !(provider = wf__find_provider(run->engine, json_object_get_string(v))))
        { refuse(run, call, "agent(): unknown subagent provider"); return; }
    if (!provider)
        { refuse(run, call, "agent(): no subagent provider is configured"); return; }
    struct wf_child *child = calloc(1, sizeof *child);
    if (!child)
        { refuse(run, call, "out of memory"); return; }
    json_object *opts = json_object_new_object();
    copy_field(opts, request, "label");
    copy_field(opts, request, "phase");
    copy_field(opts, request, "schema");
    copy_field(opts, request, "model");
    if (run->agent_id)
        json_object_object_add(opts, "callerAgent", json_object_new_string(run->agent_id));
    if (run->session_id)
        json_object_object_add(opts, "sessionId", json_object_new_string(run->session_id));
    if (run->cwd)
        json_object_object_add(opts, "cwd", json_object_new_string(run->cwd));
    json_object_object_add(opts, "workflowRun", json_object_new_int64((int64_t)run->id));
    const char *opts_text = json_object_to_json_string_ext(opts, DSH_JSON_PRINT_FLAGS);
    child->run = run;
    child->provider = provider;
    child->call = call;
    if (json_object_object_get_ex(request, "label", &v) && v)
        child->label = strdup(json_object_get_string(v));
    if (json_object_object_get_ex(request, "phase", &v) && v)
        child->phase = strdup(json_object_get_string(v));
    struct dsh_subagent_callbacks cb = {.struct_size = sizeof cb,
                                        .on_result = on_result,
                                        .on_disposed = on_disposed,
                                        .userdata = child};
    struct dsh_error err = {0};
    int rc = provider->start(provider->ctx, json_object_get_string(prompt),
                             (size_t)json_object_get_string_len(prompt), opts_text, strlen(opts_text),
                             &cb, &child->id, &err);
    json_object_put(opts);
    if (rc < 0) {
        free(child->label);
        free(child->phase);
        free(child);
        { refuse(run, call, *err.message ? err.message : dsh_strerror(rc)); return; }
    }
    child->seq = ++run->agents_started;
    child->next = run->children;
    run->children = child;
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string("agent-start"));
    json_object_object_add(ev, "agentId", json_object_new_int64((int64_t)child->seq));
    if (child->label)
        json_object_object_add(ev, "label", json_object_new_string(child->label));
    if (child->phase)
        json_object_object_add(ev, "phase", json_object_new_string(child->phase));
    json_object_object_add(ev, "provider", json_object_new_string(provider->name));
    wf__emit(run, ev);
}

void wf__cancel_children(struct wf_run *run, const char *reason)
{
    /* cancel() must not call back synchronously; copy the next link anyway. */
    for (struct wf_child *c = run->children, *next; c; c = next) {
        next = c->next;
        if (c->has_result || c->cancel_sent)
            continue;
        c->cancel_sent = true;
        c->provider->cancel(c->provider->ctx, c->id, reason);
    }
}

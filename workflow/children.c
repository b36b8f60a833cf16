/* See children.h. A child is freed only after on_disposed: it is the subagent callbacks'
 * userdata. The run waits for every disposal, including children that publish after
 * cancellation. */
#include "children.h"

#include "dsh_json_strict.h"
#include "dsh_list.h"

#include <stdlib.h>
#include <string.h>

struct wf_child {
    struct wf_children *owner;
    const struct dsh_subagent_provider *provider;
    dsh_subagent_id id;
    uint64_t seq;        /* agentId in events, 1-based per run */
    uint64_t call;       /* the PTC binding call waiting for this child */
    char *label, *phase; /* as the guest gave them, for agent-start and agent-end */
    bool has_result;
    bool cancel_sent;
    struct wf_child *next;
};

void wf__children_init(struct wf_children *c, const struct wf_children_hooks *hooks, void *userdata,
                       struct wf_observer *observer, const struct wf_children_context *context)
{
    *c = (struct wf_children){
        .hooks = hooks, .userdata = userdata, .observer = observer, .context = *context};
}

bool wf__children_empty(const struct wf_children *c)
{
    return !c->list;
}

const struct dsh_subagent_provider *wf__subagent_find(
    const struct dsh_subagent_provider *const *providers, const char *name)
{
    for (size_t i = 0; providers && providers[i]; i++)
        if (!name || !strcmp(providers[i]->name, name))
            return providers[i];
    return NULL;
}

static void on_disposed(void *userdata, dsh_subagent_id id)
{
    (void)id;
    struct wf_child *child = userdata;
    struct wf_children *c = child->owner;
    DSH_LIST_REMOVE(&c->list, child);
    free(child->label);
    free(child->phase);
    free(child);
    if (!c->list)
        c->hooks->idle(c->userdata);
}

static void on_result(void *userdata, dsh_subagent_id id, int status, const char *text, size_t len)
{
    (void)id;
    struct wf_child *child = userdata;
    if (child->has_result)
        return; /* a provider that reports twice: the first answer stands */
    child->has_result = true;
    struct wf_children *c = child->owner;
    /* agent-end reaches observers before the guest hears of it and before disposal. */
    json_object *end = wf__event_agent("agent-end", child->seq, child->label, child->phase);
    json_object_object_add(end, "ok", json_object_new_boolean(status == 0));
    wf__observer_emit(c->observer, end);
    json_object *answer = json_object_new_object(), *output = NULL;
    if (status == 0)
        output = text ? dsh_json_parse_strict(text, len) : NULL;
    if (status == 0 && json_object_is_type(output, json_type_object)) {
        json_object_object_add(answer, "ok", json_object_new_boolean(true));
        json_object_object_add(answer, "output", output);
    } else {
        json_object_put(output);
        json_object_object_add(answer, "ok", json_object_new_boolean(false));
        json_object_object_add(
            answer, "message",
            status == 0 ? json_object_new_string("malformed child output")
                        : json_object_new_string_len(text ? text : "", text ? (int)len : 0));
    }
    c->hooks->reply(c->userdata, child->call,
                    json_object_to_json_string_ext(answer, DSH_JSON_PRINT_FLAGS));
    json_object_put(answer);
    child->provider->dispose(child->provider->ctx, child->id); /* may free child */
}

static void refuse(struct wf_children *c, uint64_t call, const char *message)
{
    json_object *a = json_object_new_object();
    json_object_object_add(a, "ok", json_object_new_boolean(false));
    json_object_object_add(a, "message", json_object_new_string(message));
    c->hooks->reply(c->userdata, call, json_object_to_json_string_ext(a, DSH_JSON_PRINT_FLAGS));
    json_object_put(a);
}

static void copy_field(json_object *to, json_object *from, const char *key)
{
    json_object *v;
    if (json_object_object_get_ex(from, key, &v) && !json_object_is_type(v, json_type_null))
        json_object_object_add(to, key, json_object_get(v));
}

/* Why request cannot start a child (NULL: it can, through *ret_provider). The guest is
 * untrusted: options have their documented types or the call is refused. */
static const char *check_request(const struct wf_children *c, json_object *request,
                                 const struct dsh_subagent_provider **ret_provider)
{
    json_object *prompt, *v;
    if (!json_object_object_get_ex(request, "prompt", &prompt) ||
        !json_object_is_type(prompt, json_type_string))
        return "agent(): prompt must be a string";
    static const char *const text_options[] = {"label", "phase", "provider", "model"};
    for (size_t i = 0; i < sizeof text_options / sizeof text_options[0]; i++)
        if (json_object_object_get_ex(request, text_options[i], &v) && v && !dsh_json_is_text(v))
            return "agent(): label, phase, provider and model must be strings";
    if (json_object_object_get_ex(request, "schema", &v) && v &&
        !json_object_is_type(v, json_type_object))
        return "agent(): schema must be an object";
    *ret_provider = c->context.default_provider;
    if (json_object_object_get_ex(request, "provider", &v) &&
        json_object_is_type(v, json_type_string) &&
        !(*ret_provider = wf__subagent_find(c->context.providers, json_object_get_string(v))))
        return "agent(): unknown subagent provider";
    if (!*ret_provider)
        return "agent(): no subagent provider is configured";
    return NULL;
}

static json_object *child_options(const struct wf_children *c, json_object *request)
{
    json_object *opts = json_object_new_object();
    copy_field(opts, request, "label");
    copy_field(opts, request, "phase");
    copy_field(opts, request, "schema");
    copy_field(opts, request, "model");
    const struct wf_children_context *x = &c->context;
    if (x->agent_id)
        json_object_object_add(opts, "callerAgent", json_object_new_string(x->agent_id));
    if (x->session_id)
        json_object_object_add(opts, "sessionId", json_object_new_string(x->session_id));
    if (x->cwd)
        json_object_object_add(opts, "cwd", json_object_new_string(x->cwd));
    json_object_object_add(opts, "workflowRun", json_object_new_int64((int64_t)x->run));
    return opts;
}

static char *option_text(json_object *request, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(request, key, &v) && v ? strdup(json_object_get_string(v))
                                                            : NULL;
}

void wf__children_agent_call(struct wf_children *c, uint64_t call, json_object *request,
                             bool closed)
{
    const struct dsh_subagent_provider *provider = NULL;
    const char *refusal =
        closed ? "the workflow was cancelled" : check_request(c, request, &provider);
    if (refusal) {
        refuse(c, call, refusal);
        return;
    }
    struct wf_child *child = calloc(1, sizeof *child);
    if (!child) {
        refuse(c, call, "out of memory");
        return;
    }
    *child = (struct wf_child){.owner = c,
                               .provider = provider,
                               .call = call,
                               .label = option_text(request, "label"),
                               .phase = option_text(request, "phase")};
    json_object *opts = child_options(c, request);
    const char *opts_text = json_object_to_json_string_ext(opts, DSH_JSON_PRINT_FLAGS);
    json_object *prompt = json_object_object_get(request, "prompt");
    struct dsh_subagent_callbacks cb = {.struct_size = sizeof cb,
                                        .on_result = on_result,
                                        .on_disposed = on_disposed,
                                        .userdata = child};
    struct dsh_error err = {0};
    int rc = provider->start(provider->ctx, json_object_get_string(prompt),
                             (size_t)json_object_get_string_len(prompt), opts_text,
                             strlen(opts_text), &cb, &child->id, &err);
    json_object_put(opts);
    if (rc < 0) {
        free(child->label);
        free(child->phase);
        free(child);
        refuse(c, call, *err.message ? err.message : dsh_strerror(rc));
        return;
    }
    child->seq = ++c->started;
    child->next = c->list;
    c->list = child;
    json_object *ev = wf__event_agent("agent-start", child->seq, child->label, child->phase);
    json_object_object_add(ev, "provider", json_object_new_string(provider->name));
    wf__observer_emit(c->observer, ev);
}

void wf__children_cancel(struct wf_children *c, const char *reason)
{
    /* cancel() must not call back synchronously; copy the next link anyway. */
    for (struct wf_child *child = c->list, *next; child; child = next) {
        next = child->next;
        if (child->has_result || child->cancel_sent)
            continue;
        child->cancel_sent = true;
        child->provider->cancel(child->provider->ctx, child->id, reason);
    }
}

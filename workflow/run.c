/* One workflow run: its PTC run on the lent runtime, the guest's binding calls, cancellation and
 * the final result. A run ends only when its PTC run ended and every child was disposed. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static struct wf_run *find_run(struct dsh_workflow *e, dsh_workflow_run id)
{
    for (struct wf_run *r = e->runs; r; r = r->next)
        if (r->id == id)
            return r;
    return NULL;
}

static void send_start(struct wf_run *run)
{
    if (!run->start_event)
        return;
    char *text = run->start_event;
    run->start_event = NULL; /* first, so the callback cannot resend it */
    run->cb.on_event(run->cb.userdata, run->id, text, strlen(text));
    free(text);
}

void wf__emit(struct wf_run *run, json_object *event)
{
    send_start(run);
    const char *text = json_object_to_json_string_ext(event, DSH_JSON_PRINT_FLAGS);
    run->cb.on_event(run->cb.userdata, run->id, text, strlen(text));
    json_object_put(event);
}

void wf__reply(struct wf_run *run, uint64_t call, const char *json)
{
    /* Once the PTC run ended nobody waits for the answer (reply would say not-found). */
    if (run->ptc_live)
        run->engine->rt->reply(run->engine->rt_inst, run->ptc_run, call, true, json, strlen(json));
}

static bool is_text(json_object *v)
{
    return json_object_is_type(v, json_type_string) &&
           strlen(json_object_get_string(v)) == (size_t)json_object_get_string_len(v);
}

/* One guest event as observers get it: {type: "log", message, phase?} or {type: "phase", title},
 * NUL-free strings, rebuilt from those fields only; NULL for anything else. */
static json_object *guest_event(json_object *ev)
{
    json_object *type, *text;
    if (!json_object_is_type(ev, json_type_object) || !json_object_object_get_ex(ev, "type", &type) ||
        !json_object_is_type(type, json_type_string))
        return NULL;
    const char *kind = json_object_get_string(type);
    const char *field = !strcmp(kind, "log") ? "message" : !strcmp(kind, "phase") ? "title" : NULL;
    if (!field || !json_object_object_get_ex(ev, field, &text) || !is_text(text))
        return NULL;
    json_object *phase = NULL;
    if (!strcmp(kind, "log") && json_object_object_get_ex(ev, "phase", &phase) && phase && !is_text(phase))
        return NULL;
    json_object *out = json_object_new_object();
    json_object_object_add(out, "type", json_object_new_string(kind));
    json_object_object_add(out, field, json_object_get(text));
    if (phase)
        json_object_object_add(out, "phase", json_object_get(phase));
    return out;
}

/* workflow.progress(events): guest events, forwarded in order, answered at once. A malformed
 * event is refused (after the valid ones before it), which fails the workflow. */
static void progress_call(struct wf_run *run, uint64_t call, json_object *events)
{
    const char *msg = NULL;
    if (!json_object_is_type(events, json_type_array))
        msg = "workflow.progress: expected an array of events";
    for (size_t i = 0; !msg && i < json_object_array_length(events); i++) {
        json_object *ev = guest_event(json_object_array_get_idx(events, i));
        if (ev)
            wf__emit(run, ev);
        else
            msg = "workflow.progress: events are {type: \"log\", message: string} or {type: \"phase\", title: string}";
    }
    if (msg)
        run->engine->rt->reply(run->engine->rt_inst, run->ptc_run, call, false, msg, strlen(msg));
    else
        wf__reply(run, call, "null");
}

static void on_call(void *userdata, dsh_run_id ptc_run, uint64_t call, const char *global,
                    const char *name, const char *args_json, size_t args_len)
{
    (void)ptc_run;
    (void)global; /* the runtime forwards only the declared `workflow` namespace */
    struct wf_run *run = userdata;
    json_object *args = json_tokener_parse(args_json), *arg = NULL;
    (void)args_len;
    if (json_object_is_type(args, json_type_array) && json_object_array_length(args) > 0)
        arg = json_object_array_get_idx(args, 0);
    if (!strcmp(name, "progress")) {
        progress_call(run, call, arg);
    } else if (!strcmp(name, "agent") && json_object_is_type(arg, json_type_object)) {
        wf__agent_call(run, call, arg);
    } else {
        const char *msg = "workflow: unexpected binding call";
        run->engine->rt->reply(run->engine->rt_inst, run->ptc_run, call, false, msg, strlen(msg));
    }
    json_object_put(args);
}

static void on_ptc_done(void *userdata, dsh_run_id ptc_run, const char *result, size_t len)
{
    (void)ptc_run;
    struct wf_run *run = userdata;
    run->ptc_live = false;
    run->ptc_result = strndup(result, len);
    /* Children the script did not await end with it. */
    wf__cancel_children(run, "the workflow ended");
    wf__maybe_finish(run);
}

int wf__start(struct dsh_workflow *engine, const char *request_json, size_t request_len,
              const struct dsh_workflow_callbacks *callbacks, dsh_workflow_run *ret_run,
              struct dsh_error *err)
{
    if (!engine || !request_json || !callbacks || !ret_run || !callbacks->on_event ||
        !callbacks->on_done)
        return wf__fail(err, -EINVAL, "start needs an engine, a request, callbacks and ret_run");
    struct wf_run *run = calloc(1, sizeof *run);
    if (!run)
        return wf__fail(err, -ENOMEM, "out of memory");
    run->engine = engine;
    run->cb = *callbacks;
    char *request = NULL, *spec = NULL;
    size_t spec_len = 0;
    int rc = wf__request_build(engine, request_json, request_len, run, &request, err);
    if (rc == 0)
        rc = engine->rt->resolve(engine->rt_inst, request, strlen(request), &spec, &spec_len, err);
    free(request);
    struct dsh_run_callbacks rcb = {.struct_size = sizeof rcb,
                                    .on_call = on_call,
                                    .on_done = on_ptc_done,
                                    .userdata = run};
    if (rc == 0)
        rc = engine->rt->run(engine->rt_inst, spec, spec_len, &rcb, &run->ptc_run, err);
    engine->rt->free_text(spec);
    if (rc < 0) {
        free(run->start_event);
        free(run->session_id);
        free(run->cwd);
        free(run->agent_id);
        free(run);
        return rc;
    }
    run->ptc_live = true;
    run->id = engine->next_id++;
    run->next = engine->runs;
    engine->runs = run;
    *ret_run = run->id;
    wf__wake(engine); /* the start event goes out in the next dispatch() */
    return 0;
}

int wf__cancel(struct dsh_workflow *engine, dsh_workflow_run id, const char *reason)
{
    struct wf_run *run = engine ? find_run(engine, id) : NULL;
    if (!run || run->done_queued)
        return DSH_E_NOT_FOUND;
    if (run->cancelled)
        return 0;
    run->cancelled = true;
    run->cancel_reason = strdup(reason ? reason : "cancelled");
    /* At once, no cooperative step: the PTC process and the signal shared by every child. */
    if (run->ptc_live)
        engine->rt->cancel(engine->rt_inst, run->ptc_run, run->cancel_reason);
    wf__cancel_children(run, run->cancel_reason);
    wf__maybe_finish(run);
    return 0;
}

void wf__maybe_finish(struct wf_run *run)
{
    if (run->ptc_live || run->children || run->done_queued)
        return;
    run->done_queued = true;
    wf__wake(run->engine);
}

static void set_error(json_object *res, const char *code, const char *message)
{
    json_object *e = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_string(code));
    json_object_object_add(e, "message", json_object_new_string(message ? message : ""));
    json_object_object_add(res, "error", e);
}

/* {value, stopReason, error?, agentsStarted} from the PTC result and the guest's envelope. */
static json_object *build_result(struct wf_run *run)
{
    json_object *res = json_object_new_object(), *ptc = json_tokener_parse(run->ptc_result ? run->ptc_result : "null");
    json_object *ok, *value = NULL, *env_ok, *err, *v;
    const char *stop = "error";
    if (run->cancelled) {
        stop = "cancelled";
        set_error(res, "cancelled", run->cancel_reason);
    } else if (json_object_object_get_ex(ptc, "ok", &ok) && json_object_get_boolean(ok) &&
               json_object_object_get_ex(ptc, "value", &v) && json_object_object_get_ex(v, "ok", &env_ok)) {
        if (json_object_get_boolean(env_ok)) {
            stop = "completed";
            json_object_object_get_ex(v, "value", &value);
        } else {
            json_object *code = NULL, *msg = NULL;
            json_object_object_get_ex(v, "code", &code);
            json_object_object_get_ex(v, "message", &msg);
            set_error(res, code ? json_object_get_string(code) : "exception", json_object_get_string(msg));
        }
    } else if (json_object_object_get_ex(ptc, "error", &err)) {
        json_object *kind = NULL, *msg = NULL;
        json_object_object_get_ex(err, "kind", &kind);
        json_object_object_get_ex(err, "message", &msg);
        set_error(res, kind ? json_object_get_string(kind) : "exception", json_object_get_string(msg));
    } else {
        set_error(res, "protocol", "the workflow program returned no envelope");
    }
    json_object_object_add(res, "value", value ? json_object_get(value) : NULL);
    json_object_object_add(res, "stopReason", json_object_new_string(stop));
    json_object_object_add(res, "agentsStarted", json_object_new_int64((int64_t)run->agents_started));
    json_object_put(ptc);
    return res;
}

static void free_run(struct wf_run *run)
{
    free(run->start_event);
    free(run->session_id);
    free(run->cwd);
    free(run->agent_id);
    free(run->ptc_result);
    free(run->cancel_reason);
    free(run);
}

int wf__deliver_done(struct dsh_workflow *e)
{
    int n = 0;
    for (struct wf_run *r = e->runs; r; r = r->next)
        send_start(r);
    for (struct wf_run **link = &e->runs; *link;) {
        struct wf_run *run = *link;
        if (!run->done_queued) {
            link = &run->next;
            continue;
        }
        *link = run->next; /* unlinked first: the id is dead inside on_done */
        json_object *res = build_result(run);
        json_object *end = json_object_new_object();
        json_object_object_add(end, "type", json_object_new_string("end"));
        json_object_object_add(end, "stopReason", json_object_get(json_object_object_get(res, "stopReason")));
        json_object_object_add(end, "agentsStarted", json_object_new_int64((int64_t)run->agents_started));
        wf__emit(run, end);
        const char *text = json_object_to_json_string_ext(res, DSH_JSON_PRINT_FLAGS);
        run->cb.on_done(run->cb.userdata, run->id, text, strlen(text));
        json_object_put(res);
        free_run(run);
        n++;
        link = &e->runs; /* on_done may have started or ended other runs */
    }
    return n;
}

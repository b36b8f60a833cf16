/* See wf_run.h. */
#include "wf_run.h"

#include "children.h"
#include "events.h"
#include "guest.h"
#include "wf_request.h"

#include <errno.h>
#include <json-c/json.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include <stdlib.h>
#include <string.h>

struct wf_run {
    const struct wf_run_env *env;
    dsh_workflow_run id;
    struct wf_request request;
    struct wf_observer observer;
    struct wf_children children;
    dsh_run_id ptc_run;
    bool ptc_live;    /* the PTC run was accepted and its on_done has not come yet */
    char *ptc_result; /* the PTC result JSON once on_done came */
    bool cancelled;
    char *cancel_reason;
    bool due; /* on_done goes out in the engine's next dispatch() */
};

dsh_workflow_run wf__run_id(const struct wf_run *run)
{
    return run->id;
}

bool wf__run_due(const struct wf_run *run)
{
    return run->due;
}

/* Queues on_done once the PTC run and every child are gone. */
static void maybe_finish(struct wf_run *run)
{
    if (run->ptc_live || !wf__children_empty(&run->children) || run->due)
        return;
    run->due = true;
    run->env->hooks->due(run->env->userdata);
}

static void reply(void *userdata, uint64_t call, const char *json)
{
    struct wf_run *run = userdata;
    /* Once the PTC run ended nobody waits for the answer (reply would say not-found). */
    if (run->ptc_live)
        run->env->rt->reply(run->env->rt_inst, run->ptc_run, call, true, json, strlen(json));
}

static void refuse(struct wf_run *run, uint64_t call, const char *message)
{
    run->env->rt->reply(run->env->rt_inst, run->ptc_run, call, false, message, strlen(message));
}

static void children_idle(void *userdata)
{
    maybe_finish(userdata);
}

static const struct wf_children_hooks children_hooks = {.reply = reply, .idle = children_idle};

/* workflow.progress(events): guest events, forwarded in order, answered at once. A malformed
 * event is refused (after the valid ones before it), which fails the workflow. */
static void progress_call(struct wf_run *run, uint64_t call, json_object *events)
{
    const char *msg = NULL;
    if (!json_object_is_type(events, json_type_array))
        msg = "workflow.progress: expected an array of events";
    for (size_t i = 0; !msg && i < json_object_array_length(events); i++)
        if (wf__observer_guest_event(&run->observer, json_object_array_get_idx(events, i)) < 0)
            msg = "workflow.progress: events are {type: \"log\", message: string} or {type: "
                  "\"phase\", title: string}";
    if (msg)
        refuse(run, call, msg);
    else
        reply(run, call, "null");
}

static void on_call(void *userdata, dsh_run_id ptc_run, uint64_t call, const char *global,
                    const char *name, const char *args_json, size_t args_len)
{
    (void)ptc_run;
    (void)global; /* the runtime forwards only the declared `workflow` namespace */
    struct wf_run *run = userdata;
    json_object *args = dsh_json_parse_strict_value(args_json, args_len), *arg = NULL;
    if (json_object_is_type(args, json_type_array) && json_object_array_length(args) > 0)
        arg = json_object_array_get_idx(args, 0);
    if (!strcmp(name, "progress"))
        progress_call(run, call, arg);
    else if (!strcmp(name, "agent") && json_object_is_type(arg, json_type_object))
        wf__children_agent_call(&run->children, call, arg, run->cancelled || !run->ptc_live);
    else
        refuse(run, call, "workflow: unexpected binding call");
    json_object_put(args);
}

static void on_ptc_done(void *userdata, dsh_run_id ptc_run, const char *result, size_t len)
{
    (void)ptc_run;
    struct wf_run *run = userdata;
    run->ptc_live = false;
    run->ptc_result = strndup(result, len);
    /* Children the script did not await end with it. */
    wf__children_cancel(&run->children, "the workflow ended");
    maybe_finish(run);
}

static void free_run(struct wf_run *run)
{
    wf__request_release(&run->request);
    free(run->ptc_result);
    free(run->cancel_reason);
    free(run);
}

int wf__run_start(const struct wf_run_env *env, dsh_workflow_run id, const char *request_json,
                  size_t request_len, const struct dsh_workflow_callbacks *callbacks,
                  struct wf_run **ret_run, struct dsh_error *err)
{
    struct wf_run *run = calloc(1, sizeof *run);
    if (!run)
        return dsh_error_setf(err, -ENOMEM, "out of memory");
    run->env = env;
    run->id = id;
    struct wf_request *req = &run->request;
    char *spec = NULL;
    size_t spec_len = 0;
    int rc = wf__request_parse(env->config, env->providers, request_json, request_len, req, err);
    if (rc == 0)
        rc = env->rt->resolve(env->rt_inst, req->runtime_request, strlen(req->runtime_request),
                              &spec, &spec_len, err);
    struct dsh_run_callbacks rcb = {
        .struct_size = sizeof rcb, .on_call = on_call, .on_done = on_ptc_done, .userdata = run};
    bool resolved = rc == 0;
    if (resolved)
        rc = env->rt->run(env->rt_inst, spec, spec_len, &rcb, &run->ptc_run, err);
    if (resolved && rc == DSH_E_LIMIT) {
        /* The runtime's only limit at run(): the program's frame exceeds maxMessageBytes. */
        size_t guest_len;
        wf__guest_text(&guest_len);
        rc = dsh_error_setf(err, DSH_E_LIMIT,
                            "the workflow program (the engine's %zu-byte guest library with the "
                            "script, args and meta) does not fit in the runtime's maxMessageBytes: "
                            "give the ptc-runtime row a larger maxMessageBytes",
                            guest_len);
    }
    env->rt->free_text(spec);
    if (rc < 0) {
        free_run(run);
        return rc;
    }
    run->ptc_live = true;
    wf__observer_init(&run->observer, callbacks, id, wf__request_take_start_event(req));
    struct wf_children_context context = {.providers = env->providers,
                                          .default_provider = req->provider,
                                          .agent_id = req->agent_id,
                                          .session_id = req->session_id,
                                          .cwd = req->cwd,
                                          .run = id};
    wf__children_init(&run->children, &children_hooks, run, &run->observer, &context);
    *ret_run = run;
    return 0;
}

int wf__run_cancel(struct wf_run *run, const char *reason)
{
    if (run->due)
        return DSH_E_NOT_FOUND;
    if (run->cancelled)
        return 0;
    run->cancelled = true;
    run->cancel_reason = strdup(reason ? reason : "cancelled");
    /* At once, no cooperative step: the PTC process and the signal shared by every child. */
    if (run->ptc_live)
        run->env->rt->cancel(run->env->rt_inst, run->ptc_run, run->cancel_reason);
    wf__children_cancel(&run->children, run->cancel_reason);
    maybe_finish(run);
    return 0;
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
    json_object *res = json_object_new_object(),
                *ptc = run->ptc_result ? dsh_json_parse_strict_value(run->ptc_result, strlen(run->ptc_result)) : NULL;
    json_object *ok, *value = NULL, *env_ok, *err, *v;
    const char *stop = "error";
    if (run->cancelled) {
        stop = "cancelled";
        set_error(res, "cancelled", run->cancel_reason);
    } else if (json_object_object_get_ex(ptc, "ok", &ok) && json_object_get_boolean(ok) &&
               json_object_object_get_ex(ptc, "value", &v) &&
               json_object_object_get_ex(v, "ok", &env_ok)) {
        if (json_object_get_boolean(env_ok)) {
            stop = "completed";
            json_object_object_get_ex(v, "value", &value);
        } else {
            const char *code = dsh_json_get_text(v, "code");
            set_error(res, code ? code : "exception", dsh_json_get_string(v, "message", NULL));
        }
    } else if (json_object_object_get_ex(ptc, "error", &err)) {
        const char *kind = dsh_json_get_text(err, "kind");
        set_error(res, kind ? kind : "exception", dsh_json_get_string(err, "message", NULL));
    } else {
        set_error(res, "protocol", "the workflow program returned no envelope");
    }
    json_object_object_add(res, "value", value ? json_object_get(value) : NULL);
    json_object_object_add(res, "stopReason", json_object_new_string(stop));
    json_object_object_add(res, "agentsStarted",
                           json_object_new_int64((int64_t)run->children.started));
    json_object_put(ptc);
    return res;
}

/* A script that did not compile never started: its run reports only on_done. */
static bool never_started(const struct wf_run *run, json_object *result)
{
    const char *code = dsh_json_get_text(dsh_json_get_object(result, "error"), "code");
    return !wf__observer_started(&run->observer) && code && !strcmp(code, "script-invalid");
}

void wf__run_finish(struct wf_run *run)
{
    json_object *res = build_result(run);
    wf__observer_done(&run->observer, res, never_started(run, res));
    json_object_put(res);
    free_run(run);
}

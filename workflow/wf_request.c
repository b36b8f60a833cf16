/* See wf_request.h. Checked in request order so errors are stable. */
#include "wf_request.h"

#include "children.h"
#include "dsh_json_strict.h"
#include "guest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const request_keys[] = {"script", "meta", "args", "provider", "maxTotalAgents",
                                           "agent",  "cwd",  "ralph", NULL};
static const char *const ralph_keys[] = {"prompt", "maxIterations", "completionPromise", NULL};

static bool known(const char *const *keys, const char *key)
{
    for (size_t i = 0; keys[i]; i++)
        if (!strcmp(keys[i], key))
            return true;
    return false;
}

/* A Ralph loop is this workflow script with the loop's choices as `args`: each iteration one
 * phase event and one fresh child agent with the same prompt, until an agent's text contains the
 * completion promise or the iteration cap (cancellation ends the workflow as cancelled). */
static const char ralph_script[] =
    "const { prompt, maxIterations, completionPromise } = args;\n"
    "for (let iteration = 1; iteration <= maxIterations; iteration++) {\n"
    "  phase(`ralph iteration ${iteration}/${maxIterations}`);\n"
    "  const output = await agent(prompt, { label: `ralph-${iteration}` });\n"
    "  if (typeof output === 'string' && output.includes(completionPromise))\n"
    "    return { endedBy: 'completion-promise', iterations: iteration, output };\n"
    "}\n"
    "return { endedBy: 'max-iterations', iterations: maxIterations };\n";

/* Rewrites a `ralph` request into the script request it runs as: script, args {prompt,
 * maxIterations, completionPromise}, meta {name: "ralph"}, maxTotalAgents = maxIterations. */
static int expand_ralph(const struct wf_config *config, json_object *req, struct dsh_error *err)
{
    json_object *ralph = json_object_object_get(req, "ralph"), *v;
    if (!config->ralph_enabled)
        return dsh_error_setf(err, DSH_E_UNSUPPORTED,
                              "Ralph loops are disabled: set ralph.enabled: true in the dsh-workflow-ptc row");
    if (!json_object_is_type(ralph, json_type_object))
        return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "ralph must be an object {prompt, maxIterations?, completionPromise?}");
    json_object_object_foreach(ralph, key, value) {
        (void)value;
        if (!known(ralph_keys, key))
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "ralph.%s: unknown field", key);
    }
    for (const char *const *k = (const char *const[]){"script", "args", "meta", "maxTotalAgents", NULL}; *k; k++)
        if (json_object_object_get_ex(req, *k, NULL))
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "%s: not allowed with ralph (the loop is the script)", *k);
    if (!json_object_object_get_ex(ralph, "prompt", &v) || !json_object_is_type(v, json_type_string) ||
        !json_object_get_string_len(v))
        return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "ralph.prompt must be a non-empty string");
    json_object *args = json_object_new_object();
    json_object_object_add(args, "prompt", json_object_get(v));
    int64_t iterations = config->ralph_max_iterations;
    if (json_object_object_get_ex(ralph, "maxIterations", &v) && !json_object_is_type(v, json_type_null)) {
        if (!json_object_is_type(v, json_type_int)) {
            json_object_put(args);
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "ralph.maxIterations must be an integer");
        }
        iterations = json_object_get_int64(v);
        if (iterations < 1 || iterations > config->ralph_max_iterations) {
            json_object_put(args);
            return dsh_error_setf(err, DSH_E_LIMIT,
                                  "ralph.maxIterations: %lld is outside 1..%lld (the configured ralph.maxIterations)",
                                  (long long)iterations, (long long)config->ralph_max_iterations);
        }
    }
    json_object_object_add(args, "maxIterations", json_object_new_int64(iterations));
    if (json_object_object_get_ex(ralph, "completionPromise", &v) && !json_object_is_type(v, json_type_null)) {
        if (!json_object_is_type(v, json_type_string) || !json_object_get_string_len(v)) {
            json_object_put(args);
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "ralph.completionPromise must be a non-empty string");
        }
        json_object_object_add(args, "completionPromise", json_object_get(v));
    } else {
        json_object_object_add(args, "completionPromise", json_object_new_string(config->ralph_completion_promise));
    }
    json_object *meta = json_object_new_object();
    json_object_object_add(meta, "name", json_object_new_string("ralph"));
    json_object_object_add(req, "script", json_object_new_string(ralph_script));
    json_object_object_add(req, "args", args);
    json_object_object_add(req, "meta", meta);
    json_object_object_add(req, "maxTotalAgents", json_object_new_int64(iterations));
    json_object_object_del(req, "ralph");
    return 0;
}
static const char *const meta_keys[] = {"name", "description", "phases", NULL};


static int check_meta(json_object *meta, struct dsh_error *err)
{
    if (!json_object_is_type(meta, json_type_object))
        return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "meta must be an object");
    json_object_object_foreach(meta, key, value) {
        if (!known(meta_keys, key))
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "meta.%s: unknown field", key);
        if (!strcmp(key, "phases")) {
            bool ok = json_object_is_type(value, json_type_array);
            for (size_t i = 0; ok && i < json_object_array_length(value); i++)
                ok = json_object_is_type(json_object_array_get_idx(value, i), json_type_string);
            if (!ok)
                return dsh_error_setf(err, DSH_E_REQUEST_INVALID,
                                      "meta.phases must be a list of strings");
        } else if (!json_object_is_type(value, json_type_string)) {
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "meta.%s must be a string", key);
        }
    }
    return 0;
}

static int check_agent(json_object *agent, struct wf_request *parsed, struct dsh_error *err)
{
    json_object *v;
    if (!json_object_is_type(agent, json_type_object))
        return dsh_error_setf(err, DSH_E_REQUEST_INVALID,
                              "agent must be an object {id, sessionId?}");
    json_object_object_foreach(agent, key, value) {
        if (strcmp(key, "id") && strcmp(key, "sessionId"))
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "agent.%s: unknown field", key);
        if (!json_object_is_type(value, json_type_string) &&
            !(json_object_is_type(value, json_type_null) && !strcmp(key, "sessionId")))
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "agent.%s must be a string", key);
    }
    if (json_object_object_get_ex(agent, "id", &v) &&
        !(parsed->agent_id = strdup(json_object_get_string(v))))
        return -ENOMEM;
    if (json_object_object_get_ex(agent, "sessionId", &v) &&
        json_object_is_type(v, json_type_string) &&
        !(parsed->session_id = strdup(json_object_get_string(v))))
        return -ENOMEM;
    return 0;
}

/* Everything but the script and caps, checked in request order so errors are stable. */
static int check_request(const struct wf_config *config,
                         const struct dsh_subagent_provider *const *providers, json_object *req,
                         struct wf_request *parsed, int64_t *ret_total, struct dsh_error *err)
{
    json_object *v;
    json_object_object_foreach(req, key, value) {
        (void)value;
        if (!known(request_keys, key))
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "%s: unknown request field", key);
    }
    if (!json_object_object_get_ex(req, "script", &v) ||
        !json_object_is_type(v, json_type_string) || !json_object_get_string_len(v))
        return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "script must be a non-empty string");
    if (json_object_object_get_ex(req, "meta", &v) && !json_object_is_type(v, json_type_null)) {
        int rc = check_meta(v, err);
        if (rc < 0)
            return rc;
    }
    parsed->provider = wf__subagent_find(providers, NULL);
    if (json_object_object_get_ex(req, "provider", &v) && !json_object_is_type(v, json_type_null)) {
        if (!json_object_is_type(v, json_type_string))
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "provider must be a string");
        if (!(parsed->provider = wf__subagent_find(providers, json_object_get_string(v))))
            return dsh_error_setf(err, DSH_E_NOT_FOUND, "provider: no subagent provider named '%s'",
                                  json_object_get_string(v));
    }
    *ret_total = config->max_total_agents;
    if (json_object_object_get_ex(req, "maxTotalAgents", &v) &&
        !json_object_is_type(v, json_type_null)) {
        if (!json_object_is_type(v, json_type_int))
            return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "maxTotalAgents must be an integer");
        int64_t n = json_object_get_int64(v);
        if (n < 1 || n > config->max_total_agents)
            return dsh_error_setf(err, DSH_E_LIMIT,
                                  "maxTotalAgents: %lld is outside 1..%lld (the configured cap)",
                                  (long long)n, (long long)config->max_total_agents);
        *ret_total = n;
    }
    if (json_object_object_get_ex(req, "agent", &v) && !json_object_is_type(v, json_type_null)) {
        int rc = check_agent(v, parsed, err);
        if (rc < 0)
            return rc;
    }
    if (json_object_object_get_ex(req, "cwd", &v) &&
        (!json_object_is_type(v, json_type_string) || json_object_get_string(v)[0] != '/'))
        return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "cwd must be an absolute path");
    if (json_object_object_get_ex(req, "cwd", &v) && v &&
        !(parsed->cwd = strdup(json_object_get_string(v))))
        return -ENOMEM;
    return 0;
}

static json_object *ref(json_object *o)
{
    return o ? json_object_get(o) : NULL;
}

static char *runtime_request(const struct wf_config *config, json_object *req,
                             const struct wf_request *parsed, int64_t total)
{
    json_object *script, *meta = NULL, *args = NULL, *cwd = NULL;
    json_object_object_get_ex(req, "script", &script);
    json_object_object_get_ex(req, "meta", &meta);
    json_object_object_get_ex(req, "args", &args);
    json_object *wf = json_object_new_object();
    json_object_object_add(wf, "script", ref(script));
    json_object_object_add(wf, "meta", ref(meta));
    json_object_object_add(wf, "args", ref(args));
    json_object_object_add(wf, "maxConcurrentAgents",
                           json_object_new_int64(config->max_concurrent_agents));
    json_object_object_add(wf, "maxTotalAgents", json_object_new_int64(total));
    json_object_object_add(wf, "maxItemsPerCall",
                           json_object_new_int64(config->max_items_per_call));
    json_object_object_add(wf, "syncTimeoutMs", json_object_new_int64(config->sync_timeout_ms));
    size_t guest_len;
    const char *guest = wf__guest_text(&guest_len);
    const char *wf_text = json_object_to_json_string_ext(wf, DSH_JSON_PRINT_FLAGS);
    size_t plen = strlen(wf_text) + guest_len + 32;
    char *program = malloc(plen);
    if (program)
        snprintf(program, plen, "const __wf = %s;\n%s", wf_text, guest);
    json_object_put(wf);
    if (!program)
        return NULL;

    json_object *r = json_object_new_object();
    json_object_object_add(r, "program", json_object_new_string(program));
    free(program);
    /* Workflows may await long series of subagents: no elapsed deadline; the caller cancels. */
    json_object_object_add(r, "timeoutMs", NULL);
    if (parsed->session_id)
        json_object_object_add(r, "sessionId", json_object_new_string(parsed->session_id));
    if (json_object_object_get_ex(req, "cwd", &cwd))
        json_object_object_add(r, "cwd", ref(cwd));
    json_object *ns = json_object_new_object(), *fns = json_object_new_array(),
                *bindings = json_object_new_array();
    json_object_array_add(fns, json_object_new_string("agent"));
    json_object_array_add(fns, json_object_new_string("progress"));
    json_object_object_add(ns, "global", json_object_new_string("workflow"));
    json_object_object_add(ns, "functions", fns);
    json_object_object_add(ns, "errorClass", json_object_new_string("WorkflowBindingError"));
    json_object_array_add(bindings, ns);
    json_object_object_add(r, "bindings", bindings);
    char *text = strdup(json_object_to_json_string_ext(r, DSH_JSON_PRINT_FLAGS));
    json_object_put(r);
    return text;
}

static char *start_event(json_object *req, const struct wf_request *parsed)
{
    json_object *meta = NULL, *args = NULL;
    json_object_object_get_ex(req, "meta", &meta);
    json_object_object_get_ex(req, "args", &args);
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string("start"));
    json_object_object_add(ev, "meta", meta ? ref(meta) : json_object_new_object());
    json_object_object_add(ev, "args", ref(args));
    if (parsed->agent_id)
        json_object_object_add(ev, "callerAgent", json_object_new_string(parsed->agent_id));
    if (parsed->provider)
        json_object_object_add(ev, "provider", json_object_new_string(parsed->provider->name));
    char *text = strdup(json_object_to_json_string_ext(ev, DSH_JSON_PRINT_FLAGS));
    json_object_put(ev);
    return text;
}

char *wf__request_take_start_event(struct wf_request *request)
{
    char *event = request->start_event;
    request->start_event = NULL;
    return event;
}

void wf__request_release(struct wf_request *request)
{
    free(request->agent_id);
    free(request->session_id);
    free(request->cwd);
    free(request->runtime_request);
    free(request->start_event);
    *request = (struct wf_request){0};
}

int wf__request_parse(const struct wf_config *config,
                      const struct dsh_subagent_provider *const *providers, const char *json,
                      size_t len, struct wf_request *ret, struct dsh_error *err)
{
    *ret = (struct wf_request){0};
    json_object *req = dsh_json_parse_strict(json, len);
    if (!req || !json_object_is_type(req, json_type_object)) {
        json_object_put(req);
        return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "the request must be one JSON object");
    }
    int64_t total = 0;
    int rc = json_object_object_get_ex(req, "ralph", NULL) ? expand_ralph(config, req, err) : 0;
    if (rc == 0)
        rc = check_request(config, providers, req, ret, &total, err);
    if (rc == -ENOMEM)
        dsh_error_setf(err, rc, "out of memory");
    if (rc == 0) {
        ret->runtime_request = runtime_request(config, req, ret, total);
        ret->start_event = start_event(req, ret);
        if (!ret->runtime_request || !ret->start_event)
            rc = dsh_error_setf(err, -ENOMEM, "out of memory");
    }
    json_object_put(req);
    if (rc < 0)
        wf__request_release(ret);
    return rc;
}

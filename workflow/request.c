/* A start request: validation (named error codes at start) and the runtime request it becomes.
 * The PTC program is `const __wf = {...};` followed by the embedded guest library (guest.js). */
#include "internal.h"
#include "dsh_json_strict.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const request_keys[] = {"script", "meta", "args", "provider", "maxTotalAgents",
                                           "agent", "cwd", NULL};
static const char *const meta_keys[] = {"name", "description", "phases", NULL};

static bool known(const char *const *keys, const char *key)
{
    for (size_t i = 0; keys[i]; i++)
        if (!strcmp(keys[i], key))
            return true;
    return false;
}

static int check_meta(json_object *meta, struct dsh_error *err)
{
    if (!json_object_is_type(meta, json_type_object))
        return wf__fail(err, DSH_E_REQUEST_INVALID, "meta must be an object");
    json_object_object_foreach(meta, key, value) {
        if (!known(meta_keys, key))
            return wf__fail(err, DSH_E_REQUEST_INVALID, "meta.%s: unknown field", key);
        if (!strcmp(key, "phases")) {
            bool ok = json_object_is_type(value, json_type_array);
            for (size_t i = 0; ok && i < json_object_array_length(value); i++)
                ok = json_object_is_type(json_object_array_get_idx(value, i), json_type_string);
            if (!ok)
                return wf__fail(err, DSH_E_REQUEST_INVALID, "meta.phases must be a list of strings");
        } else if (!json_object_is_type(value, json_type_string)) {
            return wf__fail(err, DSH_E_REQUEST_INVALID, "meta.%s must be a string", key);
        }
    }
    return 0;
}

static int check_agent(json_object *agent, struct wf_run *run, struct dsh_error *err)
{
    json_object *v;
    if (!json_object_is_type(agent, json_type_object))
        return wf__fail(err, DSH_E_REQUEST_INVALID, "agent must be an object {id, sessionId?}");
    json_object_object_foreach(agent, key, value) {
        if (strcmp(key, "id") && strcmp(key, "sessionId"))
            return wf__fail(err, DSH_E_REQUEST_INVALID, "agent.%s: unknown field", key);
        if (!json_object_is_type(value, json_type_string) &&
            !(json_object_is_type(value, json_type_null) && !strcmp(key, "sessionId")))
            return wf__fail(err, DSH_E_REQUEST_INVALID, "agent.%s must be a string", key);
    }
    if (json_object_object_get_ex(agent, "id", &v) && !(run->agent_id = strdup(json_object_get_string(v))))
        return -ENOMEM;
    if (json_object_object_get_ex(agent, "sessionId", &v) && json_object_is_type(v, json_type_string) &&
        !(run->session_id = strdup(json_object_get_string(v))))
        return -ENOMEM;
    return 0;
}

/* Everything but the script and caps, checked in request order so errors are stable. */
static int check_request(struct dsh_workflow *e, json_object *req, struct wf_run *run,
                         int64_t *ret_total, struct dsh_error *err)
{
    json_object *v;
    json_object_object_foreach(req, key, value) {
        (void)value;
        if (!known(request_keys, key))
            return wf__fail(err, DSH_E_REQUEST_INVALID, "%s: unknown request field", key);
    }
    if (!json_object_object_get_ex(req, "script", &v) || !json_object_is_type(v, json_type_string) ||
        !json_object_get_string_len(v))
        return wf__fail(err, DSH_E_REQUEST_INVALID, "script must be a non-empty string");
    if (json_object_object_get_ex(req, "meta", &v) && !json_object_is_type(v, json_type_null)) {
        int rc = check_meta(v, err);
        if (rc < 0)
            return rc;
    }
    run->provider = wf__find_provider(e, NULL);
    if (json_object_object_get_ex(req, "provider", &v) && !json_object_is_type(v, json_type_null)) {
        if (!json_object_is_type(v, json_type_string))
            return wf__fail(err, DSH_E_REQUEST_INVALID, "provider must be a string");
        if (!(run->provider = wf__find_provider(e, json_object_get_string(v))))
            return wf__fail(err, DSH_E_NOT_FOUND, "provider: no subagent provider named '%s'",
                            json_object_get_string(v));
    }
    *ret_total = e->config.max_total_agents;
    if (json_object_object_get_ex(req, "maxTotalAgents", &v) && !json_object_is_type(v, json_type_null)) {
        if (!json_object_is_type(v, json_type_int))
            return wf__fail(err, DSH_E_REQUEST_INVALID, "maxTotalAgents must be an integer");
        int64_t n = json_object_get_int64(v);
        if (n < 1 || n > e->config.max_total_agents)
            return wf__fail(err, DSH_E_LIMIT, "maxTotalAgents: %lld is outside 1..%lld (the configured cap)",
                            (long long)n, (long long)e->config.max_total_agents);
        *ret_total = n;
    }
    if (json_object_object_get_ex(req, "agent", &v) && !json_object_is_type(v, json_type_null)) {
        int rc = check_agent(v, run, err);
        if (rc < 0)
            return rc;
    }
    if (json_object_object_get_ex(req, "cwd", &v) &&
        (!json_object_is_type(v, json_type_string) || json_object_get_string(v)[0] != '/'))
        return wf__fail(err, DSH_E_REQUEST_INVALID, "cwd must be an absolute path");
    if (json_object_object_get_ex(req, "cwd", &v) && v && !(run->cwd = strdup(json_object_get_string(v))))
        return -ENOMEM;
    return 0;
}

static json_object *ref(json_object *o)
{
    return o ? json_object_get(o) : NULL;
}

static char *runtime_request(struct dsh_workflow *e, json_object *req, struct wf_run *run,
                             int64_t total)
{
    json_object *script, *meta = NULL, *args = NULL, *cwd = NULL;
    json_object_object_get_ex(req, "script", &script);
    json_object_object_get_ex(req, "meta", &meta);
    json_object_object_get_ex(req, "args", &args);
    json_object *wf = json_object_new_object();
    json_object_object_add(wf, "script", ref(script));
    json_object_object_add(wf, "meta", ref(meta));
    json_object_object_add(wf, "args", ref(args));
    json_object_object_add(wf, "maxConcurrentAgents", json_object_new_int64(e->config.max_concurrent_agents));
    json_object_object_add(wf, "maxTotalAgents", json_object_new_int64(total));
    json_object_object_add(wf, "maxItemsPerCall", json_object_new_int64(e->config.max_items_per_call));
    json_object_object_add(wf, "syncTimeoutMs", json_object_new_int64(e->config.sync_timeout_ms));
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
    if (run->session_id)
        json_object_object_add(r, "sessionId", json_object_new_string(run->session_id));
    if (json_object_object_get_ex(req, "cwd", &cwd))
        json_object_object_add(r, "cwd", ref(cwd));
    json_object *ns = json_object_new_object(), *fns = json_object_new_array(), *bindings = json_object_new_array();
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

static char *start_event(json_object *req, struct wf_run *run)
{
    json_object *meta = NULL, *args = NULL;
    json_object_object_get_ex(req, "meta", &meta);
    json_object_object_get_ex(req, "args", &args);
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string("start"));
    json_object_object_add(ev, "meta", meta ? ref(meta) : json_object_new_object());
    json_object_object_add(ev, "args", ref(args));
    if (run->agent_id)
        json_object_object_add(ev, "callerAgent", json_object_new_string(run->agent_id));
    if (run->provider)
        json_object_object_add(ev, "provider", json_object_new_string(run->provider->name));
    char *text = strdup(json_object_to_json_string_ext(ev, DSH_JSON_PRINT_FLAGS));
    json_object_put(ev);
    return text;
}

int wf__request_build(struct dsh_workflow *engine, const char *json, size_t len, struct wf_run *run,
                      char **ret_request, struct dsh_error *err)
{
    json_object *req = dsh_json_parse_strict(json, len);
    if (!req || !json_object_is_type(req, json_type_object)) {
        json_object_put(req);
        return wf__fail(err, DSH_E_REQUEST_INVALID, "the request must be one JSON object");
    }
    int64_t total = 0;
    int rc = check_request(engine, req, run, &total, err);
    if (rc == -ENOMEM)
        wf__fail(err, rc, "out of memory");
    json_object *script = NULL, *cwd = NULL;
    json_object_object_get_ex(req, "script", &script);
    json_object_object_get_ex(req, "cwd", &cwd);
    /* Last, after the cheap checks: it costs one short runtime run. */
    if (rc == 0)
        rc = wf__check_script(engine, json_object_get_string(script), run,
                              cwd ? json_object_get_string(cwd) : NULL, err);
    if (rc == 0) {
        *ret_request = runtime_request(engine, req, run, total);
        run->start_event = start_event(req, run);
        if (!*ret_request || !run->start_event)
            rc = wf__fail(err, -ENOMEM, "out of memory");
    }
    json_object_put(req);
    return rc;
}

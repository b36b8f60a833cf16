/* The syntax check start() runs before accepting a workflow. C has no JavaScript parser and the
 * engine may not own a launcher, so the check is one short per-call run of the lent runtime that
 * compiles the script with the guest's exact wrapping; start() pumps the runtime (wait()) until
 * that run ends. Same instance, same session policy: no second launcher, no back door. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Must wrap the script exactly as guest.js does, or the check and the run could disagree. */
static const char check_program[] =
    "const vm = await import('node:vm');\n"
    "try {\n"
    "  new vm.Script(`(async () => {\\n${__src}\\n})()`, { filename: 'workflow.js', lineOffset: -1 });\n"
    "  return null;\n"
    "} catch (e) {\n"
    "  return `${e?.name ?? 'Error'}: ${e?.message ?? String(e)}`;\n"
    "}\n";

/* A compile is milliseconds; the bound only covers a runtime that cannot start the check. */
#define WF_CHECK_TIMEOUT_MS 10000

struct check {
    bool done;
    char *result; /* the check run's result JSON */
};

static void check_call(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                       const char *name, const char *args_json, size_t args_len)
{
    (void)userdata, (void)run, (void)call, (void)global, (void)name, (void)args_json, (void)args_len;
    /* No bindings are declared, so the runtime never forwards a call. */
}

static void check_done(void *userdata, dsh_run_id run, const char *result, size_t len)
{
    (void)run;
    struct check *c = userdata;
    c->result = strndup(result, len);
    c->done = true;
}

static char *check_request(const char *script, const struct wf_run *run, const char *cwd)
{
    json_object *src = json_object_new_string(script);
    const char *lit = json_object_to_json_string_ext(src, DSH_JSON_PRINT_FLAGS);
    size_t plen = strlen(lit) + sizeof check_program + 32;
    char *program = malloc(plen);
    if (program)
        snprintf(program, plen, "const __src = %s;\n%s", lit, check_program);
    json_object_put(src);
    if (!program)
        return NULL;
    json_object *r = json_object_new_object();
    json_object_object_add(r, "program", json_object_new_string(program));
    free(program);
    json_object_object_add(r, "timeoutMs", json_object_new_int64(WF_CHECK_TIMEOUT_MS));
    if (run->session_id)
        json_object_object_add(r, "sessionId", json_object_new_string(run->session_id));
    if (cwd)
        json_object_object_add(r, "cwd", json_object_new_string(cwd));
    char *text = strdup(json_object_to_json_string_ext(r, DSH_JSON_PRINT_FLAGS));
    json_object_put(r);
    return text;
}

int wf__check_script(struct dsh_workflow *e, const char *script, const struct wf_run *run,
                     const char *cwd, struct dsh_error *err)
{
    char *request = check_request(script, run, cwd), *spec = NULL;
    size_t spec_len = 0;
    if (!request)
        return wf__fail(err, -ENOMEM, "out of memory");
    struct dsh_error rerr = {0};
    int rc = e->rt->resolve(e->rt_inst, request, strlen(request), &spec, &spec_len, &rerr);
    free(request);
    struct check c = {0};
    struct dsh_run_callbacks cb = {.struct_size = sizeof cb, .on_call = check_call,
                                   .on_done = check_done, .userdata = &c};
    dsh_run_id id = 0;
    if (rc == 0)
        rc = e->rt->run(e->rt_inst, spec, spec_len, &cb, &id, &rerr);
    e->rt->free_text(spec);
    /* The check could not run: the real run (same runtime) reports that failure as its result. */
    if (rc < 0)
        return 0;
    /* Blocking: only the runtime's callbacks (of any run) may be dispatched meanwhile. */
    while (!c.done)
        if (e->rt->wait(e->rt_inst, 1000) < 0 && !c.done)
            e->rt->cancel(e->rt_inst, id, "the workflow syntax check could not be waited for");
    json_object *res = json_tokener_parse(c.result ? c.result : "null"), *ok, *value;
    rc = 0;
    if (json_object_object_get_ex(res, "ok", &ok) && json_object_get_boolean(ok) &&
        json_object_object_get_ex(res, "value", &value) && json_object_is_type(value, json_type_string))
        rc = wf__fail(err, DSH_E_SCRIPT_INVALID, "%s", json_object_get_string(value));
    json_object_put(res);
    free(c.result);
    return rc;
}

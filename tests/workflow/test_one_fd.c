/* A host that watches only the workflow engine's fd (get_fd) and calls only the engine's
 * dispatch(): start() returns without calling the host back, and every event of a workflow with a
 * phase, a log and two agents arrives in order, then the result. The agents are PTC runs of the
 * same lent runtime instance, so their callbacks too reach the host only through the engine's
 * dispatch(). The host never polls or dispatches the runtime itself. */
#include "dsh_linux_services.h"
#include "dsh_provider.h"
#include "dsh_workflow.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct host {
    void *ptc_dl, *wf_dl;
    struct dsh_linux_services *impl;
    const struct dsh_provider *rt;
    struct dsh_instance *inst;
    const struct dsh_workflow_engine *engine;
    struct dsh_workflow *wf;
    bool in_start; /* a callback now would re-enter the host inside start() */
    bool reentered;
    json_object *events;   /* the event types in order */
    char *result;          /* on_done's JSON */
    int runtime_busy_seen; /* dispatches made while the runtime's own fd was readable */
};

static char workspace[] = "/tmp/dsh-wf-one-fd-XXXXXX";

/* ---- the subagent provider: each prompt is a TypeScript program run on the lent instance --- */
struct child {
    struct host *h;
    struct dsh_subagent_callbacks cb;
    dsh_subagent_id id;
    dsh_run_id run;
    bool running;
};

static struct child children[8];
static size_t n_children;

static void child_call(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                       const char *name, const char *args_json, size_t args_len)
{
    (void)userdata, (void)run, (void)call, (void)global, (void)name, (void)args_json;
    (void)args_len; /* no bindings are declared */
}

static void child_done(void *userdata, dsh_run_id run, const char *result, size_t len)
{
    (void)run;
    struct child *c = userdata;
    c->running = false;
    if (c->h->in_start)
        c->h->reentered = true;
    (void)len; /* result is NUL-terminated */
    json_object *r = json_tokener_parse(result), *v;
    if (json_object_object_get_ex(r, "value", &v) && json_object_is_type(v, json_type_string)) {
        json_object *out = json_object_new_object();
        json_object_object_add(out, "text", json_object_get(v));
        const char *text = json_object_to_json_string(out);
        c->cb.on_result(c->cb.userdata, c->id, 0, text, strlen(text));
        json_object_put(out);
    } else {
        c->cb.on_result(c->cb.userdata, c->id, -1, "the child failed", 16);
    }
    json_object_put(r);
}

static int child_start(void *ctx, const char *prompt, size_t prompt_len, const char *options_json,
                       size_t options_len, const struct dsh_subagent_callbacks *callbacks,
                       dsh_subagent_id *ret_child, struct dsh_error *ret_error)
{
    (void)options_json, (void)options_len;
    struct host *h = ctx;
    if (h->in_start)
        h->reentered = true;
    cr_assert_lt(n_children, sizeof children / sizeof children[0]);
    struct child *c = &children[n_children];
    *c = (struct child){.h = h, .cb = *callbacks, .id = n_children + 1};
    json_object *req = json_object_new_object();
    json_object_object_add(req, "program", json_object_new_string_len(prompt, (int)prompt_len));
    const char *text = json_object_to_json_string(req);
    char *spec = NULL;
    size_t spec_len = 0;
    int rc = h->rt->resolve(h->inst, text, strlen(text), &spec, &spec_len, ret_error);
    json_object_put(req);
    struct dsh_run_callbacks rcb = {
        .struct_size = sizeof rcb, .on_call = child_call, .on_done = child_done, .userdata = c};
    if (rc == 0)
        rc = h->rt->run(h->inst, spec, spec_len, &rcb, &c->run, ret_error);
    h->rt->free_text(spec);
    if (rc < 0)
        return rc;
    c->running = true;
    n_children++;
    *ret_child = c->id;
    return 0;
}

static int child_cancel(void *ctx, dsh_subagent_id id, const char *reason)
{
    struct host *h = ctx;
    struct child *c = &children[id - 1];
    return c->running ? h->rt->cancel(h->inst, c->run, reason) : 0;
}

static int child_dispose(void *ctx, dsh_subagent_id id)
{
    (void)ctx;
    struct child *c = &children[id - 1];
    c->cb.on_disposed(c->cb.userdata, id); /* allowed inside dispose() */
    return 0;
}

static struct dsh_subagent_provider subagent = {
    .struct_size = sizeof subagent,
    .abi_major = DSH_ABI_MAJOR,
    .abi_minor = DSH_ABI_MINOR,
    .name = "test-nested",
    .start = child_start,
    .cancel = child_cancel,
    .dispose = child_dispose,
};

/* ---- the workflow observer ------------------------------------------------------------------ */
static void on_event(void *userdata, dsh_workflow_run run, const char *json, size_t len)
{
    (void)run, (void)len;
    struct host *h = userdata;
    if (h->in_start)
        h->reentered = true;
    json_object *ev = json_tokener_parse(json), *type;
    cr_assert(json_object_object_get_ex(ev, "type", &type), "an event without a type: %s", json);
    json_object_array_add(h->events, json_object_get(type));
    json_object_put(ev);
}

static void on_done(void *userdata, dsh_workflow_run run, const char *json, size_t len)
{
    (void)run;
    struct host *h = userdata;
    if (h->in_start)
        h->reentered = true;
    h->result = strndup(json, len);
}

static void *open_table(const char *path, const char *symbol, void **ret_dl)
{
    *ret_dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert_not_null(*ret_dl, "dlopen %s: %s", path, dlerror());
    void *(*entry)(uint32_t);
    *(void **)&entry = dlsym(*ret_dl, symbol);
    cr_assert_not_null(entry, "%s exports no %s", path, symbol);
    return entry(DSH_ABI_MAJOR);
}

static void host_open(struct host *h)
{
    cr_assert_not_null(mkdtemp(workspace));
    /* The plugin names the directories its own files need in the execution world. */
    h->rt = open_table(DSH_TEST_PTC_PLUGIN, "dsh_provider_entry", &h->ptc_dl);
    const char *const *readable = h->rt->readable_roots();
    struct dsh_linux_services_options o = {.struct_size = sizeof o,
                                           .launcher_path = DSH_TEST_LAUNCHER,
                                           .supervisor_path = DSH_TEST_SUPERVISOR,
                                           .default_mode = "read-only",
                                           .workspace_root = workspace,
                                           .extra_readable_roots = readable};
    struct dsh_error err = {0};
    cr_assert_eq(dsh_linux_services_create(&o, &h->impl, &err), 0, "services: %s", err.message);
    struct dsh_services services = {.struct_size = sizeof services,
                                    .abi_major = DSH_ABI_MAJOR,
                                    .abi_minor = DSH_ABI_MINOR,
                                    .fs = dsh_linux_fs(h->impl),
                                    .subprocess = dsh_linux_subprocess(h->impl),
                                    .sandbox = dsh_linux_sandbox(h->impl),
                                    .sandbox_policy = dsh_linux_sandbox_policy(h->impl)};
    cr_assert_eq(h->rt->load("", 0, &services, &h->inst, &err), 0, "runtime: %s", err.message);
    h->engine = open_table(DSH_TEST_WORKFLOW_PLUGIN, "dsh_workflow_entry", &h->wf_dl);
    struct dsh_runtime_service lent = {.struct_size = sizeof lent,
                                       .abi_major = DSH_ABI_MAJOR,
                                       .abi_minor = DSH_ABI_MINOR,
                                       .provider = h->rt,
                                       .instance = h->inst};
    services.runtime = &lent;
    subagent.ctx = h;
    const struct dsh_subagent_provider *subagents[] = {&subagent, NULL};
    cr_assert_eq(h->engine->load("", 0, &services, subagents, &h->wf, &err), 0, "engine: %s",
                 err.message);
    h->events = json_object_new_array();
}

static void host_close(struct host *h)
{
    h->engine->unload(h->wf);
    h->rt->unload(h->inst);
    dsh_linux_services_destroy(h->impl);
    json_object_put(h->events);
    free(h->result);
    dlclose(h->wf_dl);
    dlclose(h->ptc_dl);
    rmdir(workspace);
}

/* Starts script and runs the one-fd loop until on_done. */
static void run_workflow(struct host *h, const char *script)
{
    json_object *req = json_object_new_object();
    json_object_object_add(req, "script", json_object_new_string(script));
    const char *text = json_object_to_json_string(req);
    struct dsh_workflow_callbacks cb = {
        .struct_size = sizeof cb, .on_event = on_event, .on_done = on_done, .userdata = h};
    dsh_workflow_run run = 0;
    struct dsh_error err = {0};
    h->in_start = true;
    int rc = h->engine->start(h->wf, text, strlen(text), &cb, &run, &err);
    h->in_start = false;
    json_object_put(req);
    cr_assert_eq(rc, 0, "start: %s", err.message);
    cr_assert_not(h->reentered, "start() called the host back");
    struct pollfd engine_fd = {.fd = h->engine->get_fd(h->wf), .events = POLLIN};
    struct pollfd runtime_fd = {.fd = h->rt->get_fd(h->inst), .events = POLLIN};
    while (!h->result) {
        cr_assert_eq(poll(&engine_fd, 1, -1), 1);
        /* Only to show the runtime's work is served here: the host does not dispatch it. */
        if (poll(&runtime_fd, 1, 0) == 1)
            h->runtime_busy_seen++;
        cr_assert_eq(h->engine->dispatch(h->wf), 0);
    }
}

/* A hang (an engine whose fd does not cover the runtime) fails by the timeout. */
Test(one_fd, a_host_that_polls_only_the_engine_fd_sees_every_event, .timeout = 120)
{
    struct host h = {0};
    host_open(&h);
    run_workflow(&h, "phase('p');\n"
                     "log('hello');\n"
                     "const a = await agent('return \"x\"', {label: 'a'});\n"
                     "const b = await agent('return \"y\"', {label: 'b'});\n"
                     "return a + b;");
    cr_expect_str_eq(json_object_to_json_string(h.events),
                     "[ \"start\", \"phase\", \"log\", \"agent-start\", \"agent-end\", "
                     "\"agent-start\", \"agent-end\", \"end\" ]");
    cr_expect_str_eq(h.result,
                     "{\"value\":\"xy\",\"stopReason\":\"completed\",\"agentsStarted\":2}");
    cr_expect_gt(h.runtime_busy_seen, 0, "the runtime had work the engine's dispatch() served");
    cr_expect_not(h.reentered);
    host_close(&h);
}

Test(one_fd, a_script_that_does_not_compile_reports_only_its_result, .timeout = 120)
{
    struct host h = {0};
    host_open(&h);
    run_workflow(&h, "await agent('return 1');\nreturn 1 +;");
    cr_expect_str_eq(json_object_to_json_string(h.events), "[ ]", "no events: it never started");
    cr_expect_str_eq(h.result, "{\"error\":{\"code\":\"script-invalid\",\"message\":\"SyntaxError: "
                               "Unexpected token ';' (line 2, column 11)\"},\"value\":null,\"stopReason\":\"error\","
                               "\"agentsStarted\":0}");
    cr_expect_eq(n_children, 0, "no child was started");
    host_close(&h);
}

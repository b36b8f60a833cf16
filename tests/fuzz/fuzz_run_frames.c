/* The run state machine fed any frames from its child (plugin/run/, through the real plugin core
 * and the fault-injection double of the host's services, tests/plugin/fault_services.c): a run
 * starts, its process says hello and gets the run frame, then every line of the input arrives as
 * a control frame (forged run and call ids, duplicate results, calls after the end, garbage);
 * calls are left open, answered or refused by turns. Then the process's range ends. Properties: the run
 * delivers exactly one result, a strict JSON object with a boolean `ok`; the plugin releases the
 * process, and unloads without a leak (ASan). */
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_provider.h"
#include "fault_services.h"
#include "fuzz_target.h"

#ifndef TEST_NODE
#error "meson passes TEST_NODE (the pinned Node: the launch must name an executable)"
#endif

const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major);

static const char launch[] =
    "launch: {kind: node-script, executable: '" TEST_NODE "', bootstrapPath: /fault/process.js}\n";

struct state {
    const struct dsh_provider *p;
    struct dsh_instance *inst;
    int done, calls;
    char *result;
    size_t result_len;
};
static struct state st;

static void on_call(void *ud, dsh_run_id run, uint64_t call, const char *g, const char *n, const char *a, size_t l)
{
    (void)ud, (void)g, (void)n, (void)a, (void)l;
    switch (st.calls++ % 3) {
    case 0: /* left open: the run ends with it pending */
        break;
    case 1:
        st.p->reply(st.inst, run, call, true, "[1,-0,\"x\"]", 10);
        break;
    default:
        st.p->reply(st.inst, run, call, false, "refused by the fuzz host", 24);
    }
}

static void on_done(void *ud, dsh_run_id run, const char *json, size_t len)
{
    (void)ud, (void)run;
    st.done++;
    free(st.result);
    st.result = strndup(json, len);
    st.result_len = len;
}

/* Dispatches once if the loop has work (never waits). */
static void pump(void)
{
    struct pollfd pfd = {.fd = st.p->get_fd(st.inst), .events = POLLIN};
    (void)poll(&pfd, 1, 0);
    fuzz_check(st.p->dispatch(st.inst) >= 0, "dispatch failed");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fault_services f;
    memset(&st, 0, sizeof st);
    fault_services_init(&f, fault_workspace());
    st.p = dsh_provider_entry(DSH_ABI_MAJOR);
    struct dsh_error err = {0};
    fuzz_check(st.p->load(launch, sizeof launch - 1, &f.bundle, &st.inst, &err) == 0, "load: %s", err.message);

    static const char request[] =
        "{\"program\":\"return 1\",\"bindings\":[{\"global\":\"tools\",\"functions\":[\"echo\",\"add\"]}]}";
    char *spec = NULL;
    size_t spec_len = 0;
    fuzz_check(st.p->resolve(st.inst, request, sizeof request - 1, &spec, &spec_len, &err) == 0, "resolve: %s",
               err.message);
    struct dsh_run_callbacks cb = {.struct_size = sizeof cb, .on_call = on_call, .on_done = on_done};
    dsh_run_id id;
    fuzz_check(st.p->run(st.inst, spec, spec_len, &cb, &id, &err) == 0, "run: %s", err.message);
    st.p->free_text(spec);
    for (int i = 0; i < 1000 && f.spawns == 0; i++)
        pump();
    fuzz_check(f.n_children == 1, "the run's process was spawned");
    struct fault_child *child = &f.children[0];
    fault_child_send(child, "{\"type\":\"hello\",\"protocol\":1,\"node\":\"v24.0.0\"}");
    char *line = NULL;
    for (int i = 0; i < 1000 && !(line = fault_child_take_line(child)); i++)
        pump();
    fuzz_check(line && strstr(line, "\"type\":\"run\""), "the run frame was sent: %s", line ? line : "(none)");
    free(line);

    /* The input's lines, as frames of the child (while its channel is open). */
    const char *p = (const char *)data, *end = p + size;
    for (int lines = 0; p < end && lines < 64 && !child->quiescent; lines++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *frame = strndup(p, n);
        if (n && n < 8192 && !memchr(p, '\0', n))
            fault_child_send(child, frame);
        free(frame);
        p += n + 1;
        for (int i = 0; i < 4; i++)
            pump();
        while ((line = fault_child_take_line(child)))
            free(line);
    }
    fault_end_range(&f, child);
    for (int i = 0; i < 100000 && !st.done; i++)
        pump();
    fuzz_check(st.done == 1, "the run delivered %d results", st.done);
    json_object *result = dsh_json_parse_strict(st.result, st.result_len);
    bool ok;
    fuzz_check(json_object_is_type(result, json_type_object) && dsh_json_get_bool(result, "ok", &ok),
               "the result is an object with a boolean ok: %s", st.result);
    json_object_put(result);
    if (getenv("DSH_FUZZ_VERBOSE"))
        fprintf(stderr, "result: %s\n", st.result);
    for (int i = 0; i < 100; i++)
        pump();
    fuzz_check(st.done == 1, "a second result after the first");
    st.p->unload(st.inst);
    fault_services_destroy(&f);
    free(st.result);
    return 0;
}

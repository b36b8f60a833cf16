/* The environment, run and owner state machines (plugin/README.md, "States") driven through the
 * real plugin core against the fault-injection double of the host's services (fault_services.c):
 * the test plays the child on the other end of the control channel, so each transition happens
 * when the test says so, and faults a real backend rarely produces are injected on purpose.
 * Every test pumps the plugin's loop until a state is reached; .timeout bounds each one. */
#include "env_private.h"
#include "env_start.h"
#include "fault_services.h"
#include "instance.h"
#include "node_entry.h"
#include "outcome.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major);

#define MAX_RESULTS 8

struct fixture {
    struct fault_services f;
    const struct dsh_provider *p;
    struct dsh_instance *inst;
    dsh_run_id done_ids[MAX_RESULTS];
    char *done[MAX_RESULTS];
    int n_done;
    int released, released_status;
};

static struct fixture fx;

/* The core is linked into this test, not loaded from the plugin's directory, so it cannot find
 * its files beside itself: the launch names them (the double never starts them). */
#define LAUNCH "launch: {kind: node-script, executable: '" TEST_NODE "', bootstrapPath: /fault/process.js}\n"

static void load_bundle(const char *config, const struct dsh_services *bundle)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", LAUNCH, config);
    fx.p = dsh_provider_entry(DSH_ABI_MAJOR);
    struct dsh_error err = {0};
    cr_assert_eq(fx.p->load(full, strlen(full), bundle, &fx.inst, &err), 0, "%s", err.message);
}

static void load(const char *config)
{
    fault_services_init(&fx.f, fault_workspace());
    load_bundle(config, &fx.f.bundle);
}

static void teardown(void)
{
    fx.f.hold_quiescence = false;
    fx.f.lose_range = false;
    if (fx.inst) /* a test may have unloaded already */
        fx.p->unload(fx.inst);
    fault_services_destroy(&fx.f);
    for (int i = 0; i < fx.n_done; i++)
        free(fx.done[i]);
    memset(&fx, 0, sizeof fx);
}

/* One dispatch after the fd is readable (or a short poll): callers check their state between. */
static void pump(void)
{
    struct pollfd pfd = {.fd = fx.p->get_fd(fx.inst), .events = POLLIN};
    (void)poll(&pfd, 1, 20);
    cr_assert_geq(fx.p->dispatch(fx.inst), 0);
}

#define UNTIL(cond)                                                                                \
    do {                                                                                           \
        while (!(cond))                                                                            \
            pump();                                                                                \
    } while (0)

static void on_call(void *ud, dsh_run_id run, uint64_t call, const char *g, const char *n, const char *a, size_t l)
{
    (void)ud, (void)run, (void)call, (void)g, (void)n, (void)a, (void)l;
}

static void on_done(void *ud, dsh_run_id run, const char *json, size_t len)
{
    (void)ud;
    cr_assert_lt(fx.n_done, MAX_RESULTS);
    fx.done_ids[fx.n_done] = run;
    fx.done[fx.n_done++] = strndup(json, len);
}

static const char *result_of(dsh_run_id id)
{
    for (int i = 0; i < fx.n_done; i++)
        if (fx.done_ids[i] == id)
            return fx.done[i];
    return NULL;
}

/* resolve + run; returns the run status (0 or the refusal), *ret_id the run. */
static int start(const char *request, dsh_run_id *ret_id, struct dsh_error *err)
{
    char *spec = NULL;
    size_t spec_len = 0;
    cr_assert_eq(fx.p->resolve(fx.inst, request, strlen(request), &spec, &spec_len, err), 0, "%s", err->message);
    struct dsh_run_callbacks cb = {.struct_size = sizeof cb, .on_call = on_call, .on_done = on_done};
    int rc = fx.p->run(fx.inst, spec, spec_len, &cb, ret_id, err);
    fx.p->free_text(spec);
    return rc;
}

static dsh_run_id start_ok(const char *request)
{
    dsh_run_id id = 0;
    struct dsh_error err = {0};
    cr_assert_eq(start(request, &id, &err), 0, "%s", err.message);
    return id;
}

static struct ptc_run *run_of(dsh_run_id id)
{
    return ptc__run_find(&fx.inst->runs, id);
}

static enum ptc_phase phase_of(dsh_run_id id)
{
    struct ptc_run *run = run_of(id);
    cr_assert_not_null(run, "run %llu already finished", (unsigned long long)id);
    return run->phase;
}

static struct fault_child *child(int i)
{
    cr_assert_lt(i, fx.f.n_children, "process %d was not spawned", i);
    return &fx.f.children[i];
}

/* The environment whose process is child i. */
static struct ptc_env *child_env(int i)
{
    struct dsh_process *process = &child(i)->process;
    for (struct ptc_env *env = ptc__envs_next(&fx.inst->envs, NULL); env; env = ptc__envs_next(&fx.inst->envs, env))
        if (env->process == process)
            return env;
    cr_assert_fail("process %d has no environment", i);
    return NULL;
}

static void hello(struct fault_child *c)
{
    fault_child_send(c, "{\"type\":\"hello\",\"protocol\":1,\"node\":\"v22.12.0\"}");
}

/* Pumps until the child receives a frame; checks its type and returns its run id. */
static long long expect_frame(struct fault_child *c, const char *type)
{
    char *line;
    UNTIL((line = fault_child_take_line(c)) != NULL);
    json_object *frame = json_tokener_parse(line), *v;
    cr_assert_not_null(frame, "%s", line);
    cr_assert(json_object_object_get_ex(frame, "type", &v));
    cr_expect_str_eq(json_object_get_string(v), type, "%s", line);
    long long run = json_object_object_get_ex(frame, "run", &v) ? json_object_get_int64(v) : -1;
    json_object_put(frame);
    free(line);
    return run;
}

static void send_result(struct fault_child *c, long long run, const char *value)
{
    char line[256];
    snprintf(line, sizeof line, "{\"type\":\"result\",\"run\":%lld,\"ok\":true,\"value\":%s}", run, value);
    fault_child_send(c, line);
}

/* Starts `return <value>` as the first process's run and answers hello and the run frame with
 * value; the run's id. */
static dsh_run_id first_run_answered(const char *value)
{
    char request[128];
    snprintf(request, sizeof request, "{\"program\":\"return %s\"}", value);
    dsh_run_id id = start_ok(request);
    UNTIL(fx.f.spawns == 1);
    hello(child(0));
    send_result(child(0), expect_frame(child(0), "run"), value);
    return id;
}

static void expect_result(dsh_run_id id, const char *expected)
{
    UNTIL(result_of(id) != NULL);
    cr_expect_str_eq(result_of(id), expected);
}

#define RETAINED "executionMode: persistent-in-memory\n"
#define OK_RETAINED(value)                                                                         \
    "{\"ok\":true,\"value\":" value ",\"output\":[],\"sandbox\":{\"mode\":\"workspace-write\",\"denied\":false,"  \
    "\"enforcement\":\"none\",\"capabilities\":{}},\"retained\":{\"owner\":\"o\",\"state\":\"preserved\"}}"

/* Runs one program in owner o's environment (process i) to a successful result. */
static void run_in_owner(int i, const char *value)
{
    dsh_run_id id = start_ok("{\"program\":\"1\",\"stateOwner\":\"o\"}");
    if (phase_of(id) == PTC_RUN_STARTING) {
        UNTIL(fx.f.n_children > i);
        hello(child(i));
    }
    long long wire = expect_frame(child(i), "run");
    send_result(child(i), wire, value);
    UNTIL(result_of(id) != NULL);
    cr_expect(strstr(result_of(id), "\"state\":\"preserved\""), "%s", result_of(id));
}

/* ---- env ---------------------------------------------------------------------------------- */

struct consumer {
    int ready, frames, closed, failed;
    char output[64];
    int closed_status;
};

static void c_ready(void *arg) { ((struct consumer *)arg)->ready++; }
static void c_frame(void *arg, const struct ptc_frame *frame)
{
    cr_expect_eq(frame->type, PTC_FRAME_TEXT);
    ((struct consumer *)arg)->frames++;
}
static void c_output(void *arg, const char *text, size_t len)
{
    struct consumer *c = arg;
    size_t used = strlen(c->output);
    cr_assert_lt(used + len, sizeof c->output);
    memcpy(c->output + used, text, len);
    c->output[used + len] = '\0';
}
static void c_failed(void *arg, enum ptc_failure kind, const char *message)
{
    (void)kind, (void)message;
    ((struct consumer *)arg)->failed++;
}
static void c_trailing(void *arg) { (void)arg; }
static void c_closed(void *arg, int status)
{
    ((struct consumer *)arg)->closed++;
    ((struct consumer *)arg)->closed_status = status;
}

static const struct ptc_env_events consumer_events = {c_ready, c_frame, c_output, c_failed, c_trailing, c_closed};

static void on_env_closed(void *arg, int status)
{
    *(int *)arg = status == 0 ? 1 : -1;
}

/* An environment exists without a run (the foundation of a prewarmed process): it confines,
 * starts and idles on its own; a consumer attached to it gets ready at once, its frames and
 * output, and the environment returns to idle when it detaches. */
Test(env, lifecycle_without_a_run, .fini = teardown, .timeout = 30)
{
    load("");
    fx.f.hold_confine = true;
    json_object *policy = json_tokener_parse("{\"mode\":\"workspace-write\",\"workspaceRoot\":\"/tmp\",\"sessionId\":\"s\"}");
    struct ptc_env *env = ptc__env_create(&fx.inst->envs, policy, NULL, "async-function", false);
    json_object_put(policy);
    cr_assert_not_null(env);
    cr_expect_eq(ptc__env_state(env), PTC_ENV_CONFINING);
    pump();
    cr_expect_eq(ptc__env_state(env), PTC_ENV_CONFINING, "spawned before the confinement completed");
    cr_expect_eq(fx.f.spawns, 0);
    fault_complete_confine(&fx.f, 0);
    UNTIL(ptc__env_state(env) != PTC_ENV_CONFINING);
    cr_expect_eq(ptc__env_state(env), PTC_ENV_STARTING);
    cr_expect_eq(fx.f.spawns, 1);
    hello(child(0));
    UNTIL(ptc__env_state(env) != PTC_ENV_STARTING);
    cr_expect_eq(ptc__env_state(env), PTC_ENV_IDLE, "nobody is attached: the process idles");

    struct consumer consumer = {0};
    bool ready = false;
    uint64_t wire = ptc__env_attach(env, &consumer_events, &consumer, &ready);
    cr_expect(ready, "an idle process is ready at once");
    cr_expect_eq(wire, 1);
    cr_expect_eq(ptc__env_state(env), PTC_ENV_BUSY);
    fault_child_send(child(0), "{\"type\":\"text\",\"run\":1,\"text\":\"framed\"}");
    cr_assert_eq(write(child(0)->stdout_fd, "raw", 3), 3);
    UNTIL(consumer.frames == 1 && strcmp(consumer.output, "raw") == 0);
    ptc__env_detach(env, &consumer);
    cr_expect_eq(ptc__env_state(env), PTC_ENV_IDLE);

    int closed = 0;
    cr_assert_eq(ptc__env_wait_closed(env, on_env_closed, &closed), 0);
    ptc__env_terminate(env);
    cr_expect_eq(ptc__env_state(env), PTC_ENV_CLOSING);
    UNTIL(closed != 0);
    cr_expect_eq(closed, 1, "closed after quiescence and drained pipes");
    cr_expect_eq(consumer.closed, 0, "a detached consumer hears nothing more");
    cr_expect_eq(fx.f.releases, 1, "the closed environment was freed");
}

/* A frame for another evaluation than the attached one fails the consumer and ends the process. */
Test(env, a_frame_of_another_evaluation_fails_the_consumer, .fini = teardown, .timeout = 30)
{
    load("");
    json_object *policy = json_tokener_parse("{\"mode\":\"workspace-write\",\"workspaceRoot\":\"/tmp\",\"sessionId\":\"s\"}");
    struct ptc_env *env = ptc__env_create(&fx.inst->envs, policy, NULL, "async-function", false);
    json_object_put(policy);
    struct consumer consumer = {0};
    bool ready = true;
    ptc__env_attach(env, &consumer_events, &consumer, &ready);
    cr_expect_not(ready, "a confining process is not ready");
    UNTIL(fx.f.spawns == 1);
    hello(child(0));
    UNTIL(consumer.ready == 1);
    fault_child_send(child(0), "{\"type\":\"text\",\"run\":2,\"text\":\"x\"}");
    UNTIL(consumer.closed == 1);
    cr_expect_eq(consumer.failed, 1);
    cr_expect_eq(consumer.frames, 0);
    cr_expect_eq(consumer.closed_status, 0);
}

/* ---- run ---------------------------------------------------------------------------------- */

/* STARTING (confinement pending) -> RUNNING (hello, program sent) -> FINISHING once the temporary
 * environment is quiescent, and only then the result. */
Test(run, temporary_phases, .fini = teardown, .timeout = 30)
{
    load("");
    fx.f.hold_confine = true;
    fx.f.hold_quiescence = true;
    dsh_run_id id = start_ok("{\"program\":\"return 42\"}");
    cr_expect_eq(phase_of(id), PTC_RUN_STARTING);
    cr_expect_eq(ptc__env_state(run_of(id)->env), PTC_ENV_CONFINING);
    fault_complete_confine(&fx.f, 0);
    UNTIL(fx.f.spawns == 1);
    cr_expect_eq(phase_of(id), PTC_RUN_STARTING);
    hello(child(0));
    long long wire = expect_frame(child(0), "run");
    cr_expect_eq(wire, 1);
    cr_expect_eq(phase_of(id), PTC_RUN_RUNNING);
    cr_expect_eq(ptc__env_state(run_of(id)->env), PTC_ENV_BUSY);
    send_result(child(0), wire, "42");
    UNTIL(child(0)->terminated);
    for (int i = 0; i < 5; i++)
        pump();
    cr_expect_null(result_of(id), "the result waits for quiescence");
    cr_expect_eq(ptc__env_state(run_of(id)->env), PTC_ENV_CLOSING);
    fault_end_range(&fx.f, child(0));
    UNTIL(result_of(id) || phase_of(id) == PTC_RUN_FINISHING);
    cr_expect_null(result_of(id), "FINISHING comes before delivery");
    expect_result(id, "{\"ok\":true,\"value\":42,\"output\":[],\"sandbox\":{\"mode\":\"workspace-write\","
                      "\"denied\":false,\"enforcement\":\"none\",\"capabilities\":{}}}");
}

/* Where the range can be frozen, the result waits only for the freeze (polled until the service
 * says frozen), carries the output the pipe held, and comes before the range is killed and
 * quiescent; the environment stays listed until it is. */
Test(run, temporary_frozen_then_delivered, .fini = teardown, .timeout = 30)
{
    load("");
    fx.f.can_freeze = true;
    /* Past the polls on consecutive dispatches: the timer polls the rest. */
    fx.f.freeze_polls_pending = 40;
    fx.f.hold_quiescence = true;
    dsh_run_id id = start_ok("{\"program\":\"return 42\"}");
    UNTIL(fx.f.spawns == 1);
    hello(child(0));
    long long wire = expect_frame(child(0), "run");
    cr_assert_eq(write(child(0)->stdout_fd, "tail\n", 5), 5);
    send_result(child(0), wire, "42");
    UNTIL(result_of(id));
    cr_expect(child(0)->frozen);
    cr_expect_eq(fx.f.freezes, 41);
    cr_expect_not(child(0)->quiescent, "delivered before the range is quiescent");
    expect_result(id, "{\"ok\":true,\"value\":42,\"output\":[{\"type\":\"text\",\"text\":\"tail\\n\"}],"
                      "\"sandbox\":{\"mode\":\"workspace-write\",\"denied\":false,\"enforcement\":\"none\","
                      "\"capabilities\":{}}}");
    UNTIL(child(0)->terminated);
    cr_expect(ptc__envs_closing(&fx.inst->envs), "accounted until quiescent");
    fault_end_range(&fx.f, child(0));
    UNTIL(!ptc__envs_closing(&fx.inst->envs));
}

/* A frozen range whose kill or reap fails after its result was delivered has nobody to tell but
 * the host's logger; the environment stays listed so the unload retries the cleanup. */
Test(run, cleanup_failure_after_a_frozen_delivery_is_logged, .fini = teardown, .timeout = 30)
{
    load("");
    fx.f.can_freeze = true;
    fx.f.hold_quiescence = true;
    dsh_run_id id = first_run_answered("42");
    UNTIL(result_of(id));
    UNTIL(child(0)->terminated);
    cr_expect_eq(fx.f.warnings, 0, "nothing failed yet: %s", fx.f.last_warning);
    fx.f.lose_range = true;
    fault_end_range(&fx.f, child(0)); /* the quiescence fd fires; polling it fails */
    UNTIL(fx.f.warnings == 1);
    cr_expect_str_eq(fx.f.last_warning, "a finished Node process's range could not be killed or reaped; it stays "
                                        "listed until a release or the unload retries the cleanup");
    cr_expect(fx.inst->envs.head && ptc__env_cleanup_failed(fx.inst->envs.head), "still listed");
    fx.f.lose_range = false;
}

/* A frame the child sends after its result, while the range is being frozen, is still trailing:
 * the result becomes a protocol failure. */
Test(run, temporary_frame_after_the_result_while_freezing_is_trailing, .fini = teardown, .timeout = 30)
{
    load("");
    fx.f.can_freeze = true;
    fx.f.freeze_polls_pending = 40;
    dsh_run_id id = start_ok("{\"program\":\"return 42\"}");
    UNTIL(fx.f.spawns == 1);
    hello(child(0));
    long long wire = expect_frame(child(0), "run");
    send_result(child(0), wire, "42");
    UNTIL(fx.f.freezes >= 1);
    char line[128];
    snprintf(line, sizeof line, "{\"type\":\"text\",\"run\":%lld,\"text\":\"late\"}", wire);
    fault_child_send(child(0), line);
    UNTIL(result_of(id));
    cr_expect(child(0)->frozen);
    cr_expect_str_eq(result_of(id), "{\"ok\":false,\"error\":{\"kind\":\"protocol\",\"message\":\"control frame after the "
                                    "result\"},\"output\":[],\"sandbox\":{\"mode\":\"workspace-write\",\"denied\":false,"
                                    "\"enforcement\":\"none\",\"capabilities\":{}}}");
}

/* A range that is still not frozen graceMs after the freeze was asked for is killed, and the
 * result then waits for quiescence as without a freezer. After the ask, one poll at once and four
 * on consecutive dispatches, every poll waits at least 50 us on a timer: 32 polls on consecutive
 * dispatches held a core the range's threads needed to reach the freezer. */
Test(run, temporary_freeze_that_never_completes_falls_back, .fini = teardown, .timeout = 30)
{
    load("graceMs: 40\n");
    fx.f.can_freeze = true;
    fx.f.freeze_polls_pending = 1 << 30;
    fx.f.hold_quiescence = true;
    dsh_run_id id = first_run_answered("42");
    UNTIL(child(0)->terminated);
    double polled_ms = (double)(fx.f.last_freeze_ns - fx.f.freeze_ns[0]) / 1e6;
    cr_expect_geq(polled_ms, 39.0, "polled for graceMs (40 ms) before the kill, not %.3f ms",
                  polled_ms);
    cr_assert_gt(fx.f.freezes, 7);
    for (int i = 6; i < fx.f.freezes && i < 128; i++) {
        uint64_t gap_ns = fx.f.freeze_ns[i] - fx.f.freeze_ns[i - 1];
        cr_expect_geq(gap_ns, 50000u,
                      "freeze() call %d came %llu ns after the one before: a poll without a wait",
                      i + 1, (unsigned long long)gap_ns);
    }
    cr_expect_not(child(0)->frozen);
    for (int i = 0; i < 5; i++)
        pump();
    cr_expect_null(result_of(id), "the result waits for quiescence");
    int freezes = fx.f.freezes;
    fault_end_range(&fx.f, child(0));
    UNTIL(result_of(id));
    cr_expect_eq(fx.f.freezes, freezes, "polling stopped");
}

/* A freezer that says unsupported leaves the quiescence wait: the result waits until the range is gone. */
Test(run, temporary_unfreezable_waits_for_quiescence, .fini = teardown, .timeout = 30)
{
    load("");
    fx.f.hold_quiescence = true;
    dsh_run_id id = first_run_answered("42");
    UNTIL(child(0)->terminated);
    for (int i = 0; i < 5; i++)
        pump();
    cr_expect_eq(fx.f.freezes, 1);
    cr_expect_null(result_of(id), "the result waits for quiescence");
    fault_end_range(&fx.f, child(0));
    UNTIL(result_of(id));
}

/* A cancel during a retained evaluation: STOPPING sends revoke; the child's acknowledgment ends
 * the run with the state preserved and the process idle for the owner. */
Test(run, retained_stop_is_revoked, .fini = teardown, .timeout = 30)
{
    load(RETAINED);
    dsh_run_id id = start_ok("{\"program\":\"1\",\"stateOwner\":\"o\"}");
    UNTIL(fx.f.spawns == 1);
    hello(child(0));
    long long wire = expect_frame(child(0), "run");
    cr_assert_eq(fx.p->cancel(fx.inst, id, "stop"), 0);
    cr_expect_eq(phase_of(id), PTC_RUN_STOPPING);
    long long revoke = expect_frame(child(0), "revoke");
    cr_expect_eq(revoke, wire);
    char line[64];
    snprintf(line, sizeof line, "{\"type\":\"revoked\",\"run\":%lld}", wire);
    fault_child_send(child(0), line);
    UNTIL(result_of(id) != NULL);
    cr_expect(strstr(result_of(id), "\"kind\":\"abort\",\"message\":\"execution aborted during execution: stop\""),
              "%s", result_of(id));
    cr_expect(strstr(result_of(id), "\"retained\":{\"owner\":\"o\",\"state\":\"preserved\"}"), "%s", result_of(id));
    cr_expect_eq(fx.f.terminates, 0, "the retained process stays");
    cr_expect_eq(ptc__env_state(fx.inst->envs.head), PTC_ENV_IDLE);
}

/* ---- owners ------------------------------------------------------------------------------- */

/* Two runs of one owner share one process; the second is evaluation 2 of the same environment. */
Test(owners, retained_reuse, .fini = teardown, .timeout = 30)
{
    load(RETAINED);
    run_in_owner(0, "1");
    cr_expect_eq(ptc__env_state(fx.inst->envs.head), PTC_ENV_IDLE);
    dsh_run_id id = start_ok("{\"program\":\"2\",\"stateOwner\":\"o\"}");
    cr_expect_eq(phase_of(id), PTC_RUN_RUNNING, "an idle process takes the program at once");
    cr_expect_eq(ptc__env_state(fx.inst->envs.head), PTC_ENV_BUSY);
    long long wire = expect_frame(child(0), "run");
    cr_expect_eq(wire, 2);
    send_result(child(0), wire, "2");
    expect_result(id, OK_RETAINED("2"));
    cr_expect_eq(fx.f.spawns, 1);
}

static void on_released(void *userdata, const char *owner, int status)
{
    (void)userdata;
    cr_expect_str_eq(owner, "o");
    fx.released++;
    fx.released_status = status;
}

/* release ends the owner's process; on_released waits for quiescence; the next run starts anew. */
Test(owners, release, .fini = teardown, .timeout = 30)
{
    load(RETAINED);
    run_in_owner(0, "1");
    fx.f.hold_quiescence = true;
    struct dsh_error err = {0};
    cr_assert_eq(fx.p->release(fx.inst, "o", on_released, NULL, &err), 0, "%s", err.message);
    UNTIL(child(0)->terminated);
    for (int i = 0; i < 5; i++)
        pump();
    cr_expect_eq(fx.released, 0, "released before the range was quiescent");
    fault_end_range(&fx.f, child(0));
    UNTIL(fx.released == 1);
    cr_expect_eq(fx.released_status, 0);
    fx.f.hold_quiescence = false;
    run_in_owner(1, "3");
    cr_expect_eq(fx.f.spawns, 2);
}

/* A mode change invalidates the owner's idle process at once; a run admitted while it is still
 * closing WAITs, then STARTs in a new process confined under the new mode. */
Test(owners, invalidation_on_mode_change, .fini = teardown, .timeout = 30)
{
    load(RETAINED);
    run_in_owner(0, "1");
    fx.f.hold_quiescence = true;
    fault_change_mode(&fx.f, "read-only");
    cr_expect(ptc__env_invalidated(fx.inst->envs.head));
    cr_expect(child(0)->terminated, "the idle process is terminated at once");
    dsh_run_id id = start_ok("{\"program\":\"2\",\"stateOwner\":\"o\"}");
    cr_expect_eq(phase_of(id), PTC_RUN_WAITING);
    for (int i = 0; i < 5; i++)
        pump();
    cr_expect_eq(phase_of(id), PTC_RUN_WAITING);
    cr_expect_eq(fx.f.spawns, 1);
    fault_end_range(&fx.f, child(0));
    UNTIL(fx.f.spawns == 2);
    cr_expect_eq(phase_of(id), PTC_RUN_STARTING);
    cr_expect_str_eq(ptc__env_identity(run_of(id)->env)->mode, "read-only");
    hello(child(1));
    long long wire = expect_frame(child(1), "run");
    send_result(child(1), wire, "2");
    UNTIL(result_of(id) != NULL);
    cr_expect(strstr(result_of(id), "\"ok\":true,\"value\":2"), "%s", result_of(id));
}

/* A range that can no longer be observed blocks its owner (owner-busy) until a release retries
 * the cleanup successfully. */
Test(owners, cleanup_failure_blocks_the_owner, .fini = teardown, .timeout = 30)
{
    load(RETAINED);
    run_in_owner(0, "1");
    struct ptc_env *env = fx.inst->envs.head;
    fx.f.lose_range = true;
    fault_end_range(&fx.f, child(0)); /* the quiescence fd fires; polling it fails */
    UNTIL(ptc__env_cleanup_failed(env) && ptc__env_state(env) == PTC_ENV_CLOSING);
    for (int i = 0; i < 5; i++)
        pump();
    dsh_run_id id = 0;
    struct dsh_error err = {0};
    cr_expect_eq(start("{\"program\":\"2\",\"stateOwner\":\"o\"}", &id, &err), DSH_E_OWNER_BUSY);
    cr_expect_str_eq(err.message, "cleanup of state owner \"o\" failed; release it before running again");
    cr_expect_eq(fx.f.releases, 0, "the handle is kept so a release can retry");
    fx.f.lose_range = false;
    cr_assert_eq(fx.p->release(fx.inst, "o", on_released, NULL, &err), 0, "%s", err.message);
    UNTIL(fx.released == 1);
    cr_expect_eq(fx.released_status, 0);
    run_in_owner(1, "2");
}

/* ---- idle expiry and the retained-owner bound (idleReleaseMs, maxRetainedOwners) ------------ */

/* Runs `1` for owner in process i (spawned and said hello when new) and answers value; returns
 * the result. */
static const char *run_as(const char *owner, int i, const char *value)
{
    char request[128];
    snprintf(request, sizeof request, "{\"program\":\"1\",\"stateOwner\":\"%s\"}", owner);
    dsh_run_id id = start_ok(request);
    if (phase_of(id) != PTC_RUN_RUNNING) {
        UNTIL(fx.f.n_children > i);
        hello(child(i));
    }
    send_result(child(i), expect_frame(child(i), "run"), value);
    UNTIL(result_of(id) != NULL);
    cr_expect(strstr(result_of(id), "\"state\":\"preserved\""), "%s", result_of(id));
    return result_of(id);
}

/* Pumps the loop for at least ms (a lower bound: the effect under test must not happen). */
static void pump_for(int ms)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        pump();
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

#define RELEASED_IDLE "\"released\":{\"reason\":\"idleReleaseMs\",\"message\":\"the earlier environment of state owner \\\"o\\\" was released after 100 ms without a run (idleReleaseMs); this run started in a fresh one, so earlier variables are gone\"}"

/* An owner idle for idleReleaseMs loses its process; its next run starts a fresh one and its
 * result says why, once. */
Test(expiry, an_idle_owner_is_released, .fini = teardown, .timeout = 30)
{
    load(RETAINED "idleReleaseMs: 100\n");
    run_in_owner(0, "1");
    UNTIL(child(0)->terminated);
    UNTIL(!ptc__envs_closing(&fx.inst->envs));
    cr_expect(child(0)->released, "the range was released");
    const char *again = run_as("o", 1, "2");
    cr_expect(strstr(again, "\"retained\":{\"owner\":\"o\",\"state\":\"preserved\"," RELEASED_IDLE "}"), "%s", again);
    cr_expect_eq(fx.f.spawns, 2);
    /* Told once: the run after it finds its environment (the timer restarted at its end). */
    const char *third = run_as("o", 1, "3");
    cr_expect_null(strstr(third, "\"released\""), "%s", third);
}

/* Control: without idleReleaseMs an idle owner keeps its process. */
Test(expiry, without_idle_release_an_idle_owner_stays, .fini = teardown, .timeout = 30)
{
    load(RETAINED);
    run_in_owner(0, "1");
    pump_for(500);
    cr_expect(!child(0)->terminated);
    cr_expect_eq(fx.f.terminates, 0);
    const char *again = run_as("o", 0, "2");
    cr_expect_null(strstr(again, "\"released\""), "%s", again);
    cr_expect_eq(fx.f.spawns, 1);
}

/* A run that lasts longer than idleReleaseMs (a pending binding call included) is never expired;
 * idle time counts from its end, after which the owner is released. */
Test(expiry, never_while_a_run_is_active, .fini = teardown, .timeout = 30)
{
    load(RETAINED "idleReleaseMs: 100\n");
    run_in_owner(0, "1");
    dsh_run_id id = start_ok("{\"program\":\"2\",\"stateOwner\":\"o\",\"bindings\":[{\"global\":\"tools\",\"functions\":[\"x\"]}]}");
    long long wire = expect_frame(child(0), "run");
    char line[160];
    snprintf(line, sizeof line, "{\"type\":\"call\",\"run\":%lld,\"call\":1,\"global\":\"tools\",\"name\":\"x\",\"args\":[]}", wire);
    fault_child_send(child(0), line);
    pump_for(600);
    cr_expect(!child(0)->terminated, "expired during its run");
    cr_assert_null(result_of(id), "%s", result_of(id));
    send_result(child(0), wire, "2");
    UNTIL(result_of(id) != NULL);
    cr_expect(strstr(result_of(id), "\"ok\":true,\"value\":2"), "%s", result_of(id));
    UNTIL(child(0)->terminated); /* the control: idle after its run, it goes */
}

/* An explicit release forgets the notice: the next run has nothing to be told. */
Test(expiry, release_forgets_the_notice, .fini = teardown, .timeout = 30)
{
    load(RETAINED "idleReleaseMs: 100\n");
    run_in_owner(0, "1");
    UNTIL(child(0)->terminated);
    UNTIL(!ptc__envs_closing(&fx.inst->envs));
    struct dsh_error err = {0};
    cr_assert_eq(fx.p->release(fx.inst, "o", on_released, NULL, &err), 0, "%s", err.message);
    UNTIL(fx.released == 1);
    const char *again = run_as("o", 1, "2");
    cr_expect_null(strstr(again, "\"released\""), "%s", again);
}

/* maxRetainedOwners: 2 and three owners: the third releases the least recently used idle one
 * (b, since a ran again after it); a keeps its process; b's next run is told and releases the
 * then least recently used (c, since a ran after it). */
Test(expiry, the_least_recently_used_idle_owner_makes_room, .fini = teardown, .timeout = 30)
{
    load(RETAINED "maxRetainedOwners: 2\n");
    run_as("a", 0, "1");
    run_as("b", 1, "1");
    run_as("a", 0, "2");
    cr_expect_eq(fx.f.terminates, 0);
    const char *c = run_as("c", 2, "1");
    cr_expect_null(strstr(c, "\"released\""), "%s", c);
    cr_expect(child(1)->terminated, "b, the least recently used, makes room");
    cr_expect(!child(0)->terminated && !child(2)->terminated);
    cr_expect_eq(fx.f.terminates, 1);
    const char *a = run_as("a", 0, "3");
    cr_expect_null(strstr(a, "\"released\""), "%s", a);
    const char *b = run_as("b", 3, "1");
    cr_expect(strstr(b, "\"released\":{\"reason\":\"maxRetainedOwners\",\"message\":\"the earlier environment of state "
                        "owner \\\"b\\\" was released as the least recently used one when another owner needed room "
                        "(maxRetainedOwners: 2); this run started in a fresh one, so earlier variables are gone\"}"),
              "%s", b);
    cr_expect(child(2)->terminated, "c is now the least recently used");
    cr_expect(!child(0)->terminated);
}

/* When every retained environment has a run in progress, a new owner's run is refused with
 * limit; once one has ended, it is admitted and that one makes room. */
Test(expiry, a_new_owner_is_refused_while_every_one_is_busy, .fini = teardown, .timeout = 30)
{
    load(RETAINED "maxRetainedOwners: 2\n");
    run_as("a", 0, "1");
    run_as("b", 1, "1");
    dsh_run_id ra = start_ok("{\"program\":\"1\",\"stateOwner\":\"a\"}");
    long long wa = expect_frame(child(0), "run");
    dsh_run_id rb = start_ok("{\"program\":\"1\",\"stateOwner\":\"b\"}");
    long long wb = expect_frame(child(1), "run");
    dsh_run_id id = 0;
    struct dsh_error err = {0};
    cr_expect_eq(start("{\"program\":\"1\",\"stateOwner\":\"c\"}", &id, &err), DSH_E_LIMIT);
    cr_expect_str_eq(err.message, "maxRetainedOwners (2) reached: every retained environment has a run in progress, "
                                  "so none can be released for state owner \"c\"; retry once one has ended");
    cr_expect_eq(fx.f.terminates, 0);
    send_result(child(1), wb, "2");
    UNTIL(result_of(rb) != NULL);
    run_as("c", 2, "1");
    cr_expect(child(1)->terminated && !child(0)->terminated);
    send_result(child(0), wa, "2");
    UNTIL(result_of(ra) != NULL);
}

/* Control: without maxRetainedOwners three owners keep three processes. */
Test(expiry, without_a_bound_every_owner_stays, .fini = teardown, .timeout = 30)
{
    load(RETAINED);
    run_as("a", 0, "1");
    run_as("b", 1, "1");
    run_as("c", 2, "1");
    const char *a = run_as("a", 0, "2");
    cr_expect_null(strstr(a, "\"released\""), "%s", a);
    cr_expect_eq(fx.f.terminates, 0);
    cr_expect_eq(fx.f.spawns, 3);
}

/* ---- prewarmed processes (env/pool.c) --------------------------------------------------------- */

#define PREWARM(n) "prewarmProcesses: " #n "\n"
#define OK_TEMPORARY(value)                                                                        \
    "{\"ok\":true,\"value\":" value ",\"output\":[],\"sandbox\":{\"mode\":\"workspace-write\",\"denied\":false,"  \
    "\"enforcement\":\"none\",\"capabilities\":{}}}"

/* Expects process i's next line to be warm-up evaluation `run` (PTC_WARM_UP_EVALUATIONS, wires 1
 * and 2): the constant program, with the warm-up binding only, marked `warmUp`. */
static void expect_warm_up_frame(int i, unsigned run)
{
    char *line;
    UNTIL((line = fault_child_take_line(child(i))) != NULL);
    json_object *program = json_object_new_string(ptc__node_warm_up_program);
    char want[1200];
    snprintf(want, sizeof want, "{\"type\":\"run\",\"run\":%u,\"format\":\"async-function\",\"retain\":false,"
             "\"program\":%s,\"cwd\":\"%s\",\"discardCompletion\":true,\"bindings\":[{\"global\":\""
             PTC_NODE_WARM_UP_GLOBAL "\",\"functions\":[\"" PTC_NODE_WARM_UP_FUNCTION "\"]}],\"warmUp\":true}", run,
             json_object_to_json_string_ext(program, JSON_C_TO_STRING_PLAIN), fault_workspace());
    json_object_put(program);
    cr_expect_str_eq(line, want);
    free(line);
}

/* Process i calls `global.name` with call id `call` of warm-up evaluation `run`. */
static void warm_up_call(int i, unsigned run, unsigned call, const char *global)
{
    char frame[200];
    snprintf(frame, sizeof frame, "{\"type\":\"call\",\"run\":%u,\"call\":%u,\"global\":\"%s\",\"name\":\""
             PTC_NODE_WARM_UP_FUNCTION "\",\"args\":[{\"call\": %u}]}", run, call, global, call);
    fault_child_send(child(i), frame);
}

/* The host's answer to warm_up_call: the arguments, compacted. */
static void expect_warm_up_reply(int i, unsigned call)
{
    char *line, want[120];
    UNTIL((line = fault_child_take_line(child(i))) != NULL);
    snprintf(want, sizeof want, "{\"type\":\"reply\",\"call\":%u,\"ok\":true,\"value\":[{\"call\":%u}]}", call, call);
    cr_expect_str_eq(line, want);
    free(line);
}

/* Pumps until process i was spawned and plays its start: hello, then the constant warm-up
 * evaluations, each sent after the previous one's result: PTC_NODE_WARM_UP_CALLS calls of the
 * warm-up binding, each answered with its arguments, and then an ok result. */
static void warm(int i)
{
    UNTIL(fx.f.n_children > i);
    hello(child(i));
    for (unsigned run = 1; run <= PTC_WARM_UP_EVALUATIONS; run++) {
        expect_warm_up_frame(i, run);
        for (unsigned call = 1; call <= PTC_NODE_WARM_UP_CALLS; call++) {
            warm_up_call(i, run, call, PTC_NODE_WARM_UP_GLOBAL);
            expect_warm_up_reply(i, call);
        }
        cr_expect_eq(ptc__env_state(child_env(i)), PTC_ENV_STARTING, "not ready before its last warm-up");
        char result[96];
        snprintf(result, sizeof result, "{\"type\":\"result\",\"run\":%u,\"ok\":true}", run);
        fault_child_send(child(i), result);
    }
    UNTIL(ptc__env_state(child_env(i)) == PTC_ENV_IDLE);
}

/* A temporary run served by process i (already started) to its result. */
static void serve_one(int i, const char *value)
{
    dsh_run_id id = start_ok("{\"program\":\"return 1\"}");
    long long wire = expect_frame(child(i), "run");
    send_result(child(i), wire, value);
    char expected[512];
    snprintf(expected, sizeof expected, OK_TEMPORARY("%s"), value);
    expect_result(id, expected);
}

/* The policy's first run: cold (child 0), since nothing is pooled before a policy is seen. */
static void first_cold_run(void)
{
    expect_result(first_run_answered("1"), OK_TEMPORARY("1"));
}

/* The first run of a policy is cold; after its result the pool starts one process, which is
 * warmed, serves the next run only (its evaluation is wire 3, after the warm-ups' 1 and 2) and
 * ends with it; the pool refills with a new one. */
Test(pool, a_prewarmed_process_serves_one_program, .fini = teardown, .timeout = 30)
{
    load(PREWARM(1));
    first_cold_run();
    warm(1);
    cr_expect_eq(ptc__pool_size(&fx.inst->pool), 1);
    cr_expect_eq(fx.f.spawns, 2);
    dsh_run_id id = start_ok("{\"program\":\"return 2\"}");
    cr_expect_eq(ptc__pool_size(&fx.inst->pool), 0, "taken: it left the pool");
    long long wire = expect_frame(child(1), "run");
    cr_expect_eq(wire, 3);
    cr_expect_eq(fx.f.spawns, 2, "served without starting a process");
    send_result(child(1), wire, "2");
    expect_result(id, OK_TEMPORARY("2"));
    cr_expect(child(1)->terminated, "it ends with its run");
    warm(2);
    serve_one(2, "3");
    cr_expect(child(2)->terminated);
}

/* A run under another policy (an approved one-time mode) does not take the pooled process and
 * leaves no process of its policy behind: only a session's standing policy is pooled. */
Test(pool, another_policy_starts_cold_and_is_not_pooled, .fini = teardown, .timeout = 30)
{
    load(PREWARM(1));
    first_cold_run();
    warm(1);
    dsh_run_id id = start_ok("{\"program\":\"return 2\",\"mode\":\"read-only\"}");
    UNTIL(fx.f.spawns == 3);
    cr_expect_eq(ptc__pool_size(&fx.inst->pool), 1, "the pooled process stays for its own policy");
    cr_expect_str_eq(ptc__env_identity(run_of(id)->env)->mode, "read-only");
    hello(child(2));
    send_result(child(2), expect_frame(child(2), "run"), "2");
    UNTIL(result_of(id));
    for (int i = 0; i < 5; i++)
        pump();
    cr_expect_eq(fx.f.spawns, 3, "no refill for a policy that is not the session's standing one");
    cr_expect_eq(ptc__pool_size(&fx.inst->pool), 1);
    serve_one(1, "3");
}

/* prewarmProcesses bounds the pool: two at most, refilled one for one. */
Test(pool, never_more_than_configured, .fini = teardown, .timeout = 30)
{
    load(PREWARM(2));
    first_cold_run();
    warm(1);
    warm(2);
    cr_expect_eq(fx.f.spawns, 3);
    cr_expect_eq(ptc__pool_size(&fx.inst->pool), 2);
    for (int i = 0; i < 4; i++) {
        /* The oldest pooled process serves: 1, 2, then each refill in turn. */
        serve_one(1 + i, "7");
        cr_expect_leq(ptc__pool_size(&fx.inst->pool), 2);
        warm(3 + i);
        cr_expect_eq(ptc__pool_size(&fx.inst->pool), 2);
    }
    cr_expect_eq(fx.f.spawns, 7);
}

/* A mode change of the session drains the pool at once; the next run starts cold under the new
 * mode and the refill follows that mode. */
Test(pool, a_mode_change_drains_the_pool, .fini = teardown, .timeout = 30)
{
    load(PREWARM(1));
    first_cold_run();
    warm(1);
    fault_change_mode(&fx.f, "read-only");
    cr_expect_eq(ptc__pool_size(&fx.inst->pool), 0);
    UNTIL(child(1)->terminated);
    dsh_run_id id = start_ok("{\"program\":\"return 2\"}");
    UNTIL(fx.f.spawns == 3);
    cr_expect_str_eq(ptc__env_identity(run_of(id)->env)->mode, "read-only");
    hello(child(2));
    send_result(child(2), expect_frame(child(2), "run"), "2");
    UNTIL(result_of(id));
    UNTIL(fx.f.spawns == 4);
    cr_expect_str_eq(ptc__env_identity(child_env(3))->mode, "read-only");
}

/* Releasing an owner drains the pool too. */
Test(pool, release_drains_the_pool, .fini = teardown, .timeout = 30)
{
    load(PREWARM(1));
    first_cold_run();
    warm(1);
    struct dsh_error err = {0};
    cr_assert_eq(fx.p->release(fx.inst, "o", on_released, NULL, &err), 0, "%s", err.message);
    cr_expect_eq(ptc__pool_size(&fx.inst->pool), 0);
    UNTIL(child(1)->terminated && fx.released == 1);
}

/* A process nobody takes is ended prewarmIdleMs after it was started. */
Test(pool, an_idle_process_is_reaped, .fini = teardown, .timeout = 30)
{
    load(PREWARM(1) "prewarmIdleMs: 300\n");
    first_cold_run();
    warm(1);
    UNTIL(child(1)->terminated);
    cr_expect_eq(ptc__pool_size(&fx.inst->pool), 0);
    UNTIL(!ptc__envs_closing(&fx.inst->envs));
}

/* A warm-up that does not succeed ends the process; it never serves. */
Test(pool, a_failed_warm_up_ends_the_process, .fini = teardown, .timeout = 30)
{
    load(PREWARM(1));
    first_cold_run();
    UNTIL(fx.f.n_children > 1);
    hello(child(1));
    cr_expect_eq(expect_frame(child(1), "run"), 1);
    fault_child_send(child(1), "{\"type\":\"result\",\"run\":1,\"ok\":false,\"error\":{\"kind\":\"exception\",\"message\":\"x\"}}");
    UNTIL(child(1)->terminated);
    UNTIL(ptc__pool_size(&fx.inst->pool) == 0); /* its slot goes once it has closed */
    cr_expect_eq(fx.f.spawns, 2, "no refill until a run needs one");
}

/* A warm-up may call its own binding only, and at most PTC_WARM_UP_CALLS_MAX times in all:
 * anything else ends the process, which never serves. */
static void warm_up_breaks_with(unsigned calls, const char *global)
{
    load(PREWARM(1));
    first_cold_run();
    UNTIL(fx.f.n_children > 1);
    hello(child(1));
    expect_warm_up_frame(1, 1);
    for (unsigned call = 1; call < calls; call++) {
        warm_up_call(1, 1, call, PTC_NODE_WARM_UP_GLOBAL);
        expect_warm_up_reply(1, call);
    }
    cr_expect_not(child(1)->terminated);
    warm_up_call(1, 1, calls, global);
    UNTIL(child(1)->terminated);
    UNTIL(ptc__pool_size(&fx.inst->pool) == 0);
    cr_expect_null(fault_child_take_line(child(1)), "no reply to the breaking call");
}

Test(pool, a_warm_up_call_of_another_binding_ends_the_process, .fini = teardown, .timeout = 30)
{
    warm_up_breaks_with(3, "tools");
}

Test(pool, a_warm_up_call_beyond_the_bound_ends_the_process, .fini = teardown, .timeout = 30)
{
    warm_up_breaks_with(PTC_WARM_UP_CALLS_MAX + 1, PTC_NODE_WARM_UP_GLOBAL);
}

/* Unload ends and releases every pooled process. */
Test(pool, unload_leaves_no_process, .fini = teardown, .timeout = 30)
{
    load(PREWARM(2));
    first_cold_run();
    warm(1);
    UNTIL(fx.f.n_children > 2); /* the second one still starting */
    fx.p->unload(fx.inst);
    fx.inst = NULL;
    cr_expect_eq(fx.f.spawns, 3);
    cr_expect_eq(fx.f.releases, 3);
    for (int i = 0; i < 3; i++)
        cr_expect(child(i)->terminated && child(i)->released, "process %d", i);
}

/* ---- faults the environment reports upward ----------------------------------------------- */

/* A temporary run of "1", with the faults the test set up, ends with a result containing text. */
static void expect_failure(const char *text)
{
    dsh_run_id id = start_ok("{\"program\":\"1\"}");
    UNTIL(result_of(id) != NULL);
    cr_expect(strstr(result_of(id), text), "%s", result_of(id));
}

Test(faults, confinement_failure_is_sandbox_unavailable, .fini = teardown, .timeout = 30)
{
    load("");
    fx.f.confine_status = DSH_E_SANDBOX_UNAVAILABLE;
    expect_failure("\"kind\":\"sandbox-unavailable\",\"message\":\"the sandbox could not confine the program: the "
                   "required confinement is not available\"");
    cr_expect_eq(fx.f.spawns, 0);
}

Test(faults, spawn_failure_is_worker_exit, .fini = teardown, .timeout = 30)
{
    load("");
    fx.f.spawn_status = DSH_E_SPAWN_FAILED;
    expect_failure("\"kind\":\"worker-exit\",\"message\":\"the process could not be started: injected spawn failure\"");
}

/* A range that ends killed while usage() (ABI 1.3) counts an OOM kill was killed at its memory
 * limit: worker-exit naming maxMemoryMb. Control: the same end without the count keeps the
 * general description. */
Test(faults, a_kill_at_the_memory_limit_names_max_memory_mb, .fini = teardown, .timeout = 30)
{
    load("maxMemoryMb: 300\n");
    for (int i = 0; i < 2; i++) {
        dsh_run_id id = start_ok("{\"program\":\"1\"}");
        UNTIL(fx.f.spawns == i + 1);
        hello(child(i));
        (void)expect_frame(child(i), "run");
        fx.f.oom_kills = i == 0 ? 1 : 0;
        child(i)->terminated = true; /* the kernel's SIGKILL, as poll_quiescent reports it */
        fault_end_range(&fx.f, child(i));
        UNTIL(result_of(id) != NULL);
        if (i == 0)
            cr_expect(strstr(result_of(id), "\"kind\":\"worker-exit\",\"message\":\"the program exceeded its "
                                             "memory limit (maxMemoryMb: 300); the kernel killed it (signal KILL)\""),
                      "%s", result_of(id));
        else
            cr_expect(strstr(result_of(id), "(signal KILL)") && !strstr(result_of(id), "maxMemoryMb"), "%s",
                      result_of(id));
    }
}

/* A run cancelled while its confinement is pending never starts the program: the pending
 * confine() is abandoned. */
Test(faults, cancel_while_confining_abandons_the_confinement, .fini = teardown, .timeout = 30)
{
    load("");
    fx.f.hold_confine = true;
    dsh_run_id id = start_ok("{\"program\":\"1\"}");
    cr_assert_eq(fx.p->cancel(fx.inst, id, "stop"), 0);
    UNTIL(result_of(id) != NULL);
    cr_expect(fx.f.confine_cancelled);
    cr_expect_eq(fx.f.spawns, 0);
    cr_expect(strstr(result_of(id), "\"kind\":\"abort\",\"message\":\"execution aborted before code started: stop\""),
              "%s", result_of(id));
}

/* ---- services from an older minor host ---------------------------------------------------- */

/* A 1.0 host that ends the bundle before `runtime` passes exactly that many bytes: load copies
 * only those (AddressSanitizer reports a read past them) and the runtime works. */
Test(services, a_bundle_ending_before_runtime_is_accepted, .fini = teardown, .timeout = 30)
{
    fault_services_init(&fx.f, fault_workspace());
    size_t size = offsetof(struct dsh_services, runtime);
    fx.f.bundle.struct_size = (uint32_t)size;
    void *older = malloc(size);
    cr_assert_not_null(older);
    memcpy(older, &fx.f.bundle, size);
    load_bundle("", older);
    free(older);
    dsh_run_id id = start_ok("{\"program\":\"return 7\"}");
    UNTIL(fx.f.spawns == 1);
    hello(child(0));
    send_result(child(0), expect_frame(child(0), "run"), "7");
    UNTIL(result_of(id) != NULL);
    cr_expect(strstr(result_of(id), "\"ok\":true,\"value\":7"), "%s", result_of(id));
}

/* A service whose struct_size stops short of a method the runtime calls is refused, and so is
 * a bundle that does not reach the logger field. */
Test(services, a_service_without_a_needed_method_is_refused)
{
    fault_services_init(&fx.f, fault_workspace());
    const struct dsh_provider *p = dsh_provider_entry(DSH_ABI_MAJOR);
    struct dsh_instance *inst = NULL;
    struct dsh_error err = {0};
    fx.f.subprocess.struct_size = offsetof(struct dsh_subprocess_service, release);
    cr_expect_eq(p->load("", 0, &fx.f.bundle, &inst, &err), DSH_E_CONFIG_INVALID);
    cr_expect_str_eq(err.message, "the runtime requires the fs, subprocess, sandbox and sandboxPolicy services (ABI v1)");
    fx.f.subprocess.struct_size = sizeof fx.f.subprocess;
    fx.f.bundle.struct_size = offsetof(struct dsh_services, logger);
    cr_expect_eq(p->load("", 0, &fx.f.bundle, &inst, &err), -EINVAL);
    cr_expect_str_eq(err.message, "load needs a services bundle and ret_instance");
    cr_expect_null(inst);
}

/* ---- roots: the policy's workspace is checked at resolve (caller misuse) ------------------- */

static int resolve_with_root(const char *mode, const char *root, const char *request, struct dsh_error *err)
{
    snprintf(fx.f.mode, sizeof fx.f.mode, "%s", mode);
    snprintf(fx.f.workspace_root, sizeof fx.f.workspace_root, "%s", root);
    char *spec = NULL;
    int rc = fx.p->resolve(fx.inst, request, strlen(request), &spec, NULL, err);
    fx.p->free_text(spec);
    return rc;
}

Test(roots, a_policy_workspace_that_defeats_the_sandbox_is_refused_at_resolve, .fini = teardown, .timeout = 30)
{
    load("");
    struct dsh_error err = {0};
    const char *plain = "{\"program\":\"return 1\"}";
    cr_expect_eq(resolve_with_root("read-only", "/", plain, &err), DSH_E_REQUEST_INVALID);
    cr_expect_str_eq(err.message, "sandboxPolicy workspaceRoot \"/\" is refused: it is the filesystem root");
    cr_expect_eq(resolve_with_root("workspace-write", "/etc", plain, &err), DSH_E_REQUEST_INVALID);
    cr_expect_str_eq(err.message, "sandboxPolicy workspaceRoot \"/etc\" is refused: /etc is a system directory, never writable");
    /* Through a symlink and `..`: judged by what it resolves to. */
    char link[128];
    snprintf(link, sizeof link, "%s/to-root", fault_workspace());
    cr_assert_eq(symlink("/", link), 0);
    cr_expect_eq(resolve_with_root("read-only", link, plain, &err), DSH_E_REQUEST_INVALID);
    char want[512];
    snprintf(want, sizeof want, "sandboxPolicy workspaceRoot \"%s\" (resolves to /) is refused: it is the filesystem root", link);
    cr_expect_str_eq(err.message, want);
    unlink(link);
    cr_expect_eq(resolve_with_root("workspace-write", "/usr/../etc/ssl", plain, &err), DSH_E_REQUEST_INVALID);
    cr_expect_str_eq(err.message, "sandboxPolicy workspaceRoot \"/usr/../etc/ssl\" (resolves to /etc/ssl) is refused: "
                                  "it lies inside the system directory /etc, never writable");
    /* A one-time escalation to workspace-write is judged in the mode it runs in. */
    cr_expect_eq(resolve_with_root("read-only", "/home", "{\"program\":\"1\",\"mode\":\"workspace-write\"}", &err),
                 DSH_E_REQUEST_INVALID);
    cr_expect_str_eq(err.message, "sandboxPolicy workspaceRoot \"/home\" is refused: /home is a system directory, never writable");
    /* Controls: reading a system directory is fine, so is writing a project directory, and
     * danger-full-access is unconfined by choice. */
    cr_expect_eq(resolve_with_root("read-only", "/etc", plain, &err), 0, "%s", err.message);
    cr_expect_eq(resolve_with_root("workspace-write", fault_workspace(), plain, &err), 0, "%s", err.message);
    cr_expect_eq(resolve_with_root("danger-full-access", "/home", plain, &err), 0, "%s", err.message);
}

/* One MCP session of `dsh mcp`, whatever carries its messages (stdio: dshh_mcp_server.c, HTTP:
 * dshh_mcp_http.c): the tool run_code, that runs a program through the loaded provider. Its
 * description is generated from describe() and the standing policy; output streams as progress
 * notifications, the result is text and image content (and the completion value unless the
 * runtime row discards it), cancellation aborts the run; a retaining profile keeps one stateOwner
 * for the session and releases it at its end. With yieldAfterMs a run goes on in the background
 * (dshh_mcp_background.c keeps its output and result): wait_run, terminate_run and list_runs
 * answer from there. examples/host/README.md, "dsh mcp" and "Background runs". */
#include "dshh_mcp_session.h"

#include "dshh_demo_tools.h"
#include "dshh_mcp_background.h"
#include "dshh_mcp_content.h"
#include "dshh_mcp_downstream.h"
#include "dshh_mcp_tools.h"
#include "dshh_names.h"
#include "dshh_native_bindings.h"
#include "dshh_request.h"
#include "dshh_serve_events.h"

#include "dsh_json_get.h"
#include "dsh_typed_config.h"
#include "dsh_json_strict.h"
#include "dsh_text_buffer.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOOL_NAME "run_code"
#define TOOL_TITLE  "Run a TypeScript program"
/* yieldAfterMs of run_code and wait_run: at most this, wait_run's default that. */
#define MAX_YIELD_MS    600000
#define WAIT_DEFAULT_MS 10000

struct mcall {
    struct mcall *next;
    struct dshh_mcp_session *m;
    json_object *id;    /* the tools/call request's id */
    json_object *token; /* its progressToken, or NULL */
    int64_t progress;
    char *request; /* the run request, until the run starts */
    dsh_run_id run;
    bool started, cancelled;
    struct dshh_demo_pending *pending;
    /* With yieldAfterMs: its background entry, the yield, the host's deadline (a timeoutMs beyond
     * the provider's maximum, up to maxBackgroundMs) and whether the call returned running. */
    struct dshh_mcp_bg_run *bg;
    int64_t yield_ms, deadline_ms, deadline_timer;
    bool yielded;
    struct timespec begun; /* for the log line */
};

/* A tool call waiting for a background run: run_code's until its yield, wait_run's, or
 * terminate_run's (no timer: until the run ends). */
struct waiter {
    struct waiter *next;
    struct dshh_mcp_session *m;
    json_object *id;
    struct dshh_mcp_bg_run *run;
    struct mcall *call; /* the run_code call it answers, or NULL */
    int64_t timer;
};

struct dshh_mcp_session {
    struct dshh_host *host;
    struct dshh_mcp_shared *sh;
    const struct dshh_mcp_sink *sink;
    void *sink_arg;
    char *policy_session; /* the sandbox-policy session of its runs, or NULL: the default one */
    struct mcall *calls; /* in arrival order: started ones, then queued ones (retaining profiles) */
    struct dshh_mcp_background bg; /* background runs (yieldAfterMs) */
    struct waiter *waiters;
    char owner[96];
    bool owner_used, releasing, released;
    bool ended, finished;
};

static void end_session(struct dshh_mcp_session *m, const char *why);

/* ---- JSON-RPC out ---------------------------------------------------------------------------------- */

static void send_message(struct dshh_mcp_session *m, json_object *msg, dsh_run_id progress_of)
{
    json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
    m->sink->send(m->sink_arg, msg, progress_of);
}

static void respond(struct dshh_mcp_session *m, json_object *id, json_object *result)
{
    json_object *msg = json_object_new_object();
    json_object_object_add(msg, "id", json_object_get(id));
    json_object_object_add(msg, "result", result);
    send_message(m, msg, 0);
    json_object_put(msg);
}

static void respond_error(struct dshh_mcp_session *m, json_object *id, int code, const char *message)
{
    json_object *msg = json_object_new_object(), *err = json_object_new_object();
    json_object_object_add(msg, "id", id ? json_object_get(id) : NULL);
    json_object_object_add(err, "code", json_object_new_int(code));
    json_object_object_add(err, "message", json_object_new_string(message));
    json_object_object_add(msg, "error", err);
    send_message(m, msg, 0);
    json_object_put(msg);
}

/* A tool result that only says what went wrong (isError: true). */
static json_object *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_object *tool_error(const char *fmt, ...)
{
    char text[DSH_ERROR_MESSAGE_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    dsh_utf8_vformat(text, sizeof text, fmt, ap);
    va_end(ap);
    json_object *result = json_object_new_object(), *content = json_object_new_array(), *item = json_object_new_object();
    json_object_object_add(item, "type", json_object_new_string("text"));
    json_object_object_add(item, "text", json_object_new_string(text));
    json_object_array_add(content, item);
    json_object_object_add(result, "content", content);
    json_object_object_add(result, "isError", json_object_new_boolean(1));
    return result;
}

/* ---- the session ------------------------------------------------------------------------------------ */

/* The ended session has no call left and its owner is released: the transport may free it. */
static void finish(struct dshh_mcp_session *m)
{
    if (m->finished)
        return;
    m->finished = true;
    m->sink->finished(m->sink_arg); /* may free m */
}

static void on_released(void *userdata, const char *owner, int status)
{
    struct dshh_mcp_session *m = userdata;
    if (status < 0)
        fprintf(stderr, "dsh: releasing %s failed: %s\n", owner, dsh_strerror(status));
    m->releasing = false;
    m->released = true;
    if (m->ended)
        finish(m);
}

/* At the end of the session, after its last run: release its owner, then finish. */
static void maybe_finish(struct dshh_mcp_session *m)
{
    if (!m->ended || m->calls || m->releasing || m->finished)
        return;
    if (m->owner_used && !m->released) {
        struct dsh_error err = {0};
        m->releasing = true;
        if (m->host->provider->release(m->host->instance, m->owner, on_released, m, &err) == 0)
            return;
        fprintf(stderr, "dsh: releasing %s failed: %s\n", m->owner, err.message);
        m->releasing = false;
        m->released = true;
    }
    finish(m);
}

static void unlink_call(struct dshh_mcp_session *m, struct mcall *c)
{
    for (struct mcall **link = &m->calls; *link; link = &(*link)->next)
        if (*link == c) {
            *link = c->next;
            break;
        }
    if (c->bg && !c->started) { /* a queued background run that never started: nothing to keep */
        dshh__bg_collect(&m->bg.list, &c->bg->base);
    }
    json_object_put(c->id);
    json_object_put(c->token);
    free(c->request);
    free(c);
}

static void start_next(struct dshh_mcp_session *m);

/* ---- runs ---------------------------------------------------------------------------------------- */

static void on_call(void *userdata, dsh_run_id run, uint64_t call, const char *global, const char *name,
                    const char *args_json, size_t args_len)
{
    struct mcall *c = userdata;
    struct dshh_host *host = c->m->host;
    if (dshh__mcp_tools_call(&c->m->sh->tools, run, call, global, name, args_json, args_len,
                             &c->pending))
        return;
    if (dshh__mcp_downstream_call(&c->m->sh->ds, run, call, global, name, args_json, args_len))
        return;
    static const char unknown[] = "dsh mcp: no binding with this name";
    host->provider->reply(host->instance, run, call, false, unknown, sizeof unknown - 1);
}

/* Progress while the run is going, for a client that asked with a progressToken. */
static void on_output(void *userdata, dsh_run_id run, const char *entry_json, size_t entry_len)
{
    struct mcall *c = userdata;
    if (c->bg)
        dshh__mcp_bg_output(c->bg, entry_json, entry_len);
    if (!c->token || c->yielded || c->cancelled)
        return;
    char *message = dshh__mcp_progress_message(entry_json, entry_len);
    json_object *msg = json_object_new_object(), *params = json_object_new_object();
    json_object_object_add(msg, "method", json_object_new_string("notifications/progress"));
    json_object_object_add(params, "progressToken", json_object_get(c->token));
    json_object_object_add(params, "progress", json_object_new_int64(++c->progress));
    json_object_object_add(params, "message", json_object_new_string(message ? message : ""));
    json_object_object_add(msg, "params", params);
    send_message(c->m, msg, run);
    json_object_put(msg);
    free(message);
}

static struct waiter *waiter_of(struct dshh_mcp_session *m, const struct dshh_mcp_bg_run *r)
{
    for (struct waiter *w = m->waiters; w; w = w->next)
        if (w->run == r)
            return w;
    return NULL;
}

static void drop_waiter(struct dshh_mcp_session *m, struct waiter *w)
{
    for (struct waiter **link = &m->waiters; *link; link = &(*link)->next)
        if (*link == w) {
            *link = w->next;
            break;
        }
    if (w->timer > 0)
        dshh__loop_cancel_timer(m->host->loop, w->timer);
    json_object_put(w->id);
    free(w);
}

static void start_next(struct dshh_mcp_session *m);

/* Answers w with what its run has not returned yet (the run goes on in the background unless it
 * ended); the run_code call it answered is then a background run. */
static void answer_waiter(struct dshh_mcp_session *m, struct waiter *w)
{
    struct mcall *c = w->call;
    bool ended = w->run->base.result != NULL;
    respond(m, w->id, dshh__mcp_bg_answer(&m->bg, w->run)); /* may collect w->run */
    drop_waiter(m, w);
    if (c && !ended) {
        c->yielded = true;
        start_next(m); /* a retaining profile's queued calls: the owner is busy (rejected) */
    }
}

static void on_wait_due(void *arg)
{
    struct waiter *w = arg;
    w->timer = 0;
    answer_waiter(w->m, w);
}

/* A waiter for r answering id (after ms, or only at the end when ms < 0); false when out of
 * memory or the loop refused the timer. */
static bool add_waiter(struct dshh_mcp_session *m, json_object *id, struct dshh_mcp_bg_run *r, struct mcall *c,
                       int64_t ms)
{
    struct waiter *w = calloc(1, sizeof(*w));
    if (!w)
        return false;
    *w =
        (struct waiter){.next = m->waiters, .m = m, .id = json_object_get(id), .run = r, .call = c};
    if (ms >= 0 &&
        (w->timer = dshh__loop_add_timer(m->host->loop, (uint32_t)ms, on_wait_due, w)) < 0) {
        json_object_put(w->id);
        free(w);
        return false;
    }
    m->waiters = w;
    return true;
}

static int64_t ms_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* The log line of c's run (the transport formats it). */
static void log_run(struct dshh_mcp_session *m, const struct mcall *c, const char *result_json, size_t result_len)
{
    json_object *result = result_json ? dsh_json_parse_strict(result_json, result_len) : NULL;
    bool ok = false, denied = false;
    const char *kind = dsh_json_get_text(dsh_json_get_object(result, "error"), "kind");
    dsh_json_get_bool(result, "ok", &ok);
    dsh_json_get_bool(dsh_json_get_object(result, "sandbox"), "denied", &denied);
    struct dshh_mcp_run_log log = {.duration_ms = ms_since(&c->begun),
                                   .outcome = ok ? "ok" : kind ? kind : "rejected",
                                   .denied = denied,
                                   .background = c->bg != NULL};
    m->sink->run_ended(m->sink_arg, &log);
    json_object_put(result);
}

static void on_done(void *userdata, dsh_run_id run, const char *result_json, size_t result_len)
{
    struct mcall *c = userdata;
    struct dshh_mcp_session *m = c->m;
    dshh__demo_cancel(m->host, &c->pending);
    dshh__mcp_downstream_run_ended(&m->sh->ds, run);
    if (c->deadline_timer > 0)
        dshh__loop_cancel_timer(m->host->loop, c->deadline_timer);
    if (c->bg) {
        dshh__bg_ended(&c->bg->base, result_json, result_len);
        struct waiter *w = waiter_of(m, c->bg);
        if (w)
            answer_waiter(m, w);
        else if (m->ended || (c->cancelled && !c->yielded)) /* nobody can collect it */
            json_object_put(dshh__mcp_bg_answer(&m->bg, c->bg));
    } else if (!c->cancelled) /* a cancelled request gets no response (MCP cancellation) */
        respond(m, c->id, dshh__mcp_tool_result(result_json, result_len, (uint64_t)m->sh->max_output_bytes,
                                             !m->sh->discard));
    if (m->sink->run_ended)
        log_run(m, c, result_json, result_len);
    unlink_call(m, c);
    start_next(m);
    maybe_finish(m);
}

/* A background run's deadline beyond the provider's maximum (up to maxBackgroundMs), kept by dsh. */
static void on_deadline(void *arg)
{
    struct mcall *c = arg;
    char why[128];
    c->deadline_timer = 0;
    snprintf(why, sizeof why, "the background run's deadline of %lld ms passed",
             (long long)c->deadline_ms);
    c->m->host->provider->cancel(c->m->host->instance, c->run, why);
}

/* Starts c's run; false when it was rejected (c is answered and gone). */
static bool start_call(struct mcall *c)
{
    struct dshh_mcp_session *m = c->m;
    struct dsh_run_callbacks cb = {.struct_size = sizeof(cb),
                                   .on_call = on_call,
                                   .on_done = on_done,
                                   .userdata = c,
                                   .on_output = c->token ? on_output : NULL};
    struct dsh_error err;
    c->started = true;
    if (c->bg)
        cb.on_output = on_output;
    int rc = dshh__start_run(m->host, c->request, strlen(c->request), &cb, &c->run, &err);
    free(c->request);
    c->request = NULL;
    if (rc < 0) {
        if (m->sink->run_ended)
            log_run(m, c, NULL, 0);
        respond(m, c->id, tool_error("the run was rejected (%s): %s", dsh_error_name(rc) ? dsh_error_name(rc) : "error",
                                  *err.message ? err.message : dsh_strerror(rc)));
        if (c->bg) /* nothing to keep */
            dshh__bg_collect(&m->bg.list, &c->bg->base);
        unlink_call(m, c);
        return false;
    }
    if (c->bg && c->deadline_ms > m->sh->max_timeout_ms)
        c->deadline_timer =
            dshh__loop_add_timer(m->host->loop, (uint32_t)c->deadline_ms, on_deadline, c);
    if (c->bg && !add_waiter(m, c->id, c->bg, c, c->yield_ms)) {
        c->cancelled = true; /* no answer can come: the request is lost, so is its run */
        respond_error(m, c->id, -32603, "dsh: out of memory");
        m->host->provider->cancel(m->host->instance, c->run, "dsh: out of memory");
    }
    return true;
}

/* Runs of one owner go one at a time (the provider admits one per owner): the next queued call
 * starts when the running one is done. Without an owner every call starts at once. */
static void start_next(struct dshh_mcp_session *m)
{
    for (;;) {
        bool running = false;
        struct mcall *c = m->calls;
        for (; c && c->started; c = c->next)
            running |= !c->yielded; /* a background run's owner is busy: the next is rejected */
        if (!c || (running && m->sh->retains))
            return;
        if (start_call(c) && m->sh->retains)
            return; /* the owner's next call waits for this one */
    }
}

/* timeout_ms > 0: the run's deadline; beyond the provider's maximum (a background run's) dsh
 * keeps it and the provider's timer is off. */
static json_object *run_request(struct dshh_mcp_session *m, json_object *program, int64_t timeout_ms)
{
    json_object *req = json_object_new_object(), *bindings = json_object_new_array();
    json_object_object_add(req, "program", json_object_get(program));
    json_object_object_add(req, "discardCompletion", json_object_new_boolean(m->sh->discard));
    if (timeout_ms > m->sh->max_timeout_ms)
        json_object_object_add(req, "timeoutMs", NULL);
    else if (timeout_ms > 0)
        json_object_object_add(req, "timeoutMs", json_object_new_int64(timeout_ms));
    if (m->policy_session)
        json_object_object_add(req, "sessionId", json_object_new_string(m->policy_session));
    if (m->sh->retains) {
        json_object_object_add(req, "stateOwner", json_object_new_string(m->owner));
        m->owner_used = true;
    }
    dshh__mcp_tools_bindings(&m->sh->tools, bindings);
    json_object_object_add(req, "bindings", bindings);
    return req;
}

/* args holds only the names in allowed (NULL-terminated); else id is answered and it is false. */
static bool only_arguments(struct dshh_mcp_session *m, json_object *id, const char *tool, json_object *args,
                           const char *const *allowed)
{
    json_object_object_foreach(args, key, val)
    {
        (void)val;
        size_t i = 0;
        while (allowed[i] && strcmp(key, allowed[i]))
            i++;
        if (!allowed[i]) {
            respond(m, id, tool_error("%s has no argument \"%s\"", tool, key));
            return false;
        }
    }
    return true;
}

/* args' optional yieldAfterMs in [0, MAX_YIELD_MS] (def without it); false when it is another
 * value (id is answered). */
static bool yield_argument(struct dshh_mcp_session *m, json_object *id, json_object *args, int64_t def, int64_t *ms)
{
    *ms = def;
    if (dsh_json_has(args, "yieldAfterMs") &&
        !dsh_json_as_int64(dsh_json_member(args, "yieldAfterMs"), 0, MAX_YIELD_MS, ms)) {
        respond(m, id, tool_error("yieldAfterMs must be an integer from 0 to %d", MAX_YIELD_MS));
        return false;
    }
    return true;
}

static void run_code(struct dshh_mcp_session *m, json_object *id, json_object *args, json_object *token)
{
    static const char *const allowed[] = {"program", "description", "timeoutMs", "yieldAfterMs",
                                          NULL};
    json_object *program = dsh_json_member(args, "program"),
                *timeout = dsh_json_member(args, "timeoutMs");
    const char *description;
    int64_t ms = 0, yield_ms = -1;
    if (!dsh_json_get_string(args, "program", NULL) ||
        !(description = dsh_json_get_text(args, "description"))) {
        respond(m, id, tool_error(TOOL_NAME
                               " needs the string arguments \"program\" and \"description\""));
        return;
    }
    if (!only_arguments(m, id, TOOL_NAME, args, allowed) || !yield_argument(m, id, args, -1, &yield_ms))
        return;
    bool background = yield_ms >= 0;
    int64_t max = background && m->sh->max_background_ms > m->sh->max_timeout_ms ? m->sh->max_background_ms
                                                                         : m->sh->max_timeout_ms;
    if (dsh_json_has(args, "timeoutMs") && !dsh_json_as_int64(timeout, 1, max, &ms)) {
        respond(m, id, tool_error("timeoutMs must be an integer from 1 to %lld%s", (long long)max,
                               background ? " (maxBackgroundMs) with yieldAfterMs" : ""));
        return;
    }
    if (background) {
        /* Queued ones (a retaining profile's) have their entry already. */
        if ((int64_t)dshh__bg_running(&m->bg.list) >= m->sh->max_background_runs) {
            respond(m, id, tool_error("at most %lld background runs may run at once in this session: "
                                   "collect one with wait_run or stop one with terminate_run first",
                                   (long long)m->sh->max_background_runs));
            return;
        }
    }
    struct mcall *c = calloc(1, sizeof(*c));
    json_object *req = c ? run_request(m, program, ms) : NULL;
    if (!c || !req || !(c->request = strdup(dshh__jstr(req))) ||
        (background && !(c->bg = dshh__mcp_bg_add(&m->bg, description)))) {
        json_object_put(req);
        if (c)
            free(c->request);
        free(c);
        respond_error(m, id, -32603, "dsh: out of memory");
        return;
    }
    json_object_put(req);
    c->m = m;
    c->id = json_object_get(id);
    c->token = token ? json_object_get(token) : NULL;
    c->yield_ms = yield_ms;
    clock_gettime(CLOCK_MONOTONIC, &c->begun);
    c->deadline_ms = ms ? ms : m->sh->default_timeout_ms;
    struct mcall **tail = &m->calls;
    while (*tail)
        tail = &(*tail)->next;
    *tail = c;
    start_next(m);
}

/* wait_run and terminate_run: the background run named by args' runId, or NULL (id answered). */
static struct dshh_mcp_bg_run *named_run(struct dshh_mcp_session *m, json_object *id, const char *tool,
                                         json_object *args)
{
    const char *run_id = dsh_json_get_text(args, "runId");
    struct dshh_mcp_bg_run *r = run_id ? (struct dshh_mcp_bg_run *)dshh__bg_find(&m->bg.list, run_id) : NULL;
    if (!run_id)
        respond(m, id, tool_error("%s needs the string argument \"runId\"", tool));
    else if (!r)
        respond(m, id,
                tool_error("no background run \"%.*s\" in this session (its result was collected, "
                           "expired, or it never started)",
                           (int)dsh_utf8_cut(run_id, strlen(run_id), 64), run_id));
    else if (waiter_of(m, r) && waiter_of(m, r)->call == NULL && strcmp(tool, "terminate_run") != 0)
        respond(m, id, tool_error("another wait_run or terminate_run is waiting for %s", r->base.id));
    else
        return r;
    return NULL;
}

static void wait_run(struct dshh_mcp_session *m, json_object *id, json_object *args)
{
    static const char *const allowed[] = {"runId", "yieldAfterMs", NULL};
    int64_t ms;
    struct dshh_mcp_bg_run *r;
    if (!only_arguments(m, id, "wait_run", args, allowed) ||
        !yield_argument(m, id, args, WAIT_DEFAULT_MS, &ms) ||
        !(r = named_run(m, id, "wait_run", args)))
        return;
    struct waiter *w = waiter_of(m, r);
    if (w) /* run_code's call, still before its yield: it returns now */
        answer_waiter(m, w);
    if (r->base.result || ms == 0)
        respond(m, id, dshh__mcp_bg_answer(&m->bg, r));
    else if (!add_waiter(m, id, r, NULL, ms))
        respond_error(m, id, -32603, "dsh: out of memory");
}

static void terminate_run(struct dshh_mcp_session *m, json_object *id, json_object *args)
{
    static const char *const allowed[] = {"runId", NULL};
    struct dshh_mcp_bg_run *r;
    if (!only_arguments(m, id, "terminate_run", args, allowed) ||
        !(r = named_run(m, id, "terminate_run", args)))
        return;
    struct waiter *w = waiter_of(m, r);
    if (w) /* whoever waited gets what there is; this call gets the end */
        answer_waiter(m, w);
    for (struct mcall *c = m->calls; c && !r->base.result; c = c->next)
        if (c->bg == r && c->started) {
            m->host->provider->cancel(m->host->instance, c->run, "terminate_run stopped the run");
            break;
        }
    if (r->base.result)
        respond(m, id, dshh__mcp_bg_answer(&m->bg, r));
    else if (!add_waiter(m, id, r, NULL, -1))
        respond_error(m, id, -32603, "dsh: out of memory");
}

static void tools_call(struct dshh_mcp_session *m, json_object *id, json_object *params)
{
    const char *name = dsh_json_get_text(params, "name");
    json_object *args = dsh_json_get_object(params, "arguments");
    json_object *token = dsh_json_member(dsh_json_get_object(params, "_meta"), "progressToken");
    if (!args) /* absent or not an object: no arguments */
        args = json_object_new_object();
    else
        json_object_get(args);
    dshh__bg_expire(&m->bg.list, DSHH_MCP_KEEP_MS);
    if (name && !strcmp(name, TOOL_NAME)) {
        run_code(m, id, args, token);
    } else if (name && !strcmp(name, "wait_run")) {
        wait_run(m, id, args);
    } else if (name && !strcmp(name, "terminate_run")) {
        terminate_run(m, id, args);
    } else if (name && !strcmp(name, "list_runs")) {
        static const char *const none[] = {NULL};
        if (only_arguments(m, id, "list_runs", args, none))
            respond(m, id, dshh__mcp_bg_list(&m->bg));
    } else {
        respond_error(m, id, -32602,
                      "unknown tool: dsh offers " TOOL_NAME
                      ", wait_run, terminate_run and list_runs");
    }
    json_object_put(args);
}

static void cancelled(struct dshh_mcp_session *m, json_object *params)
{
    json_object *id = dsh_json_member(params, "requestId");
    if (!dsh_json_has(params, "requestId"))
        return;
    const char *text = dshh__jstr(id);
    for (struct waiter *w = m->waiters; w; w = w->next)
        if (!w->call && !strcmp(dshh__jstr(w->id), text)) { /* wait_run, terminate_run: no answer */
            drop_waiter(m, w);
            return;
        }
    for (struct mcall *c = m->calls; c; c = c->next) {
        if (strcmp(dshh__jstr(c->id), text) != 0 || c->cancelled || c->yielded)
            continue;
        c->cancelled = true;
        struct waiter *w = c->bg ? waiter_of(m, c->bg) : NULL;
        if (w)
            drop_waiter(m, w);
        if (!c->started) {
            unlink_call(m, c);
            return;
        }
        const char *why = dsh_json_get_text(params, "reason");
        if (!why)
            why = "the MCP client cancelled the request";
        m->host->provider->cancel(m->host->instance, c->run, why);
        return;
    }
}

/* ---- requests -------------------------------------------------------------------------------------- */

static void initialize(struct dshh_mcp_session *m, json_object *id, json_object *params)
{
    static const char *const versions[] = DSHH_MCP_PROTOCOL_VERSIONS;
    const char *asked = dsh_json_get_text(params, "protocolVersion"), *version = versions[0];
    for (size_t i = 0; asked && versions[i]; i++)
        if (!strcmp(versions[i], asked))
            version = versions[i];
    json_object *result = json_object_new_object(), *caps = json_object_new_object(), *tools = json_object_new_object();
    json_object *info = json_object_new_object();
    json_object_object_add(result, "protocolVersion", json_object_new_string(version));
    json_object_object_add(tools, "listChanged", json_object_new_boolean(0));
    json_object_object_add(caps, "tools", tools);
    json_object_object_add(result, "capabilities", caps);
    json_object_object_add(info, "name", json_object_new_string("dsh"));
    json_object_object_add(info, "title", json_object_new_string("dsh-ptc-runtime-node"));
    json_object_object_add(info, "version", json_object_new_string(DSH_VERSION));
    json_object_object_add(result, "serverInfo", info);
    json_object_object_add(result, "instructions",
                           json_object_new_string("Call " TOOL_NAME " with a TypeScript program instead of many "
                                                  "separate tool calls; its description lists what the program "
                                                  "can call."));
    respond(m, id, result);
}

static json_object *yield_schema(const char *what)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "type", json_object_new_string("integer"));
    json_object_object_add(o, "minimum", json_object_new_int(0));
    json_object_object_add(o, "maximum", json_object_new_int(MAX_YIELD_MS));
    json_object_object_add(o, "description", json_object_new_string(what));
    return o;
}

/* wait_run, terminate_run, list_runs: name, title, description, input properties (transfer full)
 * whose first is required when with_run, and their hints. */
static json_object *run_tool(const char *name, const char *title, const char *what,
                             json_object *props, bool with_run, bool read_only, bool idempotent)
{
    json_object *tool = json_object_new_object(), *schema = json_object_new_object(),
                *annotations = json_object_new_object();
    json_object_object_add(schema, "type", json_object_new_string("object"));
    json_object_object_add(schema, "properties", props);
    if (with_run) {
        json_object *required = json_object_new_array(), *run = json_object_new_object();
        json_object_object_add(run, "type", json_object_new_string("string"));
        json_object_object_add(run, "description",
                               json_object_new_string("The runId run_code returned"));
        json_object_object_add(props, "runId", run);
        json_object_array_add(required, json_object_new_string("runId"));
        json_object_object_add(schema, "required", required);
    }
    json_object_object_add(schema, "additionalProperties", json_object_new_boolean(0));
    json_object_object_add(annotations, "title", json_object_new_string(title));
    json_object_object_add(annotations, "readOnlyHint", json_object_new_boolean(read_only));
    if (!read_only)
        json_object_object_add(annotations, "destructiveHint", json_object_new_boolean(1));
    json_object_object_add(annotations, "idempotentHint", json_object_new_boolean(idempotent));
    json_object_object_add(annotations, "openWorldHint", json_object_new_boolean(0));
    json_object_object_add(tool, "name", json_object_new_string(name));
    json_object_object_add(tool, "title", json_object_new_string(title));
    json_object_object_add(tool, "description", json_object_new_string(what));
    json_object_object_add(tool, "inputSchema", schema);
    json_object_object_add(tool, "annotations", annotations);
    return tool;
}

static void run_tools(json_object *tools)
{
    char what[512];
    json_object *props = json_object_new_object();
    snprintf(what, sizeof what,
             "How long to wait for the run to end before returning its new output (default %d)",
             WAIT_DEFAULT_MS);
    json_object_object_add(props, "yieldAfterMs", yield_schema(what));
    snprintf(what, sizeof what,
             "Wait for a background run of run_code: returns the output since the last return "
             "(at most %d bytes; a note says how many more are pending) when the run ends or after "
             "yieldAfterMs, and once it ended its result, as run_code shows one (kept %d minutes "
             "after the end)",
             DSHH_MCP_WAIT_MAX_BYTES, DSHH_MCP_KEEP_MS / 60000);
    json_object_array_add(
        tools, run_tool("wait_run", "Wait for a background run", what, props, true, true, false));
    json_object_array_add(
        tools, run_tool("terminate_run", "Stop a background run",
                        "Stop a background run of run_code (its result: error (abort)) and "
                        "return its last output and result",
                        json_object_new_object(), true, false, true));
    json_object_array_add(
        tools, run_tool("list_runs", "List the background runs",
                        "The background runs of this session: runId, description, running "
                        "or ended (result not collected yet), age",
                        json_object_new_object(), false, true, false));
}

static json_object *tool_definition(struct dshh_mcp_session *m)
{
    json_object *tool = json_object_new_object(), *schema = json_object_new_object();
    json_object *props = json_object_new_object(), *required = json_object_new_array();
    json_object *program = json_object_new_object(), *description = json_object_new_object();
    json_object *timeout = json_object_new_object(), *annotations = json_object_new_object();
    json_object_object_add(program, "type", json_object_new_string("string"));
    json_object_object_add(program, "description", json_object_new_string("The TypeScript program"));
    json_object_object_add(description, "type", json_object_new_string("string"));
    json_object_object_add(description, "description",
                           json_object_new_string("One sentence for the person watching: what the program does"));
    char text[256];
    int64_t max =
        m->sh->max_background_ms > m->sh->max_timeout_ms ? m->sh->max_background_ms : m->sh->max_timeout_ms;
    snprintf(text, sizeof text,
             "Elapsed deadline in milliseconds, including tool waits (default %lld, at most %lld; "
             "with yieldAfterMs at most %lld)",
             (long long)m->sh->default_timeout_ms, (long long)m->sh->max_timeout_ms, (long long)max);
    json_object_object_add(timeout, "type", json_object_new_string("integer"));
    json_object_object_add(timeout, "minimum", json_object_new_int(1));
    json_object_object_add(timeout, "maximum", json_object_new_int64(max));
    json_object_object_add(timeout, "description", json_object_new_string(text));
    json_object_object_add(props, "program", program);
    json_object_object_add(props, "description", description);
    json_object_object_add(props, "timeoutMs", timeout);
    char yield[512];
    snprintf(
        yield, sizeof yield,
        "Run in the background: when the run has not ended after this many milliseconds, return "
        "its output so far and {running: true, runId} (at most %lld background runs at once in "
        "this session; its end stops them)",
        (long long)m->sh->max_background_runs);
    json_object_object_add(props, "yieldAfterMs", yield_schema(yield));
    json_object_array_add(required, json_object_new_string("program"));
    json_object_array_add(required, json_object_new_string("description"));
    json_object_object_add(schema, "type", json_object_new_string("object"));
    json_object_object_add(schema, "properties", props);
    json_object_object_add(schema, "required", required);
    json_object_object_add(schema, "additionalProperties", json_object_new_boolean(0));
    /* What the program may do follows the standing policy: it changes nothing in read-only, and
     * reaches the network only unconfined. */
    json_object_object_add(annotations, "title", json_object_new_string(TOOL_TITLE));
    json_object_object_add(annotations, "readOnlyHint", json_object_new_boolean(m->sh->read_only));
    if (!m->sh->read_only)
        json_object_object_add(annotations, "destructiveHint", json_object_new_boolean(1));
    json_object_object_add(annotations, "idempotentHint", json_object_new_boolean(0));
    json_object_object_add(annotations, "openWorldHint", json_object_new_boolean(m->sh->unconfined));
    json_object_object_add(tool, "name", json_object_new_string(TOOL_NAME));
    json_object_object_add(tool, "title", json_object_new_string(TOOL_TITLE));
    json_object_object_add(tool, "description", json_object_new_string(m->sh->description));
    json_object_object_add(tool, "inputSchema", schema);
    if (!m->sh->discard) {
        json_object *output = json_object_new_object();
        json_object_object_add(output, "type", json_object_new_string("object"));
        json_object_object_add(
            output, "description",
            json_object_new_string("The program's completion value when it is a JSON object, "
                                   "else {} (the text content shows any value)"));
        json_object_object_add(tool, "outputSchema", output);
    }
    json_object_object_add(tool, "annotations", annotations);
    return tool;
}

static void handle_message(struct dshh_mcp_session *m, json_object *msg)
{
    json_object *id = dsh_json_member(msg, "id"), *params = dsh_json_member(msg, "params");
    bool has_id = dsh_json_has(msg, "id");
    const char *name = dsh_json_get_text(msg, "method");
    if (!name) {
        if (!has_id || dsh_json_has(msg, "result") || dsh_json_has(msg, "error"))
            return; /* a response: dsh sends no requests */
        respond_error(m, id, -32600, "invalid request: no method");
        return;
    }
    if (!has_id) { /* notifications */
        if (!strcmp(name, "notifications/cancelled"))
            cancelled(m, params);
        return;
    }
    if (!(json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int))) {
        respond_error(m, NULL, -32600, "invalid request: the id must be a string or an integer");
        return;
    }
    if (!strcmp(name, "initialize")) {
        initialize(m, id, params);
    } else if (!strcmp(name, "ping")) {
        respond(m, id, json_object_new_object());
    } else if (!strcmp(name, "tools/list")) {
        json_object *result = json_object_new_object(), *tools = json_object_new_array();
        json_object_array_add(tools, tool_definition(m));
        run_tools(tools);
        json_object_object_add(result, "tools", tools);
        respond(m, id, result);
    } else if (!strcmp(name, "tools/call")) {
        tools_call(m, id, params);
    } else {
        respond_error(m, id, -32601, "method not found");
    }
}

void dshh__mcp_session_text(struct dshh_mcp_session *m, const char *text, size_t len)
{
    size_t s = 0;
    while (s < len && (text[s] == ' ' || text[s] == '\t' || text[s] == '\r'))
        s++;
    if (s == len)
        return;
    json_object *msg = dsh_json_parse_strict(text, len);
    if (json_object_is_type(msg, json_type_object))
        handle_message(m, msg);
    else if (msg)
        respond_error(m, NULL, -32600, "invalid request: a message is one JSON object");
    else
        respond_error(m, NULL, -32700, "parse error: not exactly one strict JSON value");
    json_object_put(msg);
}

void dshh__mcp_session_message(struct dshh_mcp_session *m, json_object *msg)
{
    handle_message(m, msg);
}

void dshh__mcp_session_error(struct dshh_mcp_session *m, int code, const char *message)
{
    respond_error(m, NULL, code, message);
}

/* Nobody can receive the answers any more. Queued calls go, running ones stop; the session
 * finishes once they have and the owner is released. */
static void end_session(struct dshh_mcp_session *m, const char *why)
{
    if (m->ended)
        return;
    m->ended = true;
    for (struct mcall *c = m->calls, *next; c; c = next) {
        next = c->next;
        c->cancelled = true;
        if (!c->started)
            unlink_call(m, c);
        else
            m->host->provider->cancel(m->host->instance, c->run, why);
    }
    maybe_finish(m);
}

void dshh__mcp_session_end(struct dshh_mcp_session *m, const char *why)
{
    end_session(m, why);
}

void dshh__mcp_session_cancel_runs(struct dshh_mcp_session *m, const char *why)
{
    for (struct mcall *c = m->calls, *next; c; c = next) {
        next = c->next;
        if (c->started) {
            m->host->provider->cancel(m->host->instance, c->run, why);
            continue;
        }
        if (!c->cancelled)
            respond(m, c->id, tool_error("the run did not start: %s", why));
        unlink_call(m, c);
    }
}

bool dshh__mcp_session_busy(const struct dshh_mcp_session *m)
{
    return m->calls != NULL;
}

struct dshh_mcp_session *dshh__mcp_session_new(struct dshh_mcp_shared *sh,
                                               const char *policy_session, const char *owner,
                                               const struct dshh_mcp_sink *sink, void *sink_arg)
{
    struct dshh_mcp_session *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    *m = (struct dshh_mcp_session){.host = sh->host, .sh = sh, .sink = sink, .sink_arg = sink_arg};
    if ((policy_session && !(m->policy_session = strdup(policy_session))) ||
        strlen(owner) >= sizeof m->owner) {
        free(m);
        return NULL;
    }
    strcpy(m->owner, owner);
    dshh__mcp_bg_init(&m->bg, (uint64_t)sh->max_output_bytes, !sh->discard);
    return m;
}

void dshh__mcp_session_free(struct dshh_mcp_session *m)
{
    if (!m)
        return;
    while (m->waiters)
        drop_waiter(m, m->waiters);
    dshh__bg_free_all(&m->bg.list);
    free(m->policy_session);
    free(m);
}

/* ---- setup ------------------------------------------------------------------------------------- */

static int64_t int_field(json_object *o, const char *key)
{
    int64_t v;
    return dsh_json_get_int64(o, key, INT64_MIN, INT64_MAX, &v) ? v : 0;
}

/* What dsh mcp reads of the rows (each value its catalog default when absent): the runtime row's
 * maxOutputBytes and discardCompletion, the demo-tools row's mcp, the bindings row's
 * declarationBudget, maxBackgroundMs and maxBackgroundRuns. */
struct row_values {
    int64_t max_output_bytes;
    bool discard, demo;
    int64_t budget, max_background_ms, max_background_runs;
};

static void row_values(const struct dshh_profile *profile, struct row_values *v)
{
    static const struct {
        const char *row, *field;
        size_t offset;
        bool is_bool;
    } fields[] = {
        {PTC_PROVIDER_NAME, "maxOutputBytes", offsetof(struct row_values, max_output_bytes), false},
        {PTC_PROVIDER_NAME, "discardCompletion", offsetof(struct row_values, discard), true},
        {PTC_PYTHON_PROVIDER_NAME, "maxOutputBytes", offsetof(struct row_values, max_output_bytes),
         false},
        {PTC_PYTHON_PROVIDER_NAME, "discardCompletion", offsetof(struct row_values, discard), true},
        {DSHH_NAME_DEMO, "mcp", offsetof(struct row_values, demo), true},
        {DSHH_NAME_MCP_BINDINGS, "declarationBudget", offsetof(struct row_values, budget), false},
        {DSHH_NAME_MCP_BINDINGS, "maxBackgroundMs", offsetof(struct row_values, max_background_ms),
         false},
        {DSHH_NAME_MCP_BINDINGS, "maxBackgroundRuns",
         offsetof(struct row_values, max_background_runs), false},
    };
    *v = (struct row_values){0};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        /* A runtime row counts only when enabled; the bindings row's defaults apply without it. */
        if (dshh__profile_enabled_row(profile, fields[i].row) ||
            !strcmp(fields[i].row, DSHH_NAME_MCP_BINDINGS))
            dshh__profile_value(profile, fields[i].row, fields[i].field, fields[i].is_bool,
                                (char *)v + fields[i].offset);
}

/* The session's standing policy: its mode and workspace (sandboxPolicy.resolve), the sentences
 * about them, and the annotations they set. */
static void describe_policy(struct dshh_mcp_shared *m, FILE *out)
{
    const struct dsh_sandbox_policy_service *policy = m->host->services.sandbox_policy;
    char buf[8192];
    json_object *p = policy && policy->resolve(policy->ctx, NULL, buf, sizeof buf) >= 0
                         ? dsh_json_parse_strict(buf, strlen(buf))
                         : NULL;
    const char *mode = dsh_json_get_text(p, "mode"), *root = dsh_json_get_text(p, "workspaceRoot");
    m->read_only = mode && !strcmp(mode, "read-only");
    m->unconfined = mode && !strcmp(mode, "danger-full-access");
    /* The network sentence: none, or the hosts of the allow-list (the sandbox-policy row's). */
    char net[1024] = "No network access.";
    json_object *network = dsh_json_get_object(p, "network"), *allow = NULL;
    if (network && json_object_object_get_ex(network, "allow", &allow) &&
        json_object_is_type(allow, json_type_array)) {
        size_t n = (size_t)snprintf(net, sizeof net, "Network: only these hosts (others fail with "
                                                     "ENOTFOUND and the result says the sandbox refused them):");
        for (size_t i = 0; i < json_object_array_length(allow) && n < sizeof net; i++) {
            const char *h = json_object_get_string(json_object_array_get_idx(allow, i));
            n += (size_t)snprintf(net + n, sizeof net - n, "%s %s", i ? "," : "", h ? h : "");
        }
        if (n < sizeof net)
            snprintf(net + n, sizeof net - n, ".");
    }
    if (mode && root && m->read_only)
        fprintf(out,
                "\nSandbox read-only: the working directory is the workspace %s; the program can "
                "read it and the system's files and write nothing. %s\n",
                root, net);
    else if (mode && root && m->unconfined)
        fprintf(out,
                "\nSandbox danger-full-access: the program runs unconfined, with the files and "
                "network of the user dsh runs as; the working directory is the workspace %s.\n",
                root);
    else if (mode && root)
        fprintf(out,
                "\nSandbox %s: the working directory is the workspace %s; the program can read and "
                "write it and its temp directory (os.tmpdir()), read the system's files, and write "
                "nothing else. %s\n",
                mode, root, net);
    json_object_put(p);
}

int dshh__mcp_shared_open(struct dshh_mcp_shared *m, struct dshh_host *host,
                          const struct dshh_profile *profile)
{
    char *json = NULL;
    size_t len = 0;
    *m = (struct dshh_mcp_shared){.host = host};
    struct dsh_error err = {0};
    int rc = m->host->provider->describe(m->host->instance, &json, &len, &err);
    if (rc < 0) {
        fprintf(stderr, "dsh: describe failed: %s\n", *err.message ? err.message : dsh_strerror(rc));
        return -1;
    }
    json_object *describe = dsh_json_parse_strict(json, len), *timeout = dsh_json_get_object(describe, "timeout");
    m->host->provider->free_text(json);
    m->default_timeout_ms = int_field(timeout, "defaultMs");
    m->max_timeout_ms = int_field(timeout, "maxMs");
    m->retains = dsh_json_get_bool(describe, "retainsState", &m->retains) && m->retains;
    struct row_values rows;
    row_values(profile, &rows);
    m->max_output_bytes = rows.max_output_bytes;
    m->discard = rows.discard;
    m->max_background_ms = rows.max_background_ms;
    m->max_background_runs = rows.max_background_runs;
    /* Server namespaces take no name programs already see: tools, the native namespaces. */
    size_t nnative = m->host->native ? m->host->native->n : 0;
    const char **taken = calloc(nnative + 2, sizeof(*taken));
    if (!taken) {
        json_object_put(describe);
        return -1;
    }
    taken[0] = DSHH_DEMO_GLOBAL;
    for (size_t i = 0; i < nnative; i++)
        taken[i + 1] = m->host->native->ns[i].global;
    rc = dshh__mcp_downstream_start(&m->ds, m->host, profile, taken);
    free(taken);
    if (rc < 0 || dshh__mcp_tools_open(&m->tools, m->host, &m->ds, rows.demo) < 0) {
        json_object_put(describe);
        return -1;
    }
    size_t size = 0;
    FILE *out = open_memstream(&m->description, &size);
    if (!out) {
        json_object_put(describe);
        return -1;
    }
    const char *instructions = dsh_json_get_text(describe, "executionInstructions");
    const char *format = dsh_json_get_text(describe, "programFormat");
    const char *language = dsh_json_get_text(describe, "language");
    bool function_body = format && !strcmp(format, "async-function");
    fprintf(out, "%s\n", instructions ? instructions : "");
    /* The Node runtime's function bodies are no modules (its REPL and Script instructions say
     * this themselves). */
    if (function_body && language && !strcmp(language, "typescript"))
        fputs("Static `import` declarations and `require` are not available: load modules with "
              "`await import(\"node:fs\")`.\n",
              out);
    if (m->retains)
        fputs("All run_code calls of this MCP session share one environment: the top-level names "
              "of one call are there in the next, until the session ends.\n",
              out);
    json_object_put(describe);
    describe_policy(m, out);
    fprintf(out,
            "Deadline: timeoutMs (default %lld ms, at most %lld), tool waits included; then the "
            "run fails with `error (timeout)`.\n",
            (long long)m->default_timeout_ms, (long long)m->max_timeout_ms);
    if (m->discard)
        fputs("The result shows the inspect() output (text, then images) and no return or "
              "completion value: this session discards them (the runtime row's "
              "discardCompletion), so inspect() what you need.\n",
              out);
    else
        fprintf(out,
                "The result shows the inspect() output (text, then images), then %s as one line "
                "of JSON (an object also as structuredContent).\n",
                function_body ? "the returned value" : "the value of the last expression statement");
    /* The kinds of host-abi/schemas/result.json (tests/mcp/description.test.mjs compares). */
    fputs("A failed run is isError, its text ending `error (KIND): MESSAGE` (KIND: exception, "
          "timeout, abort, protocol, sandbox-unavailable, worker-exit, invalid-output, "
          "output-limit). When the sandbox refused an operation, the last line is `the sandbox "
          "refused: ...`.\n",
          out);
    /* The details are in the tools' own descriptions and schemas (tools/list): the description
     * stays within its budget. */
    fputs("Long runs: with yieldAfterMs, a run not ended by then returns its output so far and "
          "`{running: true, runId}` and goes on; wait_run returns its new output and, once ended, "
          "its result; terminate_run stops it (`error (abort)`).\n",
          out);
    if (m->retains)
        fputs("While a background run is going, another run_code call is rejected (owner-busy: the "
              "environment runs one program at a time): wait for it or terminate it first.\n",
              out);
    dshh__mcp_tools_describe(&m->tools, (size_t)rows.budget, out);
    return fclose(out) == 0 ? 0 : -1;
}

void dshh__mcp_shared_close(struct dshh_mcp_shared *m)
{
    dshh__mcp_tools_close(&m->tools);
    dshh__mcp_downstream_stop(&m->ds);
    free(m->description);
    m->description = NULL;
}

/* `dsh headless --serve`: JSON lines for agent harnesses (examples/host/README.md,
 * host-abi/schemas/serve.json), on stdin/stdout or, with --listen unix:PATH, for each client
 * connected to a Unix socket (each its own session).
 *
 * Requests: run, cancel, reply, release, set-mode, describe, wait_run, terminate_run, list_runs.
 * Events: hello, result, running, runs, call, output, abandoned, released, mode-set, error. A run
 * with yieldAfterMs goes on in the background once that passed (dshh_serve_background.c keeps
 * its output and result for wait_run). Runs are concurrent; a bad line gives an error event and
 * the server keeps going; at EOF it waits for the client's in-flight runs and releases, then
 * returns on stdio (the caller unloads and exits 0) or, for a socket client, releases the
 * client's owners and closes its connection. */
#include "dshh_serve.h"

#include "dsh_list.h"
#include "dshh_demo_tools.h"
#include "dshh_lines.h"
#include "dshh_listen.h"
#include "dshh_native_bindings.h"
#include "dshh_names.h"
#include "dshh_output_gate.h"
#include "dshh_profile.h"
#include "dshh_request.h"
#include "dshh_result_print.h"
#include "dshh_serve_background.h"
#include "dshh_serve_events.h"
#include "dshh_stop_signals.h"
#include "dshh_usage.h"

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_linux_services.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Programs travel inside request lines; the provider's own limit (maxMessageBytes) is lower. */
#define MAX_LINE ((size_t)256 << 20)
#define NO_CLIENT "the client closed dsh's stdin: no reply can come"
#define NO_SOCKET_CLIENT "the client closed its connection to dsh: no reply can come"
#define DISCONNECTED "the client disconnected from dsh"
/* Bytes of events the client left unread at which dsh drops it (README "Peers that stop
 * reading"). */
#define MAX_UNREAD ((size_t)64 << 20)
#define DROPPED "dsh dropped the client: it stopped reading dsh's output"
/* Clients of one --listen socket at once (README "--serve --listen"): each holds two fds and a
 * queue of up to MAX_UNREAD. */
#define MAX_CLIENTS 64
/* At a stop signal, how long dsh waits for socket clients to take their last events. */
#define FINAL_FLUSH_MS 5000
/* accept() out of fds: the listening socket rests this long rather than spinning. */
#define ACCEPT_PAUSE_MS 100
/* yieldAfterMs of run and wait_run: at most this, wait_run's default that (as dsh mcp's). */
#define MAX_YIELD_MS 600000
#define WAIT_DEFAULT_MS 10000
#define TERMINATED "terminate_run stopped the run"
#define SESSION_ENDED "the client's session ended: its background runs stop with it"

struct client;

struct srun {
    struct srun *next;
    struct client *c;
    char *id;        /* JSON text of the request id */
    dsh_run_id run;
    bool demo;       /* the demo `tools` namespace is declared for this run */
    bool stream;     /* "stream": true: output events as the ledger accepts entries */
    bool retained;   /* names a stateOwner: an evaluation in a retained environment */
    struct dshh_demo_pending *pending;
    uint64_t *calls; /* calls forwarded to the client and not yet answered */
    size_t ncalls, capcalls;
    /* With yieldAfterMs: its background entry, and the timer of a deadline beyond the provider's
     * maximum (up to maxBackgroundMs) that dsh keeps. */
    struct dshh_serve_bg_run *bg;
    int64_t deadline_ms, deadline_timer;
};

/* A request waiting for a background run's answer: the run request until its yieldAfterMs, a
 * wait_run until its own, a terminate_run until the run ended (no timer). */
struct swaiter {
    struct swaiter *next;
    struct client *c;
    char *id; /* JSON text of the request it answers */
    struct dshh_serve_bg_run *run;
    bool yield; /* the run request's own */
    int64_t timer;
};

struct srelease {
    struct srelease *next;
    struct client *c;
    char *id;    /* NULL: released at the client's end, answered to nobody */
    char *owner; /* as the client named it */
};

struct server {
    struct dshh_host *host;
    struct client *clients;
    size_t nsockets;     /* socket clients not yet freed */
    unsigned long accepted;
    int listen_fd;       /* -1: stdin/stdout */
    const struct dshh_listen_addr *addr;
    int stop_signal;     /* SIGTERM or SIGINT received: the runs are cancelled, dsh exits 128 + it */
    unsigned small_evaluations_untrimmed; /* see release_idle_heap() */
    /* The provider's timeoutMs maximum; the dsh-mcp-bindings row's bounds of background runs. */
    int64_t max_timeout_ms, max_background_ms, max_background_runs;
};

/* One client, one session: stdin/stdout, or a connection to the --listen socket. */
struct client {
    struct client *next;
    struct server *srv;
    int in_fd, out_fd;   /* a connection and its dup: the loop watches each fd for one direction */
    bool socket;
    char session[48];    /* a socket client's sandbox-policy session and owner prefix */
    struct dshh_lines lines;
    struct dshh_out_queue out;
    struct dshh_serve_events events;
    struct dshh_output_gate gate; /* pauses streaming runs while the client's queue is high */
    struct srun *runs;
    struct dshh_serve_background bg; /* background runs, until their results are collected */
    struct swaiter *waiters;
    struct srelease *releases;
    char **owners;       /* stateOwners named by accepted runs and not released since */
    size_t nowners;
    bool eof;            /* no more requests */
    bool gone;           /* disconnected or dropped: its runs were cancelled */
    bool drop_seen;      /* on_client_dropped ran (its timer no longer points here) */
    bool owners_released;
    bool closing;        /* everything ended: the connection closes once its events are written */
    int64_t free_timer;
};

/* ---- lifetime ------------------------------------------------------------------------------------ */

/* What happens to socket clients, with -v. */
static void log_client(const struct client *c, const char *what)
{
    char message[160];
    snprintf(message, sizeof message, "client %s %s", c->session, what);
    c->srv->host->logger.log(c->srv->host->logger.ctx, DSH_LOG_INFO, message);
}

static void free_client_now(void *arg);

/* Frees a finished socket client from the loop, never inside a callback that may still use it. */
static void schedule_free(struct client *c)
{
    if (c->free_timer)
        return;
    int64_t id = dshh__loop_add_timer(c->srv->host->loop, 0, free_client_now, c);
    c->free_timer = id > 0 ? id : 0; /* no timer: freed when the server ends */
}

/* The connection's events are written (or its peer is gone): it is freed. */
static void on_final_writable(void *arg, uint32_t events)
{
    (void)events;
    struct client *c = arg;
    if (dshh__out_queue_drain_now(&c->out) < 0 || !dshh__out_queue_waiting(&c->out)) {
        dshh__loop_remove_fd(c->srv->host->loop, c->in_fd);
        schedule_free(c);
    }
}

static void release_owners(struct client *c);

static void maybe_finish(struct client *c)
{
    if (!c->eof || c->runs || c->releases)
        return;
    if (!c->socket) {
        dshh__loop_quit(c->srv->host->loop);
        return;
    }
    if (c->srv->stop_signal || c->closing || (dshh__events_dropped(&c->events) && !c->drop_seen))
        return; /* the server's end frees it; or on_client_dropped comes first */
    if (!c->owners_released) {
        release_owners(c);
        if (c->releases)
            return;
    }
    c->closing = true;
    dshh__loop_remove_fd(c->srv->host->loop, c->in_fd);
    if (c->gone || dshh__events_dropped(&c->events) || dshh__out_queue_drain_now(&c->out) < 0 ||
        !dshh__out_queue_waiting(&c->out) ||
        dshh__loop_add_fd(c->srv->host->loop, c->in_fd, EPOLLOUT, on_final_writable, c) < 0)
        schedule_free(c);
}

static struct srun *find_run(struct client *c, const char *id)
{
    for (struct srun *r = c->runs; r; r = r->next)
        if (!strcmp(r->id, id))
            return r;
    return NULL;
}

/* The stateOwners of this session: named by an accepted run, not released since. */
static bool owner_index(const struct client *c, const char *owner, size_t *ret_index)
{
    for (size_t i = 0; i < c->nowners; i++)
        if (!strcmp(c->owners[i], owner)) {
            *ret_index = i;
            return true;
        }
    return false;
}

static void remember_owner(struct client *c, const char *owner)
{
    size_t i;
    if (owner_index(c, owner, &i))
        return;
    char **grown = realloc(c->owners, (c->nowners + 1) * sizeof(*grown));
    if (grown && (grown[c->nowners] = strdup(owner)))
        c->nowners++;
    if (grown)
        c->owners = grown;
}

static void forget_owner(struct client *c, const char *owner)
{
    size_t i;
    if (owner_index(c, owner, &i)) {
        free(c->owners[i]);
        c->owners[i] = c->owners[--c->nowners];
    }
}

/* The provider's name of a client's owner: a socket client's names live in its own namespace
 * ("SESSION/NAME"), so two clients' "a" are two environments and neither reaches the other's.
 * Free it; NULL when out of memory. */
static char *provider_owner(const struct client *c, const char *owner)
{
    if (!c->socket)
        return strdup(owner);
    size_t n = strlen(c->session) + 1 + strlen(owner) + 1;
    char *full = malloc(n);
    if (full)
        snprintf(full, n, "%s/%s", c->session, owner);
    return full;
}

static const char *no_client(const struct client *c)
{
    return c->socket ? NO_SOCKET_CLIENT : NO_CLIENT;
}

static void on_call(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                    const char *name, const char *args_json, size_t args_len)
{
    struct srun *r = userdata;
    struct client *c = r->c;
    struct dshh_host *host = c->srv->host;
    if (dshh__host_native_call(host, run, call, global, name, args_json, args_len))
        return;
    if (r->demo && !strcmp(global, DSHH_DEMO_GLOBAL)) {
        dshh__demo_call(host, run, call, name, args_json, args_len, &r->pending);
        return;
    }
    if (c->eof) {
        host->provider->reply(host->instance, run, call, false, no_client(c), strlen(no_client(c)));
        return;
    }
    if (r->ncalls == r->capcalls) {
        size_t cap = r->capcalls ? r->capcalls * 2 : 8;
        uint64_t *calls = realloc(r->calls, cap * sizeof(*calls));
        if (!calls) {
            host->provider->reply(host->instance, run, call, false, "dsh: out of memory", 18);
            return;
        }
        r->calls = calls;
        r->capcalls = cap;
    }
    r->calls[r->ncalls++] = call;
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string("call"));
    json_object_object_add(ev, "run", dsh_json_parse_strict(r->id, strlen(r->id)));
    json_object_object_add(ev, "call", json_object_new_uint64(call));
    json_object_object_add(ev, "global", json_object_new_string(global));
    json_object_object_add(ev, "name", json_object_new_string(name));
    dshh__emit_event(&c->events, ev, "args", args_json, args_len);
    json_object_put(ev);
}

/* "stream": true: {"type":"output","run":ID,"entry":{...}} before the result. A client that reads
 * slower than the program writes pauses the run rather than letting its output pile up here. */
static void on_output(void *userdata, dsh_run_id run, const char *entry_json, size_t entry_len)
{
    struct srun *r = userdata;
    if (r->bg) { /* kept for wait_run; maxOutputBytes bounds it */
        dshh__serve_bg_output(r->bg, entry_json, entry_len);
        return;
    }
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string("output"));
    json_object_object_add(ev, "run", dsh_json_parse_strict(r->id, strlen(r->id)));
    dshh__emit_event(&r->c->events, ev, "entry", entry_json, entry_len);
    json_object_put(ev);
    dshh__output_gate_check(&r->c->gate, run);
}

/* Idle: hand the heap pages that interleaved runs of different sizes freed back to the kernel,
 * so a long-lived host's RSS stays what one run needs (tests/soak). A small evaluation in a
 * retained environment allocates little and may come every fraction of a millisecond, where a
 * trim each time would be a measurable part of it: those trim every TRIM_EVERY_EVALUATIONS. */
#define TRIM_RESULT_BYTES ((size_t)64 << 10)
#define TRIM_EVERY_EVALUATIONS 64

static void release_idle_heap(struct server *srv, bool small_evaluation)
{
    if (small_evaluation && ++srv->small_evaluations_untrimmed < TRIM_EVERY_EVALUATIONS)
        return;
    srv->small_evaluations_untrimmed = 0;
    malloc_trim(0);
}

static void release_provider_text(void *arg, char *text)
{
    const struct dsh_provider *p = arg;
    p->free_text(text);
}

/* ---- background runs ----------------------------------------------------------------------------- */

static struct swaiter *waiter_of(struct client *c, const struct dshh_serve_bg_run *run)
{
    for (struct swaiter *w = c->waiters; w; w = w->next)
        if (w->run == run)
            return w;
    return NULL;
}

static void drop_waiter(struct swaiter *w)
{
    DSH_LIST_REMOVE(&w->c->waiters, w);
    if (w->timer > 0)
        dshh__loop_cancel_timer(w->c->srv->host->loop, w->timer);
    free(w->id);
    free(w);
}

/* Answers w with what its run has not returned yet (the run goes on unless it ended). */
static void answer_waiter(struct swaiter *w)
{
    struct client *c = w->c;
    struct dshh_serve_bg_run *run = w->run;
    char *id = w->id;
    w->id = NULL;
    drop_waiter(w);
    dshh__serve_bg_answer(&c->bg, run, id, &c->events); /* may collect run */
    free(id);
}

static void on_wait_due(void *arg)
{
    struct swaiter *w = arg;
    w->timer = 0;
    answer_waiter(w);
}

/* A waiter answering id for run after ms (ms < 0: once it ended); false when out of memory or
 * the loop refused the timer. */
static bool add_waiter(struct client *c, const char *id, struct dshh_serve_bg_run *run, bool yield, int64_t ms)
{
    struct swaiter *w = calloc(1, sizeof(*w));
    if (!w || !(w->id = strdup(id))) {
        free(w);
        return false;
    }
    *w = (struct swaiter){.next = c->waiters, .c = c, .id = w->id, .run = run, .yield = yield};
    if (ms >= 0 && (w->timer = dshh__loop_add_timer(c->srv->host->loop, (uint32_t)ms, on_wait_due, w)) < 0) {
        free(w->id);
        free(w);
        return false;
    }
    c->waiters = w;
    return true;
}

/* A background run ended: whoever waits gets its answer; a client that can ask no more (its
 * input ended) gets everything now, as answers to the run request itself. */
static void background_ended(struct srun *r, const char *result_json, size_t result_len)
{
    struct client *c = r->c;
    if (r->deadline_timer > 0)
        dshh__loop_cancel_timer(c->srv->host->loop, r->deadline_timer);
    dshh__bg_ended(&r->bg->base, result_json, result_len);
    struct swaiter *w = waiter_of(c, r->bg);
    if (w)
        answer_waiter(w);
    else if (c->eof)
        while (!dshh__serve_bg_answer(&c->bg, r->bg, r->bg->base.id, &c->events))
            ;
}

/* A background run's deadline beyond the provider's maximum (up to maxBackgroundMs), kept by dsh. */
static void on_background_deadline(void *arg)
{
    struct srun *r = arg;
    char why[128];
    r->deadline_timer = 0;
    snprintf(why, sizeof why, "the background run's deadline of %lld ms passed", (long long)r->deadline_ms);
    r->c->srv->host->provider->cancel(r->c->srv->host->instance, r->run, why);
}

/* owned: result_json was handed over (on_done_owned); it then waits in the client's queue as is. */
static void finish_run(struct srun *r, const char *result_json, char *owned, size_t result_len)
{
    struct client *c = r->c;
    struct dshh_host *host = c->srv->host;
    DSH_LIST_REMOVE(&c->runs, r);
    dshh__demo_cancel(host, &r->pending);
    /* The client may still be working on these: no reply can reach the run any more. */
    for (size_t i = 0; i < r->ncalls; i++) {
        json_object *ab = json_object_new_object();
        json_object_object_add(ab, "type", json_object_new_string("abandoned"));
        json_object_object_add(ab, "run", dsh_json_parse_strict(r->id, strlen(r->id)));
        json_object_object_add(ab, "call", json_object_new_uint64(r->calls[i]));
        dshh__emit_event(&c->events, ab, NULL, NULL, 0);
        json_object_put(ab);
    }
    if (r->bg) {
        background_ended(r, result_json, result_len);
        if (owned)
            host->provider->free_text(owned);
    } else {
        json_object *ev = dshh__event("result", r->id);
        if (owned)
            dshh__emit_event_owned(&c->events, ev, "result", owned, result_len, release_provider_text,
                                   (void *)host->provider);
        else
            dshh__emit_event(&c->events, ev, "result", result_json, result_len);
        json_object_put(ev);
    }
    bool small_evaluation = r->retained && result_len < TRIM_RESULT_BYTES;
    free(r->calls);
    free(r->id);
    free(r);
    if (!c->runs)
        release_idle_heap(c->srv, small_evaluation);
    maybe_finish(c);
}

static void on_done(void *userdata, dsh_run_id run, const char *result_json, size_t result_len)
{
    (void)run;
    finish_run(userdata, result_json, NULL, result_len);
}

static void on_done_owned(void *userdata, dsh_run_id run, char *result_json, size_t result_len)
{
    (void)run;
    finish_run(userdata, result_json, result_json, result_len);
}

static void on_released(void *userdata, const char *owner, int status)
{
    struct srelease *rel = userdata;
    struct client *c = rel->c;
    (void)owner; /* the provider's name; the client knows rel->owner */
    DSH_LIST_REMOVE(&c->releases, rel);
    if (!rel->id) {
        forget_owner(c, rel->owner); /* the client's end: nobody to tell */
    } else if (status < 0) {
        dshh__emit_error(&c->events, rel->id, "release of %s failed (%s): %s", rel->owner,
                   dsh_error_name(status) ? dsh_error_name(status) : "error", dsh_strerror(status));
    } else {
        forget_owner(c, rel->owner);
        json_object *ev = dshh__event("released", rel->id);
        dshh__emit_event(&c->events, ev, NULL, NULL, 0);
        json_object_put(ev);
    }
    free(rel->id);
    free(rel->owner);
    free(rel);
    maybe_finish(c);
}

/* Starts releasing owner (the client's name); 0, or a negative status with err filled. */
static int start_release(struct client *c, const char *owner, const char *id, struct dsh_error *err)
{
    struct dshh_host *host = c->srv->host;
    struct srelease *rel = calloc(1, sizeof(*rel));
    char *full = provider_owner(c, owner);
    if (!rel || !full || (id && !(rel->id = strdup(id))) || !(rel->owner = strdup(owner))) {
        if (rel)
            free(rel->id);
        free(rel);
        free(full);
        return -ENOMEM;
    }
    rel->c = c;
    /* Linked first: on_released may only come from dispatch(), but never before this. */
    rel->next = c->releases;
    c->releases = rel;
    int rc = host->provider->release(host->instance, full, on_released, rel, err);
    free(full);
    if (rc < 0) {
        c->releases = rel->next;
        free(rel->id);
        free(rel->owner);
        free(rel);
    }
    return rc;
}

/* A socket client ended: its owners' environments go with it (the server lives on). */
static void release_owners(struct client *c)
{
    c->owners_released = true;
    for (size_t i = c->nowners; i-- > 0;) {
        struct dsh_error err = {0};
        char *owner = strdup(c->owners[i]);
        if (!owner || start_release(c, owner, NULL, &err) < 0)
            forget_owner(c, c->owners[i]);
        free(owner);
    }
}

/* ---- requests ------------------------------------------------------------------------------------ */

static bool check_keys(struct client *c, json_object *req, const char *const *allowed, const char *id)
{
    json_object_object_foreach(req, key, val)
    {
        (void)val;
        bool ok = false;
        for (size_t i = 0; allowed[i]; i++)
            ok = ok || !strcmp(allowed[i], key);
        if (!ok) {
            dshh__emit_error(&c->events, id, "unknown field \"%s\" in a %s request", key,
                       json_object_get_string(json_object_object_get(req, "type")));
            return false;
        }
    }
    return true;
}

/* Field of type t (json_type_null = absent is fine); false after an error event. */
static bool field(struct client *c, json_object *req, const char *key, json_type t, bool required, json_object **ret,
                  const char *id)
{
    *ret = NULL;
    json_object *v;
    if (!json_object_object_get_ex(req, key, &v)) {
        if (required)
            dshh__emit_error(&c->events, id, "missing field \"%s\"", key);
        return !required;
    }
    bool ok = json_object_is_type(v, t) ||
              (t == json_type_double && json_object_is_type(v, json_type_int));
    if (!ok) {
        dshh__emit_error(&c->events, id, "field \"%s\" must be a%s %s", key, t == json_type_int ? "n" : "",
                         t == json_type_double ? "number" : t == json_type_int ? "integer" : json_type_to_name(t));
        return false;
    }
    *ret = v;
    return true;
}

static bool check_bindings(struct client *c, json_object *bindings, const char *id)
{
    for (size_t i = 0; i < json_object_array_length(bindings); i++) {
        json_object *ns = json_object_array_get_idx(bindings, i), *g, *fns;
        if (!json_object_is_type(ns, json_type_object) ||
            !json_object_object_get_ex(ns, "global", &g) || !json_object_is_type(g, json_type_string) ||
            !json_object_object_get_ex(ns, "functions", &fns) ||
            !json_object_is_type(fns, json_type_array)) {
            dshh__emit_error(&c->events, id, "bindings[%zu] must be {\"global\": string, \"functions\": [string]}", i);
            return false;
        }
        for (size_t j = 0; j < json_object_array_length(fns); j++)
            if (!json_object_is_type(json_object_array_get_idx(fns, j), json_type_string)) {
                dshh__emit_error(&c->events, id, "bindings[%zu].functions[%zu] must be a string", i, j);
                return false;
            }
    }
    return true;
}

static void req_run(struct client *c, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "program", "stateOwner", "timeoutMs", "cwd",
                                          "discardCompletion", "sessionId", "mode", "network", "bindings", "images",
                                          "stream", "yieldAfterMs", NULL};
    json_object *program, *owner, *cwd, *discard, *session, *mode, *network, *bindings, *timeout, *images, *stream,
        *yield;
    if (!check_keys(c, req, allowed, id) ||
        !field(c, req, "program", json_type_string, true, &program, id) ||
        !field(c, req, "stateOwner", json_type_string, false, &owner, id) ||
        !field(c, req, "cwd", json_type_string, false, &cwd, id) ||
        !field(c, req, "discardCompletion", json_type_boolean, false, &discard, id) ||
        !field(c, req, "sessionId", json_type_string, false, &session, id) ||
        !field(c, req, "mode", json_type_string, false, &mode, id) ||
        !field(c, req, "network", json_type_object, false, &network, id) ||
        !field(c, req, "bindings", json_type_array, false, &bindings, id) ||
        !field(c, req, "images", json_type_array, false, &images, id) ||
        !field(c, req, "stream", json_type_boolean, false, &stream, id) ||
        !field(c, req, "yieldAfterMs", json_type_int, false, &yield, id) ||
        (bindings && !check_bindings(c, bindings, id)))
        return;
    int64_t yield_ms = -1, timeout_ms = 0;
    if (yield && !dsh_json_as_int64(yield, 0, MAX_YIELD_MS, &yield_ms)) {
        dshh__emit_error(&c->events, id, "field \"yieldAfterMs\" must be an integer from 0 to %d", MAX_YIELD_MS);
        return;
    }
    /* timeoutMs: a number, or null for no deadline. */
    bool has_timeout = json_object_object_get_ex(req, "timeoutMs", &timeout);
    if (has_timeout && timeout && !json_object_is_type(timeout, json_type_int) &&
        !json_object_is_type(timeout, json_type_double)) {
        dshh__emit_error(&c->events, id, "field \"timeoutMs\" must be a number or null");
        return;
    }
    if (yield) {
        struct server *srv = c->srv;
        int64_t max = srv->max_background_ms > srv->max_timeout_ms ? srv->max_background_ms : srv->max_timeout_ms;
        if (stream && json_object_get_boolean(stream)) {
            dshh__emit_error(&c->events, id, "\"stream\" and \"yieldAfterMs\" do not combine: a background run's "
                             "output comes in the answers to its run and wait_run requests");
            return;
        }
        if (has_timeout && !dsh_json_as_int64(timeout, 1, max, &timeout_ms)) {
            dshh__emit_error(&c->events, id, "with \"yieldAfterMs\", field \"timeoutMs\" must be an integer from 1 "
                             "to %lld (maxBackgroundMs)", (long long)max);
            return;
        }
        if ((int64_t)dshh__bg_running(&c->bg.list) >= srv->max_background_runs) {
            dshh__emit_error(&c->events, id, "at most %lld background runs may run at once in this session: collect "
                             "one with wait_run or stop one with terminate_run first",
                             (long long)srv->max_background_runs);
            return;
        }
    }
    if (find_run(c, id)) {
        dshh__emit_error(&c->events, id, "a run with this id is in flight");
        return;
    }
    if (dshh__bg_find(&c->bg.list, id)) {
        dshh__emit_error(&c->events, id, "the background run with this id has a result nobody collected: "
                         "wait_run collects it");
        return;
    }
    if (session && c->socket) { /* one client must not act in another's session */
        dshh__emit_error(&c->events, id, "sessionId is not accepted on a listening server: this connection's runs "
                         "belong to session \"%s\"", c->session);
        return;
    }
    char *full_owner = owner ? provider_owner(c, json_object_get_string(owner)) : NULL;
    if (owner && !full_owner) {
        dshh__emit_error(&c->events, id, "out of memory");
        return;
    }
    json_object *r = json_object_new_object();
    json_object_object_add(r, "program", json_object_get(program));
    if (owner)
        json_object_object_add(r, "stateOwner", json_object_new_string(full_owner));
    free(full_owner);
    if (cwd)
        json_object_object_add(r, "cwd", json_object_get(cwd));
    if (discard)
        json_object_object_add(r, "discardCompletion", json_object_get(discard));
    if (session)
        json_object_object_add(r, "sessionId", json_object_get(session));
    else if (c->socket)
        json_object_object_add(r, "sessionId", json_object_new_string(c->session));
    if (mode) /* an approved one-time escalation for this run only */
        json_object_object_add(r, "mode", json_object_get(mode));
    if (network) /* with mode: the escalation's network list (the provider refuses it alone) */
        json_object_object_add(r, "network", json_object_get(network));
    if (timeout_ms > c->srv->max_timeout_ms) /* beyond the provider's maximum: dsh keeps it */
        json_object_object_add(r, "timeoutMs", NULL);
    else if (has_timeout)
        json_object_object_add(r, "timeoutMs", json_object_get(timeout));
    if (images) /* [{attachmentId, path}]: the provider validates and reads them */
        json_object_object_add(r, "images", json_object_get(images));
    json_object *b = bindings ? json_object_get(bindings) : json_object_new_array();
    struct srun *run = calloc(1, sizeof(*run));
    if (!run || !(run->id = strdup(id))) {
        free(run);
        json_object_put(b);
        json_object_put(r);
        dshh__emit_error(&c->events, id, "out of memory");
        return;
    }
    run->c = c;
    run->stream = stream && json_object_get_boolean(stream);
    run->retained = owner != NULL;
    /* The demo namespace joins the client's unless the client declared `tools` itself. */
    run->demo = c->srv->host->demo_tools && dshh__add_demo_bindings(b);
    /* The host's native namespaces join every run; a client namespace of the same name makes the
     * provider reject the run (declared twice). */
    dshh__native_declare(c->srv->host->native, b);
    json_object_object_add(r, "bindings", b);
    const char *text = dshh__jstr(r);
    struct dsh_run_callbacks cb = {.struct_size = sizeof(cb),
                                   .on_call = on_call,
                                   .on_done = on_done,
                                   .userdata = run,
                                   .on_output = run->stream || yield ? on_output : NULL,
                                   .on_done_owned = on_done_owned};
    struct dsh_error err;
    int rc = -ENOMEM;
    *err.message = '\0';
    if (!yield || (run->bg = dshh__serve_bg_add(&c->bg, id)))
        rc = dshh__start_run(c->srv->host, text, strlen(text), &cb, &run->run, &err);
    json_object_put(r);
    if (rc < 0) {
        dshh__emit_error(&c->events, id, "run rejected (%s): %s", dsh_error_name(rc) ? dsh_error_name(rc) : "error",
                   *err.message ? err.message : dsh_strerror(rc));
        if (run->bg) /* nothing to keep */
            dshh__bg_collect(&c->bg.list, &run->bg->base);
        free(run->id);
        free(run);
        return;
    }
    if (yield) {
        run->deadline_ms = timeout_ms;
        bool keeps_deadline = timeout_ms > c->srv->max_timeout_ms;
        if (keeps_deadline)
            run->deadline_timer =
                dshh__loop_add_timer(c->srv->host->loop, (uint32_t)timeout_ms, on_background_deadline, run);
        if (run->deadline_timer < 0 || !add_waiter(c, id, run->bg, true, yield_ms)) {
            /* Without its deadline or its first answer the run stops rather than go on unseen. */
            run->deadline_timer = 0;
            c->srv->host->provider->cancel(c->srv->host->instance, run->run, "dsh: out of memory");
        }
    }
    if (owner)
        remember_owner(c, json_object_get_string(owner));
    run->next = c->runs;
    c->runs = run;
}

static void req_cancel(struct client *c, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "reason", NULL};
    json_object *reason;
    if (!check_keys(c, req, allowed, id) || !field(c, req, "reason", json_type_string, false, &reason, id))
        return;
    struct srun *r = find_run(c, id);
    int rc = r ? c->srv->host->provider->cancel(c->srv->host->instance, r->run,
                                             reason ? json_object_get_string(reason) : NULL)
               : DSH_E_NOT_FOUND;
    if (rc < 0)
        dshh__emit_error(&c->events, id, "cancel: %s", r ? dsh_strerror(rc) : "no run with this id is in flight");
}

static void req_reply(struct client *c, json_object *req, struct dsh_json_slice value_text)
{
    static const char *const allowed[] = {"type", "run", "call", "ok", "value", "message", NULL};
    json_object *run_id, *call, *ok, *message;
    if (!check_keys(c, req, allowed, NULL) || !field(c, req, "call", json_type_int, true, &call, NULL) ||
        !field(c, req, "ok", json_type_boolean, true, &ok, NULL) ||
        !field(c, req, "message", json_type_string, false, &message, NULL))
        return;
    if (!json_object_object_get_ex(req, "run", &run_id) ||
        !(json_object_is_type(run_id, json_type_string) || json_object_is_type(run_id, json_type_int))) {
        dshh__emit_error(&c->events, NULL, "a reply needs \"run\" (the run request's id)");
        return;
    }
    const char *rid = dshh__jstr(run_id);
    struct srun *r = find_run(c, rid);
    int64_t n = json_object_get_int64(call);
    size_t i = 0;
    while (r && i < r->ncalls && (int64_t)r->calls[i] != n)
        i++;
    if (!r || i == r->ncalls) {
        dshh__emit_error(&c->events, NULL, "reply: run %s has no open call %lld", rid, (long long)n);
        return;
    }
    int rc;
    if (json_object_get_boolean(ok)) {
        /* An absent value answers undefined; the value's text passes on as the client wrote it. */
        rc = c->srv->host->provider->reply(c->srv->host->instance, r->run, (uint64_t)n, true, value_text.text,
                                        value_text.len);
    } else {
        const char *m = message ? json_object_get_string(message) : "the binding failed";
        rc = c->srv->host->provider->reply(c->srv->host->instance, r->run, (uint64_t)n, false, m,
                                        strlen(m));
    }
    if (rc < 0 && rc != DSH_E_NOT_FOUND) {
        /* Nothing reached the program: the client may answer again. */
        dshh__emit_error(&c->events, NULL, "reply to run %s call %lld rejected (%s): %s; the call is still open", rid,
                         (long long)n, dsh_error_name(rc) ? dsh_error_name(rc) : "error", dsh_strerror(rc));
        return;
    }
    /* Delivered, or the run is stopping and no longer takes answers: closed either way. */
    r->calls[i] = r->calls[--r->ncalls];
}

static void req_release(struct client *c, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "stateOwner", NULL};
    json_object *owner;
    if (!check_keys(c, req, allowed, id) || !field(c, req, "stateOwner", json_type_string, true, &owner, id))
        return;
    size_t known;
    if (!owner_index(c, json_object_get_string(owner), &known)) {
        dshh__emit_error(&c->events, id, "release: no run of this session used stateOwner \"%s\" since its last release",
                         json_object_get_string(owner));
        return;
    }
    struct dsh_error err = {0};
    int rc = start_release(c, json_object_get_string(owner), id, &err);
    if (rc == -ENOMEM)
        dshh__emit_error(&c->events, id, "out of memory");
    else if (rc < 0)
        dshh__emit_error(&c->events, id, "release rejected (%s): %s", dsh_error_name(rc) ? dsh_error_name(rc) : "error",
                         *err.message ? err.message : dsh_strerror(rc));
}

/* wait_run and terminate_run: the background run named by req's runId, or NULL after an error. */
static struct dshh_serve_bg_run *named_run(struct client *c, json_object *req, const char *type, const char *id)
{
    json_object *run_id = dsh_json_member(req, "runId");
    if (!run_id || !(json_object_is_type(run_id, json_type_string) || json_object_is_type(run_id, json_type_int))) {
        dshh__emit_error(&c->events, id, "%s needs \"runId\" (the run request's id)", type);
        return NULL;
    }
    const char *text = dshh__jstr(run_id);
    struct dshh_serve_bg_run *run = (struct dshh_serve_bg_run *)dshh__bg_find(&c->bg.list, text);
    struct swaiter *w = run ? waiter_of(c, run) : NULL;
    if (!run)
        dshh__emit_error(&c->events, id, "%s: no background run %.*s in this session (its result was collected, "
                         "expired, or it never started)", type, (int)dsh_utf8_cut(text, strlen(text), 64), text);
    else if (w && !w->yield && strcmp(type, "terminate_run") != 0)
        dshh__emit_error(&c->events, id, "wait_run: another wait_run or terminate_run is waiting for run %s", run->base.id);
    else
        return run;
    return NULL;
}

static void req_wait_run(struct client *c, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "runId", "yieldAfterMs", NULL};
    json_object *yield;
    int64_t ms = WAIT_DEFAULT_MS;
    struct dshh_serve_bg_run *run;
    if (!check_keys(c, req, allowed, id) || !field(c, req, "yieldAfterMs", json_type_int, false, &yield, id))
        return;
    if (yield && !dsh_json_as_int64(yield, 0, MAX_YIELD_MS, &ms)) {
        dshh__emit_error(&c->events, id, "field \"yieldAfterMs\" must be an integer from 0 to %d", MAX_YIELD_MS);
        return;
    }
    if (!(run = named_run(c, req, "wait_run", id)))
        return;
    struct swaiter *w = waiter_of(c, run);
    if (w) /* the run request's own wait, before its yield: it is answered now */
        answer_waiter(w);
    if (run->base.result || ms == 0)
        dshh__serve_bg_answer(&c->bg, run, id, &c->events);
    else if (!add_waiter(c, id, run, false, ms))
        dshh__emit_error(&c->events, id, "out of memory");
}

static void req_terminate_run(struct client *c, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "runId", NULL};
    struct dshh_serve_bg_run *run;
    if (!check_keys(c, req, allowed, id) || !(run = named_run(c, req, "terminate_run", id)))
        return;
    struct swaiter *w = waiter_of(c, run);
    if (w) /* whoever waited gets what there is; this request gets the end */
        answer_waiter(w);
    if (run->base.result) {
        dshh__serve_bg_answer(&c->bg, run, id, &c->events);
        return;
    }
    if (!add_waiter(c, id, run, false, -1)) {
        dshh__emit_error(&c->events, id, "out of memory");
        return;
    }
    for (struct srun *r = c->runs; r; r = r->next)
        if (r->bg == run) {
            c->srv->host->provider->cancel(c->srv->host->instance, r->run, TERMINATED);
            break;
        }
}

static void req_list_runs(struct client *c, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", NULL};
    if (check_keys(c, req, allowed, id))
        dshh__serve_bg_list(&c->bg, id, &c->events);
}

/* hello (at start) and the answer to a describe request: versions and the provider's describe(). */
static void emit_hello(struct client *c, const char *id)
{
    struct dshh_host *host = c->srv->host;
    char *json = NULL;
    size_t len = 0;
    struct dsh_error err = {0};
    int rc = host->provider->describe(host->instance, &json, &len, &err);
    if (rc < 0) {
        dshh__emit_error(&c->events, id, "describe failed (%s): %s", dsh_error_name(rc) ? dsh_error_name(rc) : "error",
                         *err.message ? err.message : dsh_strerror(rc));
        return;
    }
    json_object *ev = dshh__event("hello", id);
    json_object_object_add(ev, "version", json_object_new_string(DSH_VERSION));
    json_object *abi = json_object_new_object();
    json_object_object_add(abi, "major", json_object_new_int(DSH_ABI_MAJOR));
    json_object_object_add(abi, "minor", json_object_new_int(DSH_ABI_MINOR));
    json_object_object_add(ev, "abi", abi);
    json_object *provider = json_object_new_object();
    json_object_object_add(provider, "name", json_object_new_string(host->provider->name));
    json_object_object_add(provider, "version", json_object_new_string(host->provider->version));
    json_object *pabi = json_object_new_object();
    json_object_object_add(pabi, "major", json_object_new_int((int)host->provider->abi_major));
    json_object_object_add(pabi, "minor", json_object_new_int((int)host->provider->abi_minor));
    json_object_object_add(provider, "abi", pabi);
    json_object_object_add(ev, "provider", provider);
    if (c->socket)
        json_object_object_add(ev, "session", json_object_new_string(c->session));
    dshh__emit_event(&c->events, ev, "describe", json, len);
    json_object_put(ev);
    host->provider->free_text(json);
}

static void req_describe(struct client *c, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", NULL};
    if (check_keys(c, req, allowed, id))
        emit_hello(c, id);
}

static void req_set_mode(struct client *c, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "session", "mode", NULL};
    json_object *session, *mode;
    if (!check_keys(c, req, allowed, id) || !field(c, req, "session", json_type_string, false, &session, id) ||
        !field(c, req, "mode", json_type_string, true, &mode, id))
        return;
    if (session && c->socket) {
        dshh__emit_error(&c->events, id, "set-mode: \"session\" is not accepted on a listening server: this "
                         "connection's session is \"%s\"", c->session);
        return;
    }
    /* A socket client changes its own session only. */
    json_object *own = c->socket ? json_object_new_string(c->session) : NULL;
    if (own)
        session = own;
    struct dsh_error err = {0};
    int rc = dsh_linux_policy_set_mode(c->srv->host->services_impl,
                                       session ? json_object_get_string(session) : NULL,
                                       json_object_get_string(mode), &err);
    if (rc < 0) {
        dshh__emit_error(&c->events, id, "set-mode: %s", *err.message ? err.message : dsh_strerror(rc));
        json_object_put(own);
        return;
    }
    json_object *ev = dshh__event("mode-set", id);
    json_object_object_add(ev, "session", session ? json_object_get(session) : NULL);
    json_object_object_add(ev, "mode", json_object_get(mode));
    dshh__emit_event(&c->events, ev, NULL, NULL, 0);
    json_object_put(ev);
    json_object_put(own);
}

/* Names the reply a line that is not strict JSON was meant to be, so the client learns that its
 * call is still open and may answer again. json-c's lenient parser only reads the line's "run"
 * and "call" here; nothing it returns is acted on. */
static void invalid_line(struct client *c, const char *line, size_t len)
{
    static const char what[] = "invalid JSON: the line is not exactly one strict JSON value "
                               "(RFC 8259 in UTF-8, finite numbers, a reply's value nesting up to 10000 levels)";
    json_tokener *tok = json_tokener_new();
    json_object *guess = tok ? json_tokener_parse_ex(tok, line, (int)len) : NULL, *type, *run, *call;
    json_tokener_free(tok);
    if (json_object_object_get_ex(guess, "type", &type) && json_object_is_type(type, json_type_string) &&
        !strcmp(json_object_get_string(type), "reply") && json_object_object_get_ex(guess, "run", &run) &&
        (json_object_is_type(run, json_type_string) || json_object_is_type(run, json_type_int)) &&
        json_object_object_get_ex(guess, "call", &call) && json_object_is_type(call, json_type_int))
        dshh__emit_error(&c->events, NULL, "%s; the reply was not delivered: run %s call %lld is still open", what,
                         dshh__jstr(run), (long long)json_object_get_int64(call));
    else
        dshh__emit_error(&c->events, NULL, "%s", what);
    json_object_put(guess);
}

/* The requests (host-abi/schemas/serve.json): whether each needs an id, and its handler (a
 * reply's is req_reply, which takes the value's text). */
struct request_kind {
    const char *type;
    bool needs_id;
    void (*handle)(struct client *c, json_object *req, const char *id);
};

static const struct request_kind REQUESTS[] = {
    {"run", true, req_run},
    {"cancel", true, req_cancel},
    {"reply", false, NULL},
    {"release", true, req_release},
    {"set-mode", false, req_set_mode},
    {"describe", false, req_describe},
    {"wait_run", true, req_wait_run},
    {"terminate_run", true, req_terminate_run},
    {"list_runs", true, req_list_runs},
};

static const struct request_kind *request_kind(const char *type)
{
    for (size_t i = 0; i < sizeof REQUESTS / sizeof REQUESTS[0]; i++)
        if (!strcmp(REQUESTS[i].type, type))
            return &REQUESTS[i];
    return NULL;
}

static void handle_line(struct client *c, const char *line, size_t len)
{
    size_t s = 0;
    while (s < len && (line[s] == ' ' || line[s] == '\t' || line[s] == '\r'))
        s++;
    if (s == len)
        return; /* blank lines are keep-alives */
    /* Strict and lossless: a reply's value is validated and passed on as its text (never a
     * tree), so numbers keep their text and values nest as deep as the provider takes them; the
     * rest of a request is a small tree with a node budget. */
    static const char *const raw[] = {"value", NULL};
    struct dsh_json_slice value;
    json_object *req = line[s] == '{' ? dsh_json_parse_envelope(line, len, raw, &value, DSHH_RESULT_MAX_NODES(len))
                                      : NULL;
    if ((req && value.text && !dsh_json_is_value(value.text, value.len, DSH_JSON_VALUE_MAX_DEPTH, NULL)) ||
        (!req && !dsh_json_is_value(line, len, DSH_JSON_VALUE_MAX_DEPTH, NULL))) {
        json_object_put(req);
        invalid_line(c, line, len);
        return;
    }
    if (!req) {
        dshh__emit_error(&c->events, NULL, line[s] == '{' ? "a request is larger than its budget of %zu JSON values"
                                              : "a request must be a JSON object",
                         (size_t)DSHH_RESULT_MAX_NODES(len));
        return;
    }
    if (value.text)
        json_object_object_add(req, "value", NULL); /* for the key checks; req_reply reads the text */
    json_object *type, *idv = NULL;
    const char *id = NULL;
    if (json_object_object_get_ex(req, "id", &idv) &&
        (json_object_is_type(idv, json_type_string) || json_object_is_type(idv, json_type_int)))
        id = dshh__jstr(idv);
    char *id_copy = id ? strdup(id) : NULL; /* jstr's buffer belongs to idv */
    const char *t = json_object_object_get_ex(req, "type", &type) &&
                            json_object_is_type(type, json_type_string)
                        ? json_object_get_string(type)
                        : NULL;
    const struct request_kind *kind = t ? request_kind(t) : NULL;
    dshh__bg_expire(&c->bg.list, DSHH_SERVE_KEEP_MS);
    if (!t)
        dshh__emit_error(&c->events, id_copy, "a request needs a string \"type\"");
    else if (!kind)
        dshh__emit_error(&c->events, id_copy, "unknown request type \"%s\"", t);
    else if (idv && !id_copy)
        dshh__emit_error(&c->events, NULL, "\"id\" must be a string or an integer");
    else if (kind->needs_id && !id_copy)
        dshh__emit_error(&c->events, NULL, "a %s request needs an \"id\" (a string or an integer)", t);
    else if (kind->handle)
        kind->handle(c, req, id_copy);
    else
        req_reply(c, req, value);
    free(id_copy);
    json_object_put(req);
}

/* ---- SIGTERM / SIGINT ------------------------------------------------------------------------------ */

static void stop_reading(struct client *c)
{
    if (!c->eof) {
        c->eof = true;
        dshh__loop_remove_fd(c->srv->host->loop, c->in_fd);
    }
}

/* Cancels every client's runs and leaves the loop; the command then unloads, which waits until
 * every range is quiescent (retained ones included) and removes their temp directories. */
static void on_stop_signal(void *arg, int sig)
{
    struct server *srv = arg;
    if (srv->stop_signal)
        return;
    srv->stop_signal = sig;
    if (srv->listen_fd >= 0) /* no new clients */
        dshh__loop_remove_fd(srv->host->loop, srv->listen_fd);
    char why[64];
    snprintf(why, sizeof why, "dsh received %s", sig == SIGINT ? "SIGINT" : "SIGTERM");
    for (struct client *c = srv->clients; c; c = c->next) {
        stop_reading(c);
        for (struct srun *r = c->runs; r; r = r->next)
            srv->host->provider->cancel(srv->host->instance, r->run, why);
    }
    dshh__loop_quit(srv->host->loop);
}

/* The client is gone, or left MAX_UNREAD bytes of events unread and was dropped: no result can
 * reach it, so its runs are cancelled. On stdio dsh then exits once they ended; a socket client
 * is closed and the server goes on. */
static void client_gone(struct client *c, const char *why)
{
    stop_reading(c);
    if (c->socket && !c->gone)
        log_client(c, c->runs ? "is gone: its runs are cancelled" : "is gone");
    c->gone = true;
    for (struct srun *r = c->runs; r; r = r->next)
        c->srv->host->provider->cancel(c->srv->host->instance, r->run, why);
}

static void on_client_dropped(void *arg)
{
    struct client *c = arg;
    c->drop_seen = true;
    client_gone(c, DROPPED);
    maybe_finish(c);
}

/* A socket client that closed its sending side may still read: the connection is watched for
 * its hang-up (events 0: epoll reports EPOLLHUP and EPOLLERR only). */
static void on_hangup(void *arg, uint32_t events)
{
    (void)events;
    struct client *c = arg;
    dshh__loop_remove_fd(c->srv->host->loop, c->in_fd);
    client_gone(c, DISCONNECTED);
    maybe_finish(c);
}

/* ---- input --------------------------------------------------------------------------------------- */

static void on_line(void *arg, const char *line, size_t len)
{
    struct client *c = arg;
    if (line)
        handle_line(c, line, len);
    else
        dshh__emit_error(&c->events, NULL, "request line longer than %zu bytes (or out of memory for it)", MAX_LINE);
}

static void on_input(void *arg, uint32_t events)
{
    struct client *c = arg;
    if (dshh__lines_read(&c->lines, c->in_fd, on_line, c))
        return;
    stop_reading(c);
    /* No reply can come any more: settle the client's open calls so runs end now, not at their
     * deadline. */
    for (struct srun *r = c->runs; r; r = r->next) {
        for (size_t i = 0; i < r->ncalls; i++)
            c->srv->host->provider->reply(c->srv->host->instance, r->run, r->calls[i], false, no_client(c),
                                          strlen(no_client(c)));
        r->ncalls = 0;
        if (r->bg) /* nobody can wait for it any more */
            c->srv->host->provider->cancel(c->srv->host->instance, r->run, SESSION_ENDED);
    }
    /* A socket peer that closed the whole connection reads no results: its runs are cancelled.
     * One that only shut down its sending side gets them, like a client that closes stdin. */
    if (c->socket && (events & (EPOLLHUP | EPOLLERR)))
        client_gone(c, DISCONNECTED);
    else if (c->socket && c->runs && dshh__loop_add_fd(c->srv->host->loop, c->in_fd, 0, on_hangup, c) < 0)
        client_gone(c, DISCONNECTED);
    maybe_finish(c);
}

/* ---- clients ------------------------------------------------------------------------------------- */

/* A client with its queue and writer; the caller links it and emits hello. NULL after a message
 * on stderr (the fds are then not closed). */
static struct client *client_new(struct server *srv, int in_fd, int out_fd, bool socket)
{
    struct client *c = calloc(1, sizeof *c);
    if (!c) {
        fprintf(stderr, "dsh: out of memory for a client\n");
        return NULL;
    }
    *c = (struct client){.srv = srv, .in_fd = in_fd, .out_fd = out_fd, .socket = socket, .lines = {.max = MAX_LINE}};
    int rc = dshh__out_queue_open(&c->out, srv->host->loop, out_fd, MAX_UNREAD);
    if (rc < 0) {
        fprintf(stderr, socket ? "dsh: cannot write to a client: %s\n" : "dsh: cannot write to stdout: %s\n",
                strerror(-rc));
        free(c);
        return NULL;
    }
    char who[64] = "the client";
    if (socket) {
        snprintf(c->session, sizeof c->session, "serve-%ld-%lu", (long)getpid(), ++srv->accepted);
        snprintf(who, sizeof who, "the client %s", c->session);
    }
    dshh__events_init(&c->events, &c->out, on_client_dropped, c, who);
    dshh__output_gate_init(&c->gate, srv->host, &c->out);
    dshh__serve_bg_init(&c->bg);
    return c;
}

static void client_free(struct client *c)
{
    struct server *srv = c->srv;
    DSH_LIST_REMOVE(&srv->clients, c);
    if (c->free_timer)
        dshh__loop_cancel_timer(srv->host->loop, c->free_timer);
    while (c->waiters)
        drop_waiter(c->waiters);
    dshh__bg_free_all(&c->bg.list);
    dshh__output_gate_close(&c->gate);
    dshh__out_queue_close(&c->out);
    dshh__lines_free(&c->lines);
    for (size_t i = 0; i < c->nowners; i++)
        free(c->owners[i]);
    free(c->owners);
    if (c->socket) {
        log_client(c, "closed");
        dshh__loop_remove_fd(srv->host->loop, c->in_fd);
        close(c->out_fd);
        close(c->in_fd);
        srv->nsockets--;
    }
    free(c);
}

static void free_client_now(void *arg)
{
    struct client *c = arg;
    c->free_timer = 0; /* fired: nothing to cancel */
    client_free(c);
}

/* The connection is refused: one error line, then closed. */
static void refuse_client(int fd)
{
    char message[128];
    snprintf(message, sizeof message, "dsh already serves %d clients, its limit; connect again later", MAX_CLIENTS);
    json_object *ev = dshh__event("error", NULL);
    json_object_object_add(ev, "message", json_object_new_string(message));
    const char *text = dshh__jstr(ev);
    char line[256];
    int n = snprintf(line, sizeof line, "%s\n", text);
    /* A fresh socket's buffer takes one short line; a peer that does not read loses it. */
    (void)send(fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
    json_object_put(ev);
    close(fd);
}

static void on_listen_ready(void *arg, uint32_t events);

static void resume_accepting(void *arg)
{
    struct server *srv = arg;
    if (!srv->stop_signal && dshh__loop_add_fd(srv->host->loop, srv->listen_fd, EPOLLIN, on_listen_ready, srv) < 0)
        fprintf(stderr, "dsh: cannot watch %s any more; no new clients\n", srv->addr->text);
}

static void on_listen_ready(void *arg, uint32_t events)
{
    (void)events;
    struct server *srv = arg;
    int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            /* Level-triggered: a pending connection would wake the loop at once again. */
            fprintf(stderr, "dsh: cannot accept a client on %s: %s\n", srv->addr->text, strerror(errno));
            dshh__loop_remove_fd(srv->host->loop, srv->listen_fd);
            if (dshh__loop_add_timer(srv->host->loop, ACCEPT_PAUSE_MS, resume_accepting, srv) < 0)
                fprintf(stderr, "dsh: cannot watch %s any more; no new clients\n", srv->addr->text);
        }
        return; /* EAGAIN, EINTR, ECONNABORTED: nothing to take */
    }
    if (srv->nsockets >= MAX_CLIENTS) {
        refuse_client(fd);
        return;
    }
    int out_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    struct client *c = out_fd >= 0 ? client_new(srv, fd, out_fd, true) : NULL;
    if (!c) {
        if (out_fd < 0)
            fprintf(stderr, "dsh: cannot take a client: %s\n", strerror(errno));
        else
            close(out_fd);
        close(fd);
        return;
    }
    srv->nsockets++;
    c->next = srv->clients;
    srv->clients = c;
    log_client(c, "connected");
    emit_hello(c, NULL);
    int rc = dshh__loop_add_fd(srv->host->loop, fd, EPOLLIN, on_input, c);
    if (rc < 0) {
        fprintf(stderr, "dsh: cannot watch a client: %s\n", strerror(-rc));
        client_free(c);
    }
}

/* At a stop signal: what socket clients still have to read, for at most FINAL_FLUSH_MS (a
 * client that stopped reading must not keep dsh from exiting). */
static void flush_sockets(struct server *srv)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct pollfd p[MAX_CLIENTS];
        nfds_t n = 0;
        for (struct client *c = srv->clients; c && n < MAX_CLIENTS; c = c->next)
            if (c->socket && !dshh__events_dropped(&c->events) && dshh__out_queue_drain_now(&c->out) == 0 &&
                dshh__out_queue_waiting(&c->out))
                p[n++] = (struct pollfd){.fd = c->out_fd, .events = POLLOUT};
        clock_gettime(CLOCK_MONOTONIC, &now);
        long spent = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (!n || spent >= FINAL_FLUSH_MS)
            return;
        if (poll(p, n, (int)(FINAL_FLUSH_MS - spent)) < 0 && errno != EINTR)
            return;
    }
}

/* ---- the command --------------------------------------------------------------------------------- */

/* The provider's timeoutMs maximum (its describe()) and the background runs' bounds. */
static void background_limits(struct server *srv, const struct dshh_profile *profile)
{
    char *json = NULL;
    size_t len = 0;
    struct dsh_error err = {0};
    if (srv->host->provider->describe(srv->host->instance, &json, &len, &err) == 0) {
        json_object *describe = dsh_json_parse_strict(json, len);
        dsh_json_get_int64(dsh_json_get_object(describe, "timeout"), "maxMs", 1, INT64_MAX, &srv->max_timeout_ms);
        json_object_put(describe);
        srv->host->provider->free_text(json);
    }
    dshh__profile_value(profile, DSHH_NAME_MCP_BINDINGS, "maxBackgroundMs", false, &srv->max_background_ms);
    dshh__profile_value(profile, DSHH_NAME_MCP_BINDINGS, "maxBackgroundRuns", false, &srv->max_background_runs);
}

/* Serves stdin/stdout (listen_fd < 0) or the clients of listen_fd until EOF on stdin or a stop
 * signal. */
static int serve(struct dshh_host *host, const struct dshh_profile *profile, int listen_fd,
                 const struct dshh_listen_addr *addr)
{
    /* A client that stops reading must not kill dsh before it cleans up its runs. */
    signal(SIGPIPE, SIG_IGN);
    struct server srv = {.host = host, .listen_fd = listen_fd, .addr = addr};
    background_limits(&srv, profile);
    struct client *stdio = NULL;
    if (listen_fd < 0) {
        /* Results can be as large as maxOutputBytes: a 1 MiB pipe (where stdout is one) lets the
         * client take them in fewer wake-ups. Nothing changes where stdout is no pipe. */
        (void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
        if (!(stdio = client_new(&srv, STDIN_FILENO, STDOUT_FILENO, false)))
            return DSHH_EXIT_USAGE;
        srv.clients = stdio;
    }
    int rc = dshh__stop_signals_watch(host->loop, on_stop_signal, &srv);
    if (rc < 0) {
        fprintf(stderr, "dsh: cannot watch SIGTERM/SIGINT: %s\n", strerror(-rc));
        if (stdio)
            client_free(stdio);
        return DSHH_EXIT_USAGE;
    }
    if (stdio) {
        emit_hello(stdio, NULL);
        rc = dshh__loop_watch_input(host->loop, STDIN_FILENO, on_input, stdio, &stdio->eof);
        if (rc < 0)
            fprintf(stderr, "dsh: cannot watch stdin: %s\n", strerror(-rc));
    } else {
        rc = dshh__loop_add_fd(host->loop, listen_fd, EPOLLIN, on_listen_ready, &srv);
        if (rc < 0)
            fprintf(stderr, "dsh: cannot watch %s: %s\n", addr->text, strerror(-rc));
        else
            fprintf(stderr, "dsh: listening on %s\n", addr->text); /* clients may connect now */
    }
    if (rc < 0) {
        dshh__stop_signals_unwatch(host->loop);
        if (stdio)
            client_free(stdio);
        return DSHH_EXIT_USAGE;
    }
    if (stdio)
        maybe_finish(stdio);
    if (!stdio || !stdio->eof || stdio->runs || stdio->releases)
        rc = dshh__loop_run(host->loop);
    dshh__stop_signals_unwatch(host->loop);
    if (rc < 0)
        fprintf(stderr, "dsh: the event loop failed: %s\n", strerror(-rc));
    if (rc < 0 || srv.stop_signal) {
        /* Runs still point at their clients: unload now so their on_done cannot outlive them.
         * Unload cancels what is left and waits until every range is quiescent. */
        dshh__host_unload(host);
    }
    bool dropped = stdio && dshh__events_dropped(&stdio->events);
    if (stdio && !dropped)
        dshh__out_queue_flush(&stdio->out); /* the last events, now that the loop has ended */
    if (!stdio)
        flush_sockets(&srv);
    while (srv.clients)
        client_free(srv.clients);
    if (rc < 0)
        return DSHH_EXIT_USAGE;
    return srv.stop_signal ? DSHH_EXIT_SIGNAL(srv.stop_signal) : dropped ? DSHH_EXIT_FAILURE : DSHH_EXIT_OK;
}

int dshh__cmd_serve(struct dshh_host *host, const struct dshh_profile *profile)
{
    return serve(host, profile, -1, NULL);
}

int dshh__cmd_serve_listen(struct dshh_host *host, const struct dshh_profile *profile, const char *address)
{
    struct dshh_listen_addr addr;
    char why[256];
    int fd = dshh__listen_parse(address, &addr, why, sizeof why);
    if (fd == 0 && !addr.unix_socket) {
        snprintf(why, sizeof why, "--serve --listen accepts only unix:PATH, not \"%s\"", address);
        fd = -EINVAL;
    }
    if (fd == 0)
        fd = dshh__listen_open(&addr, why, sizeof why);
    if (fd < 0) {
        fprintf(stderr, "dsh: %s\n", why);
        return DSHH_EXIT_USAGE;
    }
    int status = serve(host, profile, fd, &addr);
    dshh__listen_close(&addr, fd);
    return status;
}

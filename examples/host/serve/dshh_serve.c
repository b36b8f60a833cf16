/* `dsh headless --serve`: JSON lines on stdin/stdout for agent harnesses (examples/host/README.md,
 * host-abi/schemas/serve.json).
 *
 * Requests: run, cancel, reply, release, set-mode, describe. Events: hello, result, call, output,
 * abandoned, released, mode-set, error. Runs are concurrent; a bad line gives an error event and
 * the server keeps going; at EOF it waits for in-flight runs and releases, then returns (the
 * caller unloads and exits 0). */
#include "dshh_serve.h"

#include "dsh_list.h"
#include "dshh_demo_tools.h"
#include "dshh_lines.h"
#include "dshh_native_bindings.h"
#include "dshh_output_gate.h"
#include "dshh_request.h"
#include "dshh_result_print.h"
#include "dshh_serve_events.h"
#include "dshh_stop_signals.h"
#include "dshh_usage.h"

#include "dsh_json_strict.h"
#include "dsh_linux_services.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* Programs travel inside request lines; the provider's own limit (maxMessageBytes) is lower. */
#define MAX_LINE ((size_t)256 << 20)
#define NO_CLIENT "the client closed dsh's stdin: no reply can come"
/* Bytes of events the client left unread at which dsh drops it (README "Peers that stop
 * reading"). */
#define MAX_UNREAD ((size_t)64 << 20)
#define DROPPED "dsh dropped the client: it stopped reading dsh's output"


struct srun {
    struct srun *next;
    struct serve *srv;
    char *id;        /* JSON text of the request id */
    dsh_run_id run;
    bool demo;       /* the demo `tools` namespace is declared for this run */
    bool stream;     /* "stream": true: output events as the ledger accepts entries */
    bool retained;   /* names a stateOwner: an evaluation in a retained environment */
    struct dshh_demo_pending *pending;
    uint64_t *calls; /* calls forwarded to the client and not yet answered */
    size_t ncalls, capcalls;
};

struct srelease {
    struct srelease *next;
    struct serve *srv;
    char *id;
};

struct serve {
    struct dshh_host *host;
    struct srun *runs;
    struct srelease *releases;
    char **owners; /* stateOwners named by accepted runs and not released since */
    size_t nowners;
    struct dshh_lines lines;
    bool eof;
    int stop_signal; /* SIGTERM or SIGINT received: the runs are cancelled, dsh exits 128 + it */
    unsigned small_evaluations_untrimmed; /* see release_idle_heap() */
    struct dshh_output_gate gate; /* pauses streaming runs while the client's queue is high */
};

/* ---- lifetime ------------------------------------------------------------------------------------ */

static void maybe_finish(struct serve *srv)
{
    if (srv->eof && !srv->runs && !srv->releases)
        dshh__loop_quit(srv->host->loop);
}

static struct srun *find_run(struct serve *srv, const char *id)
{
    for (struct srun *r = srv->runs; r; r = r->next)
        if (!strcmp(r->id, id))
            return r;
    return NULL;
}

/* The stateOwners of this session: named by an accepted run, not released since. */
static bool owner_index(const struct serve *srv, const char *owner, size_t *ret_index)
{
    for (size_t i = 0; i < srv->nowners; i++)
        if (!strcmp(srv->owners[i], owner)) {
            *ret_index = i;
            return true;
        }
    return false;
}

static void remember_owner(struct serve *srv, const char *owner)
{
    size_t i;
    if (owner_index(srv, owner, &i))
        return;
    char **grown = realloc(srv->owners, (srv->nowners + 1) * sizeof(*grown));
    if (grown && (grown[srv->nowners] = strdup(owner)))
        srv->nowners++;
    if (grown)
        srv->owners = grown;
}

static void forget_owner(struct serve *srv, const char *owner)
{
    size_t i;
    if (owner_index(srv, owner, &i)) {
        free(srv->owners[i]);
        srv->owners[i] = srv->owners[--srv->nowners];
    }
}

static void on_call(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                    const char *name, const char *args_json, size_t args_len)
{
    struct srun *r = userdata;
    if (dshh__host_native_call(r->srv->host, run, call, global, name, args_json, args_len))
        return;
    if (r->demo && !strcmp(global, DSHH_DEMO_GLOBAL)) {
        dshh__demo_call(r->srv->host, run, call, name, args_json, args_len, &r->pending);
        return;
    }
    if (r->srv->eof) {
        r->srv->host->provider->reply(r->srv->host->instance, run, call, false, NO_CLIENT,
                                      strlen(NO_CLIENT));
        return;
    }
    if (r->ncalls == r->capcalls) {
        size_t cap = r->capcalls ? r->capcalls * 2 : 8;
        uint64_t *calls = realloc(r->calls, cap * sizeof(*calls));
        if (!calls) {
            r->srv->host->provider->reply(r->srv->host->instance, run, call, false,
                                          "dsh: out of memory", 18);
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
    dshh__emit_event(ev, "args", args_json, args_len);
    json_object_put(ev);
}

/* "stream": true: {"type":"output","run":ID,"entry":{...}} before the result. A client that reads
 * slower than the program writes pauses the run rather than letting its output pile up here. */
static void on_output(void *userdata, dsh_run_id run, const char *entry_json, size_t entry_len)
{
    struct srun *r = userdata;
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string("output"));
    json_object_object_add(ev, "run", dsh_json_parse_strict(r->id, strlen(r->id)));
    dshh__emit_event(ev, "entry", entry_json, entry_len);
    json_object_put(ev);
    dshh__output_gate_check(&r->srv->gate, run);
}

/* Idle: hand the heap pages that interleaved runs of different sizes freed back to the kernel,
 * so a long-lived host's RSS stays what one run needs (tests/soak). A small evaluation in a
 * retained environment allocates little and may come every fraction of a millisecond, where a
 * trim each time would be a measurable part of it: those trim every TRIM_EVERY_EVALUATIONS. */
#define TRIM_RESULT_BYTES ((size_t)64 << 10)
#define TRIM_EVERY_EVALUATIONS 64

static void release_idle_heap(struct serve *srv, bool small_evaluation)
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

/* owned: result_json was handed over (on_done_owned); it then waits in the stdout queue as is. */
static void finish_run(struct srun *r, const char *result_json, char *owned, size_t result_len)
{
    struct serve *srv = r->srv;
    DSH_LIST_REMOVE(&srv->runs, r);
    dshh__demo_cancel(srv->host, &r->pending);
    /* The client may still be working on these: no reply can reach the run any more. */
    for (size_t i = 0; i < r->ncalls; i++) {
        json_object *ab = json_object_new_object();
        json_object_object_add(ab, "type", json_object_new_string("abandoned"));
        json_object_object_add(ab, "run", dsh_json_parse_strict(r->id, strlen(r->id)));
        json_object_object_add(ab, "call", json_object_new_uint64(r->calls[i]));
        dshh__emit_event(ab, NULL, NULL, 0);
        json_object_put(ab);
    }
    json_object *ev = dshh__event("result", r->id);
    if (owned)
        dshh__emit_event_owned(ev, "result", owned, result_len, release_provider_text, (void *)srv->host->provider);
    else
        dshh__emit_event(ev, "result", result_json, result_len);
    json_object_put(ev);
    bool small_evaluation = r->retained && result_len < TRIM_RESULT_BYTES;
    free(r->calls);
    free(r->id);
    free(r);
    if (!srv->runs)
        release_idle_heap(srv, small_evaluation);
    maybe_finish(srv);
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
    struct serve *srv = rel->srv;
    DSH_LIST_REMOVE(&srv->releases, rel);
    if (status < 0) {
        dshh__emit_error(rel->id, "release of %s failed (%s): %s", owner,
                   dsh_error_name(status) ? dsh_error_name(status) : "error", dsh_strerror(status));
    } else {
        forget_owner(srv, owner);
        json_object *ev = dshh__event("released", rel->id);
        dshh__emit_event(ev, NULL, NULL, 0);
        json_object_put(ev);
    }
    free(rel->id);
    free(rel);
    maybe_finish(srv);
}

/* ---- requests ------------------------------------------------------------------------------------ */

static bool check_keys(json_object *req, const char *const *allowed, const char *id)
{
    json_object_object_foreach(req, key, val)
    {
        (void)val;
        bool ok = false;
        for (size_t i = 0; allowed[i]; i++)
            ok = ok || !strcmp(allowed[i], key);
        if (!ok) {
            dshh__emit_error(id, "unknown field \"%s\" in a %s request", key,
                       json_object_get_string(json_object_object_get(req, "type")));
            return false;
        }
    }
    return true;
}

/* Field of type t (json_type_null = absent is fine); false after an error event. */
static bool field(json_object *req, const char *key, json_type t, bool required, json_object **ret,
                  const char *id)
{
    *ret = NULL;
    json_object *v;
    if (!json_object_object_get_ex(req, key, &v)) {
        if (required)
            dshh__emit_error(id, "missing field \"%s\"", key);
        return !required;
    }
    bool ok = json_object_is_type(v, t) ||
              (t == json_type_double && json_object_is_type(v, json_type_int));
    if (!ok) {
        dshh__emit_error(id, "field \"%s\" must be a%s %s", key, t == json_type_int ? "n" : "",
                   t == json_type_double ? "number" : json_type_to_name(t));
        return false;
    }
    *ret = v;
    return true;
}

static bool check_bindings(json_object *bindings, const char *id)
{
    for (size_t i = 0; i < json_object_array_length(bindings); i++) {
        json_object *ns = json_object_array_get_idx(bindings, i), *g, *fns;
        if (!json_object_is_type(ns, json_type_object) ||
            !json_object_object_get_ex(ns, "global", &g) || !json_object_is_type(g, json_type_string) ||
            !json_object_object_get_ex(ns, "functions", &fns) ||
            !json_object_is_type(fns, json_type_array)) {
            dshh__emit_error(id, "bindings[%zu] must be {\"global\": string, \"functions\": [string]}", i);
            return false;
        }
        for (size_t j = 0; j < json_object_array_length(fns); j++)
            if (!json_object_is_type(json_object_array_get_idx(fns, j), json_type_string)) {
                dshh__emit_error(id, "bindings[%zu].functions[%zu] must be a string", i, j);
                return false;
            }
    }
    return true;
}

static void req_run(struct serve *srv, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "program", "stateOwner", "timeoutMs", "cwd",
                                          "discardCompletion", "sessionId", "mode", "bindings", "images", "stream", NULL};
    json_object *program, *owner, *cwd, *discard, *session, *mode, *bindings, *timeout, *images, *stream;
    if (!check_keys(req, allowed, id) ||
        !field(req, "program", json_type_string, true, &program, id) ||
        !field(req, "stateOwner", json_type_string, false, &owner, id) ||
        !field(req, "cwd", json_type_string, false, &cwd, id) ||
        !field(req, "discardCompletion", json_type_boolean, false, &discard, id) ||
        !field(req, "sessionId", json_type_string, false, &session, id) ||
        !field(req, "mode", json_type_string, false, &mode, id) ||
        !field(req, "bindings", json_type_array, false, &bindings, id) ||
        !field(req, "images", json_type_array, false, &images, id) ||
        !field(req, "stream", json_type_boolean, false, &stream, id) ||
        (bindings && !check_bindings(bindings, id)))
        return;
    /* timeoutMs: a number, or null for no deadline. */
    bool has_timeout = json_object_object_get_ex(req, "timeoutMs", &timeout);
    if (has_timeout && timeout && !json_object_is_type(timeout, json_type_int) &&
        !json_object_is_type(timeout, json_type_double)) {
        dshh__emit_error(id, "field \"timeoutMs\" must be a number or null");
        return;
    }
    if (find_run(srv, id)) {
        dshh__emit_error(id, "a run with this id is in flight");
        return;
    }
    json_object *r = json_object_new_object();
    json_object_object_add(r, "program", json_object_get(program));
    if (owner)
        json_object_object_add(r, "stateOwner", json_object_get(owner));
    if (cwd)
        json_object_object_add(r, "cwd", json_object_get(cwd));
    if (discard)
        json_object_object_add(r, "discardCompletion", json_object_get(discard));
    if (session)
        json_object_object_add(r, "sessionId", json_object_get(session));
    if (mode) /* an approved one-time escalation for this run only */
        json_object_object_add(r, "mode", json_object_get(mode));
    if (has_timeout)
        json_object_object_add(r, "timeoutMs", json_object_get(timeout));
    if (images) /* [{attachmentId, path}]: the provider validates and reads them */
        json_object_object_add(r, "images", json_object_get(images));
    json_object *b = bindings ? json_object_get(bindings) : json_object_new_array();
    struct srun *run = calloc(1, sizeof(*run));
    if (!run || !(run->id = strdup(id))) {
        free(run);
        json_object_put(b);
        json_object_put(r);
        dshh__emit_error(id, "out of memory");
        return;
    }
    run->srv = srv;
    run->stream = stream && json_object_get_boolean(stream);
    run->retained = owner != NULL;
    /* The demo namespace joins the client's unless the client declared `tools` itself. */
    run->demo = srv->host->demo_tools && dshh__add_demo_bindings(b);
    /* The host's native namespaces join every run; a client namespace of the same name makes the
     * provider reject the run (declared twice). */
    dshh__native_declare(srv->host->native, b);
    json_object_object_add(r, "bindings", b);
    const char *text = dshh__jstr(r);
    struct dsh_run_callbacks cb = {.struct_size = sizeof(cb),
                                   .on_call = on_call,
                                   .on_done = on_done,
                                   .userdata = run,
                                   .on_output = run->stream ? on_output : NULL,
                                   .on_done_owned = on_done_owned};
    struct dsh_error err;
    int rc = dshh__start_run(srv->host, text, strlen(text), &cb, &run->run, &err);
    json_object_put(r);
    if (rc < 0) {
        dshh__emit_error(id, "run rejected (%s): %s", dsh_error_name(rc) ? dsh_error_name(rc) : "error",
                   *err.message ? err.message : dsh_strerror(rc));
        free(run->id);
        free(run);
        return;
    }
    if (owner)
        remember_owner(srv, json_object_get_string(owner));
    run->next = srv->runs;
    srv->runs = run;
}

static void req_cancel(struct serve *srv, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "reason", NULL};
    json_object *reason;
    if (!check_keys(req, allowed, id) || !field(req, "reason", json_type_string, false, &reason, id))
        return;
    struct srun *r = find_run(srv, id);
    int rc = r ? srv->host->provider->cancel(srv->host->instance, r->run,
                                             reason ? json_object_get_string(reason) : NULL)
               : DSH_E_NOT_FOUND;
    if (rc < 0)
        dshh__emit_error(id, "cancel: %s", r ? dsh_strerror(rc) : "no run with this id is in flight");
}

static void req_reply(struct serve *srv, json_object *req, struct dsh_json_slice value_text)
{
    static const char *const allowed[] = {"type", "run", "call", "ok", "value", "message", NULL};
    json_object *run_id, *call, *ok, *message;
    if (!check_keys(req, allowed, NULL) || !field(req, "call", json_type_int, true, &call, NULL) ||
        !field(req, "ok", json_type_boolean, true, &ok, NULL) ||
        !field(req, "message", json_type_string, false, &message, NULL))
        return;
    if (!json_object_object_get_ex(req, "run", &run_id) ||
        !(json_object_is_type(run_id, json_type_string) || json_object_is_type(run_id, json_type_int))) {
        dshh__emit_error(NULL, "a reply needs \"run\" (the run request's id)");
        return;
    }
    const char *rid = dshh__jstr(run_id);
    struct srun *r = find_run(srv, rid);
    int64_t c = json_object_get_int64(call);
    size_t i = 0;
    while (r && i < r->ncalls && (int64_t)r->calls[i] != c)
        i++;
    if (!r || i == r->ncalls) {
        dshh__emit_error(NULL, "reply: run %s has no open call %lld", rid, (long long)c);
        return;
    }
    int rc;
    if (json_object_get_boolean(ok)) {
        /* An absent value answers undefined; the value's text passes on as the client wrote it. */
        rc = srv->host->provider->reply(srv->host->instance, r->run, (uint64_t)c, true, value_text.text,
                                        value_text.len);
    } else {
        const char *m = message ? json_object_get_string(message) : "the binding failed";
        rc = srv->host->provider->reply(srv->host->instance, r->run, (uint64_t)c, false, m,
                                        strlen(m));
    }
    if (rc < 0 && rc != DSH_E_NOT_FOUND) {
        /* Nothing reached the program: the client may answer again. */
        dshh__emit_error(NULL, "reply to run %s call %lld rejected (%s): %s; the call is still open", rid,
                         (long long)c, dsh_error_name(rc) ? dsh_error_name(rc) : "error", dsh_strerror(rc));
        return;
    }
    /* Delivered, or the run is stopping and no longer takes answers: closed either way. */
    r->calls[i] = r->calls[--r->ncalls];
}

static void req_release(struct serve *srv, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "stateOwner", NULL};
    json_object *owner;
    if (!check_keys(req, allowed, id) || !field(req, "stateOwner", json_type_string, true, &owner, id))
        return;
    size_t known;
    if (!owner_index(srv, json_object_get_string(owner), &known)) {
        dshh__emit_error(id, "release: no run of this session used stateOwner \"%s\" since its last release",
                         json_object_get_string(owner));
        return;
    }
    struct srelease *rel = calloc(1, sizeof(*rel));
    if (!rel || !(rel->id = strdup(id))) {
        free(rel);
        dshh__emit_error(id, "out of memory");
        return;
    }
    rel->srv = srv;
    /* Linked first: on_released may only come from dispatch(), but never before this. */
    rel->next = srv->releases;
    srv->releases = rel;
    struct dsh_error err = {0};
    int rc = srv->host->provider->release(srv->host->instance, json_object_get_string(owner),
                                          on_released, rel, &err);
    if (rc < 0) {
        srv->releases = rel->next;
        dshh__emit_error(id, "release rejected (%s): %s", dsh_error_name(rc) ? dsh_error_name(rc) : "error",
                   *err.message ? err.message : dsh_strerror(rc));
        free(rel->id);
        free(rel);
    }
}

/* hello (at start) and the answer to a describe request: versions and the provider's describe(). */
static void emit_hello(struct serve *srv, const char *id)
{
    struct dshh_host *host = srv->host;
    char *json = NULL;
    size_t len = 0;
    struct dsh_error err = {0};
    int rc = host->provider->describe(host->instance, &json, &len, &err);
    if (rc < 0) {
        dshh__emit_error(id, "describe failed (%s): %s", dsh_error_name(rc) ? dsh_error_name(rc) : "error",
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
    dshh__emit_event(ev, "describe", json, len);
    json_object_put(ev);
    host->provider->free_text(json);
}

static void req_describe(struct serve *srv, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", NULL};
    if (check_keys(req, allowed, id))
        emit_hello(srv, id);
}

static void req_set_mode(struct serve *srv, json_object *req, const char *id)
{
    static const char *const allowed[] = {"type", "id", "session", "mode", NULL};
    json_object *session, *mode;
    if (!check_keys(req, allowed, id) || !field(req, "session", json_type_string, false, &session, id) ||
        !field(req, "mode", json_type_string, true, &mode, id))
        return;
    struct dsh_error err = {0};
    int rc = dsh_linux_policy_set_mode(srv->host->services_impl,
                                       session ? json_object_get_string(session) : NULL,
                                       json_object_get_string(mode), &err);
    if (rc < 0) {
        dshh__emit_error(id, "set-mode: %s", *err.message ? err.message : dsh_strerror(rc));
        return;
    }
    json_object *ev = dshh__event("mode-set", id);
    json_object_object_add(ev, "session", session ? json_object_get(session) : NULL);
    json_object_object_add(ev, "mode", json_object_get(mode));
    dshh__emit_event(ev, NULL, NULL, 0);
    json_object_put(ev);
}

/* Names the reply a line that is not strict JSON was meant to be, so the client learns that its
 * call is still open and may answer again. json-c's lenient parser only reads the line's "run"
 * and "call" here; nothing it returns is acted on. */
static void invalid_line(const char *line, size_t len)
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
        dshh__emit_error(NULL, "%s; the reply was not delivered: run %s call %lld is still open", what,
                         dshh__jstr(run), (long long)json_object_get_int64(call));
    else
        dshh__emit_error(NULL, "%s", what);
    json_object_put(guess);
}

static void handle_line(struct serve *srv, const char *line, size_t len)
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
        invalid_line(line, len);
        return;
    }
    if (!req) {
        dshh__emit_error(NULL, line[s] == '{' ? "a request is larger than its budget of %zu JSON values"
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
    bool needs_id = t && strcmp(t, "reply") != 0 && strcmp(t, "set-mode") != 0 &&
                    strcmp(t, "describe") != 0;
    bool known = t && (!strcmp(t, "run") || !strcmp(t, "cancel") || !strcmp(t, "reply") ||
                       !strcmp(t, "release") || !strcmp(t, "set-mode") || !strcmp(t, "describe"));
    if (!t)
        dshh__emit_error(id_copy, "a request needs a string \"type\"");
    else if (!known)
        dshh__emit_error(id_copy, "unknown request type \"%s\"", t);
    else if (idv && !id_copy)
        dshh__emit_error(NULL, "\"id\" must be a string or an integer");
    else if (needs_id && !id_copy)
        dshh__emit_error(NULL, "a %s request needs an \"id\" (a string or an integer)", t);
    else if (!strcmp(t, "run"))
        req_run(srv, req, id_copy);
    else if (!strcmp(t, "cancel"))
        req_cancel(srv, req, id_copy);
    else if (!strcmp(t, "reply"))
        req_reply(srv, req, value);
    else if (!strcmp(t, "release"))
        req_release(srv, req, id_copy);
    else if (!strcmp(t, "describe"))
        req_describe(srv, req, id_copy);
    else
        req_set_mode(srv, req, id_copy);
    free(id_copy);
    json_object_put(req);
}

/* ---- SIGTERM / SIGINT ------------------------------------------------------------------------------ */

/* Cancels every run and leaves the loop; dshh__cmd_serve then unloads, which waits until every
 * range is quiescent (retained ones included) and removes their temp directories. */
static void on_stop_signal(void *arg, int sig)
{
    struct serve *srv = arg;
    if (srv->stop_signal)
        return;
    srv->stop_signal = sig;
    if (!srv->eof) {
        srv->eof = true;
        dshh__loop_remove_fd(srv->host->loop, STDIN_FILENO);
    }
    char why[64];
    snprintf(why, sizeof why, "dsh received %s", sig == SIGINT ? "SIGINT" : "SIGTERM");
    for (struct srun *r = srv->runs; r; r = r->next)
        srv->host->provider->cancel(srv->host->instance, r->run, why);
    dshh__loop_quit(srv->host->loop);
}

/* The client left MAX_UNREAD bytes of events unread: it is dropped. Its runs are cancelled and
 * dsh exits once they ended, as at a stop signal; nothing more is written. */
static void on_client_dropped(void *arg)
{
    struct serve *srv = arg;
    if (!srv->eof) {
        srv->eof = true;
        dshh__loop_remove_fd(srv->host->loop, STDIN_FILENO);
    }
    for (struct srun *r = srv->runs; r; r = r->next)
        srv->host->provider->cancel(srv->host->instance, r->run, DROPPED);
    maybe_finish(srv);
}

/* ---- stdin --------------------------------------------------------------------------------------- */

static void on_line(void *arg, const char *line, size_t len)
{
    if (line)
        handle_line(arg, line, len);
    else
        dshh__emit_error(NULL, "request line longer than %zu bytes (or out of memory for it)", MAX_LINE);
}

static void on_stdin(void *arg, uint32_t events)
{
    (void)events;
    struct serve *srv = arg;
    if (dshh__lines_read(&srv->lines, STDIN_FILENO, on_line, srv))
        return;
    srv->eof = true;
    dshh__loop_remove_fd(srv->host->loop, STDIN_FILENO);
    /* No reply can come any more: settle the client's open calls so runs end now, not at their
     * deadline. */
    for (struct srun *r = srv->runs; r; r = r->next) {
        for (size_t i = 0; i < r->ncalls; i++)
            srv->host->provider->reply(srv->host->instance, r->run, r->calls[i], false, NO_CLIENT,
                                       strlen(NO_CLIENT));
        r->ncalls = 0;
    }
    maybe_finish(srv);
}

int dshh__cmd_serve(struct dshh_host *host)
{
    /* A client that stops reading must not kill dsh before it cleans up its runs. */
    signal(SIGPIPE, SIG_IGN);
    /* Results can be as large as maxOutputBytes: a 1 MiB pipe (where stdout is one) lets the
     * client take them in fewer wake-ups. Nothing changes where stdout is no pipe. */
    (void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
    struct serve srv = {.host = host, .lines = {.max = MAX_LINE}};
    struct dshh_out_queue out;
    int rc = dshh__out_queue_open(&out, host->loop, STDOUT_FILENO, MAX_UNREAD);
    if (rc < 0) {
        fprintf(stderr, "dsh: cannot write to stdout: %s\n", strerror(-rc));
        return DSHH_EXIT_USAGE;
    }
    dshh__events_queue(&out, on_client_dropped, &srv);
    dshh__output_gate_init(&srv.gate, host, &out);
    rc = dshh__stop_signals_watch(host->loop, on_stop_signal, &srv);
    if (rc < 0) {
        fprintf(stderr, "dsh: cannot watch SIGTERM/SIGINT: %s\n", strerror(-rc));
        dshh__events_queue(NULL, NULL, NULL);
        dshh__out_queue_close(&out);
        return DSHH_EXIT_USAGE;
    }
    emit_hello(&srv, NULL);
    rc = dshh__loop_watch_input(host->loop, STDIN_FILENO, on_stdin, &srv, &srv.eof);
    if (rc < 0) {
        fprintf(stderr, "dsh: cannot watch stdin: %s\n", strerror(-rc));
        dshh__stop_signals_unwatch(host->loop);
        dshh__events_queue(NULL, NULL, NULL);
        dshh__out_queue_close(&out);
        return DSHH_EXIT_USAGE;
    }
    maybe_finish(&srv);
    if (!srv.eof || srv.runs || srv.releases)
        rc = dshh__loop_run(host->loop);
    dshh__stop_signals_unwatch(host->loop);
    if (rc < 0)
        fprintf(stderr, "dsh: the event loop failed: %s\n", strerror(-rc));
    if (rc < 0 || srv.stop_signal) {
        /* Runs still point at srv: unload now so their on_done cannot outlive it. Unload
         * cancels what is left and waits until every range is quiescent. */
        dshh__host_unload(host);
    }
    bool dropped = dshh__events_dropped();
    if (!dropped)
        dshh__out_queue_flush(&out); /* the last events, now that the loop has ended */
    dshh__output_gate_close(&srv.gate);
    dshh__events_queue(NULL, NULL, NULL);
    dshh__out_queue_close(&out);
    dshh__lines_free(&srv.lines);
    for (size_t i = 0; i < srv.nowners; i++)
        free(srv.owners[i]);
    free(srv.owners);
    if (rc < 0)
        return DSHH_EXIT_USAGE;
    return srv.stop_signal ? DSHH_EXIT_SIGNAL(srv.stop_signal) : dropped ? DSHH_EXIT_FAILURE : DSHH_EXIT_OK;
}

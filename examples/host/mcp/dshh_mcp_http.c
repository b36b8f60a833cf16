/* `dsh mcp --listen`: MCP sessions over the Streamable HTTP transport, served by libmicrohttpd
 * in dsh's own event loop (its epoll fd and timeout are watched there: no thread).
 *
 * One endpoint, /mcp: POST carries client messages (a JSON-RPC message, or a batch of the
 * 2025-03-26 revision); requests are answered as JSON when every answer is ready at once, else
 * on an SSE stream that carries the progress of its calls and then their results. GET opens the
 * session's own stream, DELETE ends the session. Every session is its own sandbox-policy session
 * with its own stateOwner; /healthz and /readyz answer probes. examples/host/README.md,
 * "dsh mcp --listen". */
#include "dshh_mcp_http.h"

#include "dshh_listen.h"
#include "dshh_mcp_downstream.h"
#include "dshh_mcp_session.h"
#include "dshh_request.h"
#include "dshh_serve_events.h"
#include "dshh_stop_signals.h"
#include "dshh_text_file.h"
#include "dshh_usage.h"

#include "dshh_profile.h"

#include "dsh_config.h"
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_text_buffer.h"

#include <errno.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define ENDPOINT "/mcp"
/* Bytes of one stream's messages the client left unread at which dsh drops that stream. */
#define MAX_UNREAD ((size_t)64 << 20)
/* Request headers (libmicrohttpd's per-connection buffer: larger headers get 431). */
#define MAX_HEADER_BYTES (64 << 10)
/* POSTs of one session waiting for answers at once. */
#define MAX_SESSION_STREAMS 32
#define CONNECTION_TIMEOUT_S 60
/* An SSE comment this often on every waiting stream: proxies keep it open, dsh notices a
 * client that left. */
#define KEEPALIVE_MS 15000
/* A readiness probe older than this is run again when /readyz is asked. */
#define PROBE_MAX_AGE_MS 10000
/* After the drain: how long answers may take to reach their clients. */
#define FLUSH_MS 5000
#define MIN_TOKEN_BYTES 16
/* A retained environment of a listening dsh is released after this long without a run (the
 * runtime row's idleReleaseMs, unless the profile sets it). */
#define LISTEN_IDLE_RELEASE_MS "600000"

/* What dshh__mcp_listen_profile chose, said at startup in a retaining profile. */
static char retained_note[256];

struct http_mcp;
struct hsession;

/* A request id (or progress token) of a POST whose answer has not come yet (JSON text). */
struct pending {
    char *id, *token;
};

/* One response on its way: a POST's answers (JSON or SSE) or the session's GET stream. */
struct stream {
    struct stream *next;
    struct http_mcp *srv;
    struct hsession *hs; /* NULL once the session is gone */
    struct MHD_Connection *conn;
    struct pending *ids;
    size_t nids;
    json_object *collected; /* answers while the POST is being handled (transfer full) */
    struct dsh_text_buffer out; /* SSE bytes; MHD has taken those before off */
    size_t off;
    bool sse, get, suspended, done, dropped;
};

struct hsession {
    struct hsession *next;
    struct http_mcp *srv;
    char id[33];
    struct dshh_mcp_session *session;
    int64_t idle_timer;
    bool ended, finished;
};

struct http_mcp {
    struct dshh_host *host;
    const struct dshh_mcp_listen_options *opts;
    struct dshh_mcp_shared shared;
    struct dshh_listen_addr addr;
    int listen_fd;
    struct MHD_Daemon *daemon;
    int epoll_fd;
    int64_t run_timer, keepalive_timer, drain_timer, flush_timer;
    char *token;
    size_t token_len;
    struct hsession *sessions;
    size_t nsessions;
    struct stream *streams;
    size_t nstreams;
    unsigned connections;
    uint64_t session_serial;
    /* Readiness: the last probe run's outcome and when it ended. */
    bool ready, probing;
    struct timespec probed;
    char not_ready[256];
    int stop_signal;
    bool draining;
    int status;
};

/* Per-connection request state (MHD's con_cls). */
struct request {
    struct dsh_text_buffer body;
    bool too_large;
};

static void kick(struct http_mcp *srv);
static void check_drained(struct http_mcp *srv);

static int64_t ms_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

/* ---- streams ------------------------------------------------------------------------------------- */

static void stream_wake(struct stream *st)
{
    if (st->suspended && st->conn) {
        st->suspended = false;
        MHD_resume_connection(st->conn);
        kick(st->srv);
    }
}

/* The stream ends once MHD took what it holds. */
static void stream_finish(struct stream *st)
{
    st->done = true;
    stream_wake(st);
}

static bool stream_append(struct stream *st, const char *a, size_t alen, const char *b, size_t blen,
                          const char *c, size_t clen)
{
    /* A client that stopped reading this stream (or no memory for it): the stream is dropped. */
    bool kept = !st->dropped && st->out.len - st->off <= MAX_UNREAD &&
                dsh_text_buffer_write(&st->out, (unsigned char *)a, alen) &&
                dsh_text_buffer_write(&st->out, (unsigned char *)b, blen) &&
                dsh_text_buffer_write(&st->out, (unsigned char *)c, clen);
    st->dropped |= !kept;
    stream_wake(st);
    return kept;
}

static void stream_event(struct stream *st, json_object *msg)
{
    const char *text = dshh__jstr(msg);
    static const char head[] = "event: message\ndata: ";
    stream_append(st, head, sizeof head - 1, text, strlen(text), "\n\n", 2);
}

static void pending_free(struct stream *st)
{
    for (size_t i = 0; i < st->nids; i++) {
        free(st->ids[i].id);
        free(st->ids[i].token);
    }
    free(st->ids);
    st->ids = NULL;
    st->nids = 0;
}

static void stream_unlink(struct stream *st)
{
    struct http_mcp *srv = st->srv;
    for (struct stream **link = &srv->streams; *link; link = &(*link)->next)
        if (*link == st) {
            *link = st->next;
            srv->nstreams--;
            break;
        }
}

static void stream_free(struct stream *st)
{
    struct http_mcp *srv = st->srv;
    stream_unlink(st);
    pending_free(st);
    json_object_put(st->collected);
    free(st->out.data);
    free(st);
    check_drained(srv);
}

/* MHD's content reader of an SSE stream: what is buffered, else a suspended connection until
 * more comes (stream_wake resumes it). */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct stream *st = cls;
    if (st->dropped)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (st->off < st->out.len) {
        size_t n = st->out.len - st->off < max ? st->out.len - st->off : max;
        memcpy(buf, st->out.data + st->off, n);
        st->off += n;
        if (st->off == st->out.len)
            st->off = st->out.len = 0;
        return (ssize_t)n;
    }
    if (st->done)
        return MHD_CONTENT_READER_END_OF_STREAM;
    st->suspended = true;
    MHD_suspend_connection(st->conn);
    return 0;
}

static void stream_closed(void *cls)
{
    struct stream *st = cls;
    st->conn = NULL;
    stream_free(st);
}

/* The stream of hs waiting for the answer with this id text (or progress token text). */
static struct stream *route(struct http_mcp *srv, const struct hsession *hs, const char *id,
                            const char *token, size_t *index)
{
    for (struct stream *st = srv->streams; st; st = st->next)
        if (st->hs == hs)
            for (size_t i = 0; i < st->nids; i++)
                if ((id && !strcmp(st->ids[i].id, id)) ||
                    (token && st->ids[i].token && !strcmp(st->ids[i].token, token))) {
                    *index = i;
                    return st;
                }
    return NULL;
}

/* The stream's request i has its answer (or never gets one): the stream ends after its last. */
static void answered(struct stream *st, size_t i)
{
    free(st->ids[i].id);
    free(st->ids[i].token);
    st->ids[i] = st->ids[--st->nids];
    if (st->nids == 0 && st->sse)
        stream_finish(st);
}

/* ---- sessions ------------------------------------------------------------------------------------- */

static void on_send(void *arg, json_object *msg, dsh_run_id progress_of)
{
    (void)progress_of;
    struct hsession *hs = arg;
    struct http_mcp *srv = hs->srv;
    json_object *id = dsh_json_member(msg, "id");
    bool answer = dsh_json_has(msg, "id") && (dsh_json_has(msg, "result") || dsh_json_has(msg, "error"));
    const char *method = dsh_json_get_text(msg, "method");
    size_t i = 0;
    struct stream *st = NULL;
    if (answer && id)
        st = route(srv, hs, dshh__jstr(id), NULL, &i);
    else if (method && !strcmp(method, "notifications/progress"))
        st = route(srv, hs, NULL,
                   dshh__jstr(dsh_json_member(dsh_json_get_object(msg, "params"), "progressToken")),
                   &i);
    if (!st) /* its POST is gone (the client left): nobody can take it */
        return;
    if (!st->sse)
        json_object_array_add(st->collected, json_object_get(msg));
    else
        stream_event(st, msg);
    if (!answer)
        return;
    answered(st, i);
}

static void reap_session(void *arg)
{
    struct hsession *hs = arg;
    struct http_mcp *srv = hs->srv;
    for (struct hsession **link = &srv->sessions; *link; link = &(*link)->next)
        if (*link == hs) {
            *link = hs->next;
            srv->nsessions--;
            break;
        }
    dshh__mcp_session_free(hs->session);
    free(hs);
    check_drained(srv);
}

static void on_finished(void *arg)
{
    struct hsession *hs = arg;
    hs->finished = true;
    /* Not from inside the session's own call: it returns through its frames first. */
    if (dshh__loop_add_timer(hs->srv->host->loop, 0, reap_session, hs) < 0)
        fprintf(stderr, "dsh: cannot schedule the end of session %.8s\n", hs->id);
}

/* One line per run; the session shows as the first 8 of its id's 32 digits (the id itself lets
 * whoever holds it act in the session: it stays out of logs). */
static void on_run_ended(void *arg, const struct dshh_mcp_run_log *log)
{
    struct hsession *hs = arg;
    struct http_mcp *srv = hs->srv;
    if (srv->opts->log_json) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "event", json_object_new_string("run"));
        json_object_object_add(o, "session", json_object_new_string_len(hs->id, 8));
        json_object_object_add(o, "durationMs", json_object_new_int64(log->duration_ms));
        json_object_object_add(o, "outcome", json_object_new_string(log->outcome));
        json_object_object_add(o, "denied", json_object_new_boolean(log->denied));
        json_object_object_add(o, "background", json_object_new_boolean(log->background));
        fprintf(stderr, "%s\n", dshh__jstr(o));
        json_object_put(o);
    } else {
        fprintf(stderr, "dsh: run session=%.8s duration_ms=%lld outcome=%s denied=%s background=%s\n",
                hs->id, (long long)log->duration_ms, log->outcome, log->denied ? "true" : "false",
                log->background ? "true" : "false");
    }
    if (srv->draining) /* its session may be idle once the run is gone: checked from the loop */
        kick(srv);
}

static const struct dshh_mcp_sink sink = {
    .send = on_send, .finished = on_finished, .run_ended = on_run_ended};

/* Ends hs: no request reaches it any more (404), its streams end, its runs stop, its owner is
 * released; it is freed once that is done. */
static void end_session(struct hsession *hs, const char *why)
{
    if (hs->ended)
        return;
    hs->ended = true;
    if (hs->idle_timer > 0)
        dshh__loop_cancel_timer(hs->srv->host->loop, hs->idle_timer);
    hs->idle_timer = 0;
    for (struct stream *st = hs->srv->streams; st; st = st->next)
        if (st->hs == hs) {
            st->hs = NULL;
            pending_free(st);
            stream_finish(st);
        }
    dshh__mcp_session_end(hs->session, why);
}

static void on_idle_due(void *arg);

static void touch(struct hsession *hs)
{
    struct dshh_loop *loop = hs->srv->host->loop;
    if (hs->idle_timer > 0)
        dshh__loop_cancel_timer(loop, hs->idle_timer);
    hs->idle_timer = dshh__loop_add_timer(loop, (uint32_t)hs->srv->opts->session_idle_ms,
                                          on_idle_due, hs);
}

static bool has_waiting_stream(const struct hsession *hs)
{
    for (struct stream *st = hs->srv->streams; st; st = st->next)
        if (st->hs == hs && !st->get && st->nids)
            return true;
    return false;
}

static void on_idle_due(void *arg)
{
    struct hsession *hs = arg;
    hs->idle_timer = 0;
    if (dshh__mcp_session_busy(hs->session) || has_waiting_stream(hs))
        touch(hs); /* a run is going: not idle */
    else {
        fprintf(stderr, "dsh: session %.8s expired: no request or run for %lld ms\n", hs->id,
                (long long)hs->srv->opts->session_idle_ms);
        end_session(hs, "the MCP session expired");
    }
}

static struct hsession *session_new(struct http_mcp *srv)
{
    struct hsession *hs = calloc(1, sizeof(*hs));
    unsigned char raw[16];
    char owner[96];
    if (!hs || getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        free(hs);
        return NULL;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(hs->id + 2 * i, 3, "%02x", raw[i]);
    hs->srv = srv;
    /* The owner names the session by its serial, not its id (the id is the client's secret). */
    snprintf(owner, sizeof owner, "mcp-%ld-%llu", (long)getpid(),
             (unsigned long long)++srv->session_serial);
    hs->session = dshh__mcp_session_new(&srv->shared, owner, owner, &sink, hs);
    if (!hs->session) {
        free(hs);
        return NULL;
    }
    hs->next = srv->sessions;
    srv->sessions = hs;
    srv->nsessions++;
    touch(hs);
    return hs;
}

/* Compares without an early exit: how long a guess took tells nothing of the secret. */
static bool same_secret(const char *guess, size_t glen, const char *secret, size_t slen)
{
    unsigned char diff = glen != slen;
    for (size_t i = 0; i < slen; i++)
        diff |= (unsigned char)(secret[i] ^ (glen ? guess[i % glen] : 0));
    return diff == 0;
}

static struct hsession *find_session(struct http_mcp *srv, const char *id)
{
    struct hsession *found = NULL;
    for (struct hsession *hs = srv->sessions; hs; hs = hs->next)
        if (!hs->ended && same_secret(id, strlen(id), hs->id, strlen(hs->id)))
            found = hs;
    return found;
}

/* ---- HTTP answers ------------------------------------------------------------------------------ */

static enum MHD_Result queue(struct MHD_Connection *conn, unsigned status, const char *type,
                             const char *body, const char *session_id)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    if (session_id)
        MHD_add_response_header(r, "Mcp-Session-Id", session_id);
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"dsh\"");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "GET, POST, DELETE");
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* An HTTP error with a JSON-RPC error body (id null), as the MCP SDKs send them. */
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, int code, const char *fmt,
                              ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status, int code, const char *fmt,
                              ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    dsh_utf8_vformat(message, sizeof message, fmt, ap);
    va_end(ap);
    json_object *o = json_object_new_object(), *err = json_object_new_object();
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "id", NULL);
    json_object_object_add(err, "code", json_object_new_int(code));
    json_object_object_add(err, "message", json_object_new_string(message));
    json_object_object_add(o, "error", err);
    enum MHD_Result rc = queue(conn, status, "application/json", dshh__jstr(o), NULL);
    json_object_put(o);
    return rc;
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* A client's header value as a message may quote it: at most max bytes, cut between UTF-8
 * sequences; bytes that are no UTF-8 are not repeated (an answer's JSON text must be UTF-8). */
static const char *quotable(const char *value, size_t max, char *buf, size_t size)
{
    size_t len = strlen(value);
    if (!dshh__is_utf8(value, len))
        return "(not UTF-8)";
    len = dsh_utf8_cut(value, len, max < size - 1 ? max : size - 1);
    memcpy(buf, value, len);
    buf[len] = '\0';
    return buf;
}

/* ---- health ------------------------------------------------------------------------------------ */

static void on_probe_done(void *userdata, dsh_run_id run, const char *result_json, size_t result_len)
{
    (void)run;
    struct http_mcp *srv = userdata;
    json_object *result = dsh_json_parse_strict(result_json, result_len);
    bool ok = false;
    dsh_json_get_bool(result, "ok", &ok);
    const char *message = dsh_json_get_text(dsh_json_get_object(result, "error"), "message");
    snprintf(srv->not_ready, sizeof srv->not_ready, "%s",
             ok ? "" : message ? message : "the probe run failed");
    json_object_put(result);
    srv->ready = ok;
    srv->probing = false;
    clock_gettime(CLOCK_MONOTONIC, &srv->probed);
}

static void on_probe_call(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                          const char *name, const char *args, size_t args_len)
{
    (void)global, (void)name, (void)args, (void)args_len;
    struct http_mcp *srv = userdata;
    static const char no[] = "the readiness probe calls nothing";
    srv->host->provider->reply(srv->host->instance, run, call, false, no, sizeof no - 1);
}

/* Readiness is a confined process that started and ran: the probe runs `1` (a valid program in
 * every format) in its own policy session, without an owner. */
static void probe(struct http_mcp *srv)
{
    if (srv->probing || srv->draining || srv->shared.retains)
        return;
    static const char request[] =
        "{\"program\":\"1\",\"timeoutMs\":30000,\"sessionId\":\"mcp-readiness-probe\"}";
    struct dsh_run_callbacks cb = {.struct_size = sizeof(cb),
                                   .on_call = on_probe_call,
                                   .on_done = on_probe_done,
                                   .userdata = srv};
    struct dsh_error err = {0};
    dsh_run_id run;
    srv->probing = true;
    if (dshh__start_run(srv->host, request, sizeof request - 1, &cb, &run, &err) < 0) {
        srv->probing = false;
        srv->ready = false;
        snprintf(srv->not_ready, sizeof srv->not_ready, "the probe run was rejected: %.200s",
                 err.message);
        clock_gettime(CLOCK_MONOTONIC, &srv->probed);
    }
}

static enum MHD_Result health(struct http_mcp *srv, struct MHD_Connection *conn, bool readiness)
{
    json_object *o = json_object_new_object();
    unsigned status = MHD_HTTP_OK;
    if (!readiness) {
        json_object_object_add(o, "status", json_object_new_string("alive"));
    } else if (srv->draining) {
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
        json_object_object_add(o, "status", json_object_new_string("draining"));
    } else {
        if (!srv->shared.retains && ms_since(&srv->probed) > PROBE_MAX_AGE_MS)
            probe(srv);
        /* A retaining profile has no owner-less run: its provider loaded, which is what
         * startup checked. */
        bool ready = srv->shared.retains || srv->ready;
        status = ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE;
        json_object_object_add(o, "status", json_object_new_string(ready ? "ready" : "not ready"));
        if (!ready)
            json_object_object_add(o, "reason",
                                   json_object_new_string(srv->probing && !*srv->not_ready
                                                              ? "the first probe run is going"
                                                              : srv->not_ready));
    }
    enum MHD_Result rc = queue(conn, status, "application/json", dshh__jstr(o), NULL);
    json_object_put(o);
    return rc;
}

/* ---- the endpoint --------------------------------------------------------------------------------- */

static bool accepts(struct MHD_Connection *conn, const char *type)
{
    const char *accept = header(conn, "Accept");
    return accept && (strstr(accept, type) || strstr(accept, "*/*"));
}

static bool known_version(const char *v)
{
    static const char *const versions[] = DSHH_MCP_PROTOCOL_VERSIONS;
    for (size_t i = 0; versions[i]; i++)
        if (!strcmp(versions[i], v))
            return true;
    return false;
}

/* A stream for SSE or JSON answers of hs (NULL when out of memory). */
static struct stream *stream_new(struct http_mcp *srv, struct hsession *hs,
                                 struct MHD_Connection *conn)
{
    struct stream *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    *st = (struct stream){.next = srv->streams, .srv = srv, .hs = hs, .conn = conn};
    srv->streams = st;
    srv->nstreams++;
    return st;
}

static enum MHD_Result open_sse(struct http_mcp *srv, struct stream *st, const char *session_id)
{
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 << 10, stream_read, st, stream_closed);
    if (!r) {
        stream_free(st);
        return MHD_NO;
    }
    st->sse = true;
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    if (session_id)
        MHD_add_response_header(r, "Mcp-Session-Id", session_id);
    enum MHD_Result rc = MHD_queue_response(st->conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    (void)srv;
    return rc;
}

/* A client's notifications/cancelled: the request gets no answer (MCP cancellation), so its POST
 * no longer waits for one. */
static void forget_cancelled(struct http_mcp *srv, struct hsession *hs, json_object *msg)
{
    const char *method = dsh_json_get_text(msg, "method");
    json_object *params = dsh_json_get_object(msg, "params");
    size_t i;
    if (!method || strcmp(method, "notifications/cancelled") != 0 || !dsh_json_has(params, "requestId"))
        return;
    struct stream *st = route(srv, hs, dshh__jstr(dsh_json_member(params, "requestId")), NULL, &i);
    if (!st)
        return;
    answered(st, i);
}

static bool is_request(json_object *msg)
{
    return json_object_is_type(msg, json_type_object) && dsh_json_has(msg, "method") &&
           dsh_json_has(msg, "id");
}

static enum MHD_Result post(struct http_mcp *srv, struct MHD_Connection *conn, struct request *req)
{
    if (!accepts(conn, "application/json") || !accepts(conn, "text/event-stream"))
        return refuse(conn, MHD_HTTP_NOT_ACCEPTABLE, -32000,
                      "Not Acceptable: the client must accept both application/json and "
                      "text/event-stream");
    const char *type = header(conn, "Content-Type");
    if (!type || strncmp(type, "application/json", 16) != 0)
        return refuse(conn, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, -32000,
                      "Unsupported Media Type: the body must be application/json");
    json_object *body = dsh_json_parse_strict(req->body.data ? req->body.data : "", req->body.len);
    if (!body)
        return refuse(conn, MHD_HTTP_BAD_REQUEST, -32700,
                      "Parse error: the body is not exactly one strict JSON value");
    bool batch = json_object_is_type(body, json_type_array);
    size_t n = batch ? json_object_array_length(body) : 1, nrequests = 0;
    bool initialize = false;
    for (size_t i = 0; i < n; i++) {
        json_object *msg = batch ? json_object_array_get_idx(body, i) : body;
        const char *method = dsh_json_get_text(msg, "method");
        if (!json_object_is_type(msg, json_type_object)) {
            json_object_put(body);
            return refuse(conn, MHD_HTTP_BAD_REQUEST, -32600,
                          "Invalid Request: a message is one JSON object");
        }
        nrequests += is_request(msg);
        initialize |= method && !strcmp(method, "initialize");
    }
    const char *sid = header(conn, "Mcp-Session-Id");
    const char *version = header(conn, "MCP-Protocol-Version");
    struct hsession *hs = NULL;
    enum MHD_Result rc;
    if (n == 0 || (initialize && (n > 1 || sid))) {
        rc = refuse(conn, MHD_HTTP_BAD_REQUEST, -32600,
                    n == 0 ? "Invalid Request: an empty batch"
                    : sid  ? "Bad Request: initialize starts a session: send it without "
                             "Mcp-Session-Id"
                           : "Invalid Request: initialize must be the only message of its POST");
    } else if (version && !known_version(version)) {
        char quoted[40];
        rc = refuse(conn, MHD_HTTP_BAD_REQUEST, -32000,
                    "Bad Request: unsupported MCP-Protocol-Version \"%s\"",
                    quotable(version, 32, quoted, sizeof quoted));
    } else if (initialize && srv->draining) {
        rc = refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                    "Service Unavailable: dsh is shutting down");
    } else if (initialize && srv->nsessions >= (size_t)srv->opts->max_sessions) {
        rc = refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                    "Service Unavailable: dsh serves at most %lld sessions at once",
                    (long long)srv->opts->max_sessions);
    } else if (initialize && !(hs = session_new(srv))) {
        rc = refuse(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, -32603, "dsh: out of memory");
    } else if (!initialize && !sid) {
        rc = refuse(conn, MHD_HTTP_BAD_REQUEST, -32000,
                    "Bad Request: Mcp-Session-Id header is required");
    } else if (!initialize && !(hs = find_session(srv, sid))) {
        rc = refuse(conn, MHD_HTTP_NOT_FOUND, -32001, "Session not found");
    } else {
        rc = MHD_YES;
    }
    if (!hs) {
        json_object_put(body);
        return rc;
    }
    touch(hs);
    size_t waiting = 0;
    for (struct stream *st = srv->streams; st; st = st->next)
        waiting += st->hs == hs && !st->get;
    if (nrequests && waiting >= MAX_SESSION_STREAMS) {
        json_object_put(body);
        return refuse(conn, MHD_HTTP_TOO_MANY_REQUESTS, -32000,
                      "Too Many Requests: %d POSTs of this session are waiting for answers",
                      MAX_SESSION_STREAMS);
    }
    for (size_t i = 0; i < n; i++)
        forget_cancelled(srv, hs, batch ? json_object_array_get_idx(body, i) : body);
    if (!nrequests) { /* notifications and responses: accepted, nothing to answer */
        for (size_t i = 0; i < n; i++)
            dshh__mcp_session_message(hs->session, batch ? json_object_array_get_idx(body, i) : body);
        json_object_put(body);
        return queue(conn, MHD_HTTP_ACCEPTED, "application/json", "", NULL);
    }
    struct stream *st = stream_new(srv, hs, conn);
    if (st && (!(st->ids = calloc(nrequests, sizeof(*st->ids))) ||
               !(st->collected = json_object_new_array()))) {
        stream_free(st);
        st = NULL;
    }
    for (size_t i = 0; st && i < n; i++) {
        json_object *msg = batch ? json_object_array_get_idx(body, i) : body;
        if (!is_request(msg))
            continue;
        json_object *token = dsh_json_member(
            dsh_json_get_object(dsh_json_get_object(msg, "params"), "_meta"), "progressToken");
        st->ids[st->nids].id = strdup(dshh__jstr(dsh_json_member(msg, "id")));
        st->ids[st->nids].token = token ? strdup(dshh__jstr(token)) : NULL;
        st->nids++;
    }
    if (!st) {
        json_object_put(body);
        return refuse(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, -32603, "dsh: out of memory");
    }
    for (size_t i = 0; i < n; i++) /* answers ready at once land in st->collected */
        dshh__mcp_session_message(hs->session, batch ? json_object_array_get_idx(body, i) : body);
    json_object_put(body);
    const char *new_id = initialize ? hs->id : NULL;
    if (st->nids == 0 || !st->hs) { /* all answered: one JSON response */
        json_object *collected = st->collected;
        json_object *out = batch ? collected : json_object_array_get_idx(collected, 0);
        rc = out ? queue(conn, MHD_HTTP_OK, "application/json", dshh__jstr(out), new_id)
                 : queue(conn, MHD_HTTP_ACCEPTED, "application/json", "", new_id);
        stream_free(st);
        return rc;
    }
    /* The rest come later: an SSE stream, starting with what is there. */
    json_object *collected = st->collected;
    st->collected = NULL;
    st->sse = true;
    for (size_t i = 0; i < json_object_array_length(collected); i++)
        stream_event(st, json_object_array_get_idx(collected, i));
    json_object_put(collected);
    return open_sse(srv, st, new_id);
}

static enum MHD_Result get_stream(struct http_mcp *srv, struct MHD_Connection *conn)
{
    const char *sid = header(conn, "Mcp-Session-Id");
    struct hsession *hs = sid ? find_session(srv, sid) : NULL;
    if (!accepts(conn, "text/event-stream"))
        return refuse(conn, MHD_HTTP_NOT_ACCEPTABLE, -32000,
                      "Not Acceptable: the client must accept text/event-stream");
    if (!sid)
        return refuse(conn, MHD_HTTP_BAD_REQUEST, -32000,
                      "Bad Request: Mcp-Session-Id header is required");
    if (!hs)
        return refuse(conn, MHD_HTTP_NOT_FOUND, -32001, "Session not found");
    for (struct stream *st = srv->streams; st; st = st->next)
        if (st->hs == hs && st->get)
            return refuse(conn, MHD_HTTP_CONFLICT, -32000,
                          "Conflict: this session's GET stream is open already");
    touch(hs);
    struct stream *st = stream_new(srv, hs, conn);
    if (!st)
        return refuse(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, -32603, "dsh: out of memory");
    st->get = true;
    return open_sse(srv, st, NULL);
}

static enum MHD_Result delete_session(struct http_mcp *srv, struct MHD_Connection *conn)
{
    const char *sid = header(conn, "Mcp-Session-Id");
    struct hsession *hs = sid ? find_session(srv, sid) : NULL;
    if (!sid)
        return refuse(conn, MHD_HTTP_BAD_REQUEST, -32000,
                      "Bad Request: Mcp-Session-Id header is required");
    if (!hs)
        return refuse(conn, MHD_HTTP_NOT_FOUND, -32001, "Session not found");
    end_session(hs, "the MCP client ended the session");
    return queue(conn, MHD_HTTP_OK, "application/json", "", NULL);
}

/* Whether the request may reach the endpoint: Origin, then the bearer token. */
static enum MHD_Result admitted(struct http_mcp *srv, struct MHD_Connection *conn, bool *ok)
{
    const char *origin = header(conn, "Origin");
    *ok = false;
    if (origin) {
        size_t i = 0;
        while (i < srv->opts->norigins && strcmp(srv->opts->origins[i], origin) != 0)
            i++;
        char quoted[72];
        if (i == srv->opts->norigins)
            return refuse(conn, MHD_HTTP_FORBIDDEN, -32000,
                          "Forbidden: Origin \"%s\" is not allowed (dsh mcp --allow-origin)",
                          quotable(origin, 64, quoted, sizeof quoted));
    }
    if (srv->token) {
        const char *auth = header(conn, "Authorization");
        if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
            return refuse(conn, MHD_HTTP_UNAUTHORIZED, -32001,
                          "Unauthorized: send Authorization: Bearer TOKEN");
        const char *guess = auth + 7;
        if (!same_secret(guess, strlen(guess), srv->token, srv->token_len))
            return refuse(conn, MHD_HTTP_UNAUTHORIZED, -32001, "Unauthorized: the token is wrong");
    }
    *ok = true;
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    struct http_mcp *srv = cls;
    struct request *req = *con_cls;
    bool is_post = !strcmp(method, MHD_HTTP_METHOD_POST);
    if (!req) { /* the headers: refuse what is refused before the body comes */
        if (!(req = calloc(1, sizeof(*req))))
            return MHD_NO;
        *con_cls = req;
        if (srv->connections > (unsigned)srv->opts->max_connections)
            return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                          "Service Unavailable: dsh serves at most %lld connections at once",
                          (long long)srv->opts->max_connections);
        if (!strcmp(url, "/healthz") || !strcmp(url, "/readyz")) {
            if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, -32000, "Method Not Allowed");
            return health(srv, conn, url[1] == 'r');
        }
        if (strcmp(url, ENDPOINT) != 0)
            return refuse(conn, MHD_HTTP_NOT_FOUND, -32000, "Not Found: the MCP endpoint is " ENDPOINT);
        bool ok;
        enum MHD_Result rc = admitted(srv, conn, &ok);
        if (!ok)
            return rc;
        if (!is_post && strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_DELETE))
            return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, -32000, "Method Not Allowed");
        const char *length = header(conn, "Content-Length");
        if (is_post && length && strtoull(length, NULL, 10) > (unsigned long long)srv->opts->max_body_bytes)
            return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, -32000,
                          "Content Too Large: a body may have at most %lld bytes",
                          (long long)srv->opts->max_body_bytes);
        if (!is_post)
            return !strcmp(method, MHD_HTTP_METHOD_GET) ? get_stream(srv, conn)
                                                        : delete_session(srv, conn);
        return MHD_YES; /* the body follows */
    }
    if (*upload_size) { /* a piece of the body */
        size_t n = *upload_size;
        *upload_size = 0;
        if (req->too_large || req->body.len + n > (size_t)srv->opts->max_body_bytes) {
            req->too_large = true;
            return MHD_YES;
        }
        return dsh_text_buffer_write(&req->body, (unsigned char *)upload, n) ? MHD_YES : MHD_NO;
    }
    if (!is_post)
        return MHD_YES; /* answered at the headers */
    if (req->too_large)
        return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, -32000,
                      "Content Too Large: a body may have at most %lld bytes",
                      (long long)srv->opts->max_body_bytes);
    return post(srv, conn, req);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode code)
{
    (void)cls, (void)conn, (void)code;
    struct request *req = *con_cls;
    if (req) {
        free(req->body.data);
        free(req);
    }
    *con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)conn, (void)socket_context;
    struct http_mcp *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        srv->connections++;
    else if (srv->connections)
        srv->connections--;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct http_mcp *srv = cls;
    if (!srv->host->verbose)
        return;
    fputs("dsh: http: ", stderr);
    vfprintf(stderr, fmt, ap);
}

/* ---- the loop ------------------------------------------------------------------------------------- */

static void run_daemon(struct http_mcp *srv);

static void on_run_due(void *arg)
{
    struct http_mcp *srv = arg;
    srv->run_timer = 0;
    run_daemon(srv);
    if (srv->draining) /* a run that ended may have left its session idle */
        check_drained(srv);
}

/* Lets MHD work, then arms the timer it asks for. */
static void run_daemon(struct http_mcp *srv)
{
    MHD_run(srv->daemon);
    MHD_UNSIGNED_LONG_LONG ms;
    if (srv->run_timer > 0)
        dshh__loop_cancel_timer(srv->host->loop, srv->run_timer);
    srv->run_timer = 0;
    if (MHD_get_timeout(srv->daemon, &ms) == MHD_YES)
        srv->run_timer = dshh__loop_add_timer(srv->host->loop, ms > 60000 ? 60000 : (uint32_t)ms,
                                              on_run_due, srv);
}

static void on_daemon_fd(void *arg, uint32_t events)
{
    (void)events;
    run_daemon(arg);
}

/* MHD must run soon (a resumed connection, a session to end while draining). */
static void kick(struct http_mcp *srv)
{
    if (srv->run_timer > 0)
        dshh__loop_cancel_timer(srv->host->loop, srv->run_timer);
    srv->run_timer = dshh__loop_add_timer(srv->host->loop, 0, on_run_due, srv);
}

static void on_keepalive(void *arg)
{
    struct http_mcp *srv = arg;
    static const char comment[] = ": keep-alive\n\n";
    srv->keepalive_timer = dshh__loop_add_timer(srv->host->loop, KEEPALIVE_MS, on_keepalive, srv);
    for (struct stream *st = srv->streams; st; st = st->next)
        if (st->sse && st->suspended)
            stream_append(st, comment, sizeof comment - 1, "", 0, "", 0);
}

/* While draining: idle sessions end; once no session and no stream is left, the loop ends. */
static void check_drained(struct http_mcp *srv)
{
    if (!srv->draining)
        return;
    for (struct hsession *hs = srv->sessions, *next; hs; hs = next) {
        next = hs->next;
        if (!hs->ended && !dshh__mcp_session_busy(hs->session) && !has_waiting_stream(hs))
            end_session(hs, "dsh is shutting down");
    }
    if (!srv->sessions && !srv->nstreams)
        dshh__loop_quit(srv->host->loop);
}

static void on_grace_over(void *arg)
{
    struct http_mcp *srv = arg;
    char why[128];
    srv->drain_timer = 0;
    snprintf(why, sizeof why, "dsh is shutting down: the drain grace of %lld ms passed",
             (long long)srv->opts->drain_ms);
    for (struct hsession *hs = srv->sessions; hs; hs = hs->next)
        if (!hs->ended)
            dshh__mcp_session_cancel_runs(hs->session, why);
    check_drained(srv);
}

static void on_flush_over(void *arg)
{
    struct http_mcp *srv = arg;
    srv->flush_timer = 0;
    fprintf(stderr, "dsh: %zu answer stream(s) were not taken within %d ms of the drain; dsh "
                    "closes them\n",
            srv->nstreams, FLUSH_MS);
    dshh__loop_quit(srv->host->loop);
}

static void on_stop_signal(void *arg, int sig)
{
    struct http_mcp *srv = arg;
    if (srv->draining) { /* a second signal: the grace ends now */
        if (srv->drain_timer > 0) {
            dshh__loop_cancel_timer(srv->host->loop, srv->drain_timer);
            on_grace_over(srv);
        }
        return;
    }
    srv->stop_signal = sig;
    srv->draining = true;
    fprintf(stderr, "dsh: %s: draining (%zu session(s), grace %lld ms)\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM", srv->nsessions, (long long)srv->opts->drain_ms);
    /* No new connections: the listening socket goes (its file too). */
    MHD_socket fd = MHD_quiesce_daemon(srv->daemon);
    if (fd != MHD_INVALID_SOCKET) {
        dshh__listen_close(&srv->addr, fd);
        srv->listen_fd = -1;
    }
    srv->drain_timer =
        dshh__loop_add_timer(srv->host->loop, (uint32_t)srv->opts->drain_ms, on_grace_over, srv);
    srv->flush_timer = dshh__loop_add_timer(srv->host->loop,
                                            (uint32_t)(srv->opts->drain_ms + FLUSH_MS), on_flush_over, srv);
    check_drained(srv);
}

/* ---- setup ----------------------------------------------------------------------------------------- */

static int read_token(struct http_mcp *srv, const char *path)
{
    size_t len;
    char *text = dshh__read_text_file(path, &len);
    if (!text) {
        fprintf(stderr, "dsh mcp: cannot read the token file %s: %s\n", path, strerror(errno));
        return -1;
    }
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)text[i] <= ' ' || (unsigned char)text[i] >= 0x7f) {
            fprintf(stderr, "dsh mcp: the token in %s must be one line of visible ASCII\n", path);
            free(text);
            return -1;
        }
    if (len < MIN_TOKEN_BYTES) {
        fprintf(stderr, "dsh mcp: the token in %s has %zu characters; at least %d are needed\n",
                path, len, MIN_TOKEN_BYTES);
        free(text);
        return -1;
    }
    srv->token = text;
    srv->token_len = len;
    return 0;
}

static int start_daemon(struct http_mcp *srv)
{
    char why[256];
    const struct dshh_mcp_listen_options *o = srv->opts;
    if (dshh__listen_parse(o->listen, &srv->addr, why, sizeof why) < 0) {
        fprintf(stderr, "dsh mcp: --listen: %s\n", why);
        return -1;
    }
    if (!srv->addr.loopback && !o->allow_remote) {
        fprintf(stderr,
                "dsh mcp: --listen %s is not a loopback address: add --allow-remote to serve "
                "other machines\n",
                o->listen);
        return -1;
    }
    if (!o->token_file && !srv->addr.unix_socket) {
        fprintf(stderr, "dsh mcp: --listen %s needs --token-file FILE (a bearer token): only a "
                        "Unix socket (mode 0600) may go without one\n",
                o->listen);
        return -1;
    }
    if (o->token_file && read_token(srv, o->token_file) < 0)
        return -1;
    srv->listen_fd = dshh__listen_open(&srv->addr, why, sizeof why);
    if (srv->listen_fd < 0) {
        fprintf(stderr, "dsh mcp: %s\n", why);
        return -1;
    }
    srv->daemon = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, srv,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)srv->listen_fd, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(o->max_connections + 16), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)MAX_HEADER_BYTES, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        srv, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv, MHD_OPTION_END);
    if (!srv->daemon) {
        fprintf(stderr, "dsh mcp: the HTTP server did not start on %s\n", o->listen);
        dshh__listen_close(&srv->addr, srv->listen_fd);
        srv->listen_fd = -1;
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    srv->epoll_fd = info ? info->epoll_fd : -1;
    if (srv->epoll_fd < 0 ||
        dshh__loop_add_fd(srv->host->loop, srv->epoll_fd, EPOLLIN, on_daemon_fd, srv) < 0) {
        fprintf(stderr, "dsh mcp: cannot watch the HTTP server\n");
        return -1;
    }
    if (srv->addr.unix_socket)
        fprintf(stderr, "dsh mcp: listening on %s\n", o->listen);
    else
        fprintf(stderr, "dsh mcp: listening on http://%.*s:%d" ENDPOINT "\n",
                (int)(strrchr(o->listen, ':') - o->listen), o->listen,
                dshh__listen_port(srv->listen_fd));
    return 0;
}

int dshh__mcp_listen_profile(struct dshh_profile *profile, const struct dshh_mcp_listen_options *opts)
{
    char sessions[24];
    snprintf(sessions, sizeof sessions, "%lld", (long long)opts->max_sessions);
    const struct {
        const char *key, *value;
    } defaults[] = {{"idleReleaseMs", LISTEN_IDLE_RELEASE_MS}, {"maxRetainedOwners", sessions}};
    char said[2][96];
    for (size_t i = 0; i < 2; i++) {
        const struct dshh_row *row = NULL;
        for (size_t r = 0; r < profile->nrows && !row; r++)
            if (!profile->rows[r].disabled && !strcmp(profile->rows[r].name, PTC_PROVIDER_NAME))
                row = &profile->rows[r];
        if (!row)
            return 0; /* another runtime (Python keeps no environments) */
        yaml_document_t *doc = (yaml_document_t *)&(row->config_layer ? row->config_layer : row->layer)->doc;
        yaml_node_t *set = row->config ? dsh_mapping_get_cstr(doc, row->config, defaults[i].key) : NULL;
        if (set && set->type == YAML_SCALAR_NODE) {
            snprintf(said[i], sizeof said[i], "%s %.*s (the profile's)", defaults[i].key,
                     (int)set->data.scalar.length, (const char *)set->data.scalar.value);
            continue;
        }
        if (dshh__profile_set_field(profile, "mcp --listen", PTC_PROVIDER_NAME, defaults[i].key,
                                    defaults[i].value, false, stderr) < 0)
            return -1;
        snprintf(said[i], sizeof said[i], "%s %s (dsh mcp --listen's default)", defaults[i].key,
                 defaults[i].value);
    }
    snprintf(retained_note, sizeof retained_note, "dsh mcp: retained environments: %s, %s\n",
             said[0], said[1]);
    return 0;
}

int dshh__cmd_mcp_listen(struct dshh_host *host, const struct dshh_profile *profile,
                         const struct dshh_mcp_listen_options *opts)
{
    signal(SIGPIPE, SIG_IGN);
    struct http_mcp srv = {.host = host, .opts = opts, .listen_fd = -1, .epoll_fd = -1,
                           .status = DSHH_EXIT_USAGE};
    snprintf(srv.not_ready, sizeof srv.not_ready, "the first probe run is going");
    if (dshh__mcp_shared_open(&srv.shared, host, profile) < 0) {
        dshh__mcp_shared_close(&srv.shared);
        return DSHH_EXIT_USAGE;
    }
    if (start_daemon(&srv) < 0)
        goto out;
    int rc = dshh__stop_signals_watch(host->loop, on_stop_signal, &srv);
    if (rc < 0) {
        fprintf(stderr, "dsh: cannot watch SIGTERM/SIGINT: %s\n", strerror(-rc));
        goto out;
    }
    if (srv.shared.retains)
        fputs(retained_note, stderr);
    probe(&srv);
    srv.keepalive_timer = dshh__loop_add_timer(host->loop, KEEPALIVE_MS, on_keepalive, &srv);
    run_daemon(&srv);
    rc = dshh__loop_run(host->loop);
    dshh__stop_signals_unwatch(host->loop);
    if (rc < 0)
        fprintf(stderr, "dsh: the event loop failed: %s\n", strerror(-rc));
    srv.status = rc < 0 ? DSHH_EXIT_USAGE : DSHH_EXIT_OK;
out:
    /* Sessions and calls still point at srv: unload first so no callback outlives it. */
    dshh__host_unload(host);
    if (srv.epoll_fd >= 0)
        dshh__loop_remove_fd(host->loop, srv.epoll_fd);
    for (struct stream *st = srv.streams; st; st = st->next) {
        st->hs = NULL;
        st->done = true;
        if (st->suspended) { /* MHD stops only without suspended connections */
            st->suspended = false;
            MHD_resume_connection(st->conn);
        }
    }
    if (srv.daemon && srv.listen_fd >= 0) { /* dsh closes its socket (and removes its file) */
        MHD_socket fd = MHD_quiesce_daemon(srv.daemon);
        if (fd != MHD_INVALID_SOCKET) {
            dshh__listen_close(&srv.addr, fd);
            srv.listen_fd = -1;
        }
    }
    if (srv.daemon) {
        MHD_run(srv.daemon);
        MHD_stop_daemon(srv.daemon); /* frees every stream through stream_closed */
    }
    if (srv.listen_fd >= 0)
        dshh__listen_close(&srv.addr, srv.listen_fd);
    while (srv.sessions) {
        struct hsession *hs = srv.sessions;
        srv.sessions = hs->next;
        dshh__mcp_session_free(hs->session);
        free(hs);
    }
    dshh__mcp_shared_close(&srv.shared);
    free(srv.token);
    return srv.status;
}

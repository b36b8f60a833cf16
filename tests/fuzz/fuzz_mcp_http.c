/* `dsh mcp --listen` (examples/host/mcp/dshh_mcp_http.c) with any bytes as HTTP requests: the
 * real host (profile, Linux services, demo tools) over the provider double fake_provider.c, one
 * dshh__cmd_mcp_listen per input on a Unix socket in a private directory.
 *
 * The input: a first line of options (its first byte's bit 0: the bearer token TOKEN below is
 * required; bit 1: the JSON log), then segments separated by lines "~~~" (the bytes "\n~~~\n").
 * Each segment is written raw on a new connection, which then half-closes and reads the answer
 * until EOF. In a segment, "$SID" is the last Mcp-Session-Id an answer carried (a session's
 * calls, GET streams and DELETE are reachable) and "$BIG" is 66000 'x's (a header or body over
 * the limits). A connection whose answer goes silent for SILENCE_MS (a run still going), or that
 * is a GET's event stream, is kept open (at most MAX_PARKED; the oldest is then closed, as a
 * client that leaves) and read to its end after the drain. After the last segment the client
 * waits until /healthz answers 200 (the loop is alive and watches SIGTERM), then sends SIGTERM.
 *
 * Properties: dsh mcp --listen returns 0 after the drain and writes nothing on stdout; its
 * socket file is gone; /healthz still answers 200 after any input; every answer is a sequence
 * of HTTP/1.x responses (a status line, headers, a body as its Content-Length or chunked
 * encoding says); an Mcp-Session-Id is 32 lowercase hex digits; an application/json body is one
 * strict JSON value: a JSON-RPC 2.0 message, a batch of them, or a probe's {"status": ...}; every
 * `data:` line of a text/event-stream is one JSON-RPC 2.0 message (mcp_jsonrpc.c); every kept
 * connection ends once the drain is over; no leak (ASan). A hang is a finding (-timeout=60). */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_mcp_http.h"
#include "dshh_usage.h"
#include "fuzz_host.h"
#include "fuzz_target.h"
#include "mcp_jsonrpc.h"

#ifndef FAKE_PROVIDER_PATH
#error "meson passes FAKE_PROVIDER_PATH (the built fake_provider.c)"
#endif

#define TOKEN         "fuzz-token-0123456789" /* what token mode's file holds */
#define ORIGIN        "http://allowed.example" /* the one --allow-origin */
#define SEPARATOR     "\n~~~\n"
#define MAX_SEGMENTS  32
#define MAX_PARKED    8
#define SILENCE_MS    100
#define HALF_CLOSE_MS 5
#define BIG_BYTES     66000 /* above the 64 KiB header limit and max_body_bytes */
#define MAX_BODY      65536
#define SID_LEN       32
/* Waits that only a broken server (or a machine loaded far beyond its cores) reaches: a finding
 * that says what it waited for; libFuzzer's -timeout=60 is the net for the rest. */
#define START_MS      45000
#define HEALTH_MS     45000
#define AFTER_TERM_MS 45000

static struct dshh_profile profile;
static char sock_dir[] = "/tmp/dsh-fuzz-http-XXXXXX";
static char sock_path[64], listen_addr[80], token_path[64];
static char big[BIG_BYTES]; /* what $BIG stands for */

static void remove_files(void)
{
    unlink(token_path);
    unlink(sock_path);
    rmdir(sock_dir);
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- one connection ---------------------------------------------------------------------------- */

struct conn {
    int fd;
    char *buf; /* the answer so far */
    size_t len, cap;
    bool eof;     /* the server closed cleanly: the answer is whole */
    bool reset;   /* the server reset the connection: the answer may be cut anywhere */
    bool no_body; /* the segment names HEAD: which response has no body is unknown */
    bool get;     /* the segment is a GET: its event stream carries only keep-alives */
};

/* The player: the input's segments, the session id it saw last. */
struct player {
    const uint8_t *data;
    size_t size;
    char sid[SID_LEN + 1];
    struct conn parked[MAX_PARKED];
    size_t nparked;
};

static int connect_socket(void)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    fuzz_check(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock_path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
        return fd;
    close(fd);
    return -1;
}

/* Writes what the server takes within a bound (a server that stops reading is no finding:
 * libmicrohttpd stops at a refused request). */
static void send_all(int fd, const char *p, size_t len)
{
    while (len) {
        struct pollfd pfd = {.fd = fd, .events = POLLOUT};
        if (poll(&pfd, 1, 2000) <= 0)
            return;
        ssize_t n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return; /* EPIPE, ECONNRESET: the server closed */
        p += n;
        len -= (size_t)n;
    }
}

/* Reads what comes within timeout_ms: 1 bytes came, 0 the end (EOF or reset), -1 nothing came. */
static int read_some(struct conn *c, int timeout_ms)
{
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
    int rc = poll(&pfd, 1, timeout_ms);
    if (rc < 0 && errno == EINTR)
        return 1; /* SIGTERM, sent by this thread: look again */
    if (rc <= 0)
        return -1;
    if (c->cap - c->len < 65536) {
        c->cap = c->cap * 2 + 65536;
        c->buf = realloc(c->buf, c->cap);
        fuzz_check(c->buf != NULL, "out of memory");
    }
    ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len - 1);
    if (n < 0 && errno == EINTR)
        return 1;
    if (n < 0) {
        c->reset = true;
        return 0;
    }
    if (n == 0) {
        c->eof = true;
        return 0;
    }
    c->len += (size_t)n;
    c->buf[c->len] = '\0'; /* strtoull never reads past what came */
    return 1;
}

/* ---- what an answer must be ------------------------------------------------------------------------- */

/* The value of header name in the header block [h, end) (lines end with CRLF), or NULL. */
static const char *header_value(const char *h, const char *end, const char *name, size_t *vlen)
{
    size_t nlen = strlen(name);
    for (const char *line = h; line < end;) {
        const char *eol = memmem(line, (size_t)(end - line), "\r\n", 2);
        if (!eol)
            eol = end;
        if ((size_t)(eol - line) > nlen && line[nlen] == ':' && !strncasecmp(line, name, nlen)) {
            const char *v = line + nlen + 1;
            while (v < eol && (*v == ' ' || *v == '\t'))
                v++;
            *vlen = (size_t)(eol - v);
            return v;
        }
        line = eol + 2;
    }
    return NULL;
}

static bool value_starts(const char *v, size_t vlen, const char *prefix)
{
    size_t plen = strlen(prefix);
    return v && vlen >= plen && !strncasecmp(v, prefix, plen);
}

/* A JSON body dsh wrote: a JSON-RPC message, a batch of them, or a probe's answer. */
static void check_json_body(const char *body, size_t len)
{
    json_object *v = dsh_json_parse_strict(body, len);
    fuzz_check(v != NULL, "an application/json body that is not one strict JSON value: %.*s", (int)len, body);
    if (json_object_is_type(v, json_type_array)) {
        fuzz_check(json_object_array_length(v) > 0, "an empty batch answer");
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            const char *text = json_object_to_json_string_ext(json_object_array_get_idx(v, i), JSON_C_TO_STRING_PLAIN);
            mcp_jsonrpc_check(NULL, text, strlen(text));
        }
    } else if (dsh_json_has(v, "jsonrpc")) {
        mcp_jsonrpc_check(NULL, body, len);
    } else {
        fuzz_check(dsh_json_get_text(v, "status") != NULL, "a JSON body neither JSON-RPC nor a probe's: %.*s",
                   (int)len, body);
    }
    json_object_put(v);
}

/* Every whole `data:` line of an event stream is one JSON-RPC message. */
static void check_events(const char *body, size_t len)
{
    for (const char *line = body, *end = body + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl)
            break; /* cut by the end of what came */
        if (nl - line >= 5 && !memcmp(line, "data:", 5)) {
            const char *v = line + 5 + (line[5] == ' ');
            mcp_jsonrpc_check(NULL, v, (size_t)(nl - v));
        }
        line = nl + 1;
    }
}

/* Decodes a chunked body from p (len bytes) into *out; returns the bytes it used, or 0 when the
 * body is not whole yet (then *out holds the whole chunks). A broken encoding is a finding. */
static size_t dechunk(const char *p, size_t len, bool whole, char **out, size_t *out_len)
{
    size_t pos = 0;
    *out = NULL;
    *out_len = 0;
    for (;;) {
        const char *eol = memmem(p + pos, len - pos, "\r\n", 2);
        if (!eol) {
            fuzz_check(!whole, "a chunk size line cut by the end: %.*s", (int)(len - pos), p + pos);
            return 0;
        }
        char *hex_end;
        unsigned long long size = isxdigit((unsigned char)p[pos]) ? strtoull(p + pos, &hex_end, 16) : 0;
        fuzz_check(isxdigit((unsigned char)p[pos]) && (hex_end == eol || *hex_end == ';') && size < (1ULL << 40),
                   "a chunk size that is no hex number: %.*s", (int)(eol - (p + pos)), p + pos);
        pos = (size_t)(eol - p) + 2;
        if (size == 0) { /* trailers up to an empty line */
            for (;;) {
                const char *t = memmem(p + pos, len - pos, "\r\n", 2);
                if (!t) {
                    fuzz_check(!whole, "the trailer of a chunked body cut by the end");
                    return 0;
                }
                bool empty = t == p + pos;
                pos = (size_t)(t - p) + 2;
                if (empty)
                    return pos;
            }
        }
        if (len - pos < size + 2) {
            fuzz_check(!whole, "a chunk of %llu bytes cut by the end", size);
            return 0;
        }
        fuzz_check(!memcmp(p + pos + size, "\r\n", 2), "a chunk not followed by CRLF");
        *out = realloc(*out, *out_len + size + 1);
        fuzz_check(*out != NULL, "out of memory");
        memcpy(*out + *out_len, p + pos, size);
        *out_len += size;
        pos += size + 2;
    }
}

static bool is_sid(const char *v, size_t len)
{
    if (len != SID_LEN)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f')))
            return false;
    return true;
}

/* Checks the responses of one connection as far as they came (the whole of them when c->eof)
 * and notes the last session id. */
static void check_answer(struct player *pl, const struct conn *c)
{
    const char *a = c->buf;
    size_t len = c->len, pos = 0;
    bool whole = c->eof;
    while (pos < len) {
        const char *r = a + pos, *end = a + len;
        const char *eol = memmem(r, (size_t)(end - r), "\r\n", 2);
        if (!eol) {
            fuzz_check(!whole, "a status line cut by the end: %.*s", (int)(end - r), r);
            return;
        }
        fuzz_check(eol - r >= 13 && !memcmp(r, "HTTP/1.", 7) && (r[7] == '0' || r[7] == '1') && r[8] == ' ' &&
                       r[9] >= '1' && r[9] <= '5' && r[10] >= '0' && r[10] <= '9' && r[11] >= '0' &&
                       r[11] <= '9' && r[12] == ' ',
                   "no HTTP/1.x status line: %.*s", (int)(eol - r < 200 ? eol - r : 200), r);
        unsigned status = (unsigned)(r[9] - '0') * 100 + (unsigned)(r[10] - '0') * 10 + (unsigned)(r[11] - '0');
        const char *eoh = memmem(r, (size_t)(end - r), "\r\n\r\n", 4);
        if (!eoh) {
            fuzz_check(!whole, "headers cut by the end: %.*s", (int)(end - r), r);
            return;
        }
        const char *h = eol + 2, *body = eoh + 4;
        size_t type_len = 0, cl_len = 0, te_len = 0, sid_len = 0;
        const char *type = header_value(h, eoh + 2, "Content-Type", &type_len);
        const char *cl = header_value(h, eoh + 2, "Content-Length", &cl_len);
        const char *te = header_value(h, eoh + 2, "Transfer-Encoding", &te_len);
        const char *sid = header_value(h, eoh + 2, "Mcp-Session-Id", &sid_len);
        if (sid) {
            fuzz_check(is_sid(sid, sid_len), "an Mcp-Session-Id that is not 32 hex digits: %.*s", (int)sid_len, sid);
            memcpy(pl->sid, sid, SID_LEN);
        }
        pos = (size_t)(body - a);
        if (status < 200 || status == 204 || status == 304)
            continue; /* no body: an interim answer (100 Continue) or none */
        /* An answer without Content-Type is libmicrohttpd's own refusal (dsh's always have one),
         * after which it closes: 0.9.75 writes the header block of a malformed Content-Length's
         * 400 twice, so nothing after its status line is dsh's to check. */
        if (!type)
            return;
        if (c->no_body)
            return; /* which answer is HEAD's is unknown: no body is checked */
        bool json = value_starts(type, type_len, "application/json");
        bool sse = value_starts(type, type_len, "text/event-stream");
        char *decoded = NULL;
        const char *b = body;
        size_t blen, used;
        bool body_whole;
        if (value_starts(te, te_len, "chunked")) {
            used = dechunk(body, (size_t)(end - body), whole, &decoded, &blen);
            body_whole = used > 0;
            b = decoded;
            pos = body_whole ? pos + used : len;
        } else if (cl) {
            char *num_end;
            unsigned long long n = strtoull(cl, &num_end, 10);
            fuzz_check(num_end == cl + cl_len, "a Content-Length that is no number: %.*s", (int)cl_len, cl);
            body_whole = (size_t)(end - body) >= n;
            fuzz_check(body_whole || !whole, "a body shorter than its Content-Length %llu: %zu bytes", n,
                       (size_t)(end - body));
            blen = body_whole ? n : (size_t)(end - body);
            pos = body_whole ? pos + n : len;
        } else { /* up to the end of the connection (an HTTP/1.0 answer) */
            blen = (size_t)(end - body);
            body_whole = whole;
            pos = len;
        }
        if (json && blen && body_whole)
            check_json_body(b, blen);
        if (sse && b)
            check_events(b, blen);
        free(decoded);
    }
}

/* ---- the client thread -------------------------------------------------------------------------- */

/* The segment with $SID and $BIG expanded (malloc'd, *ret_len bytes). */
static char *expand(const struct player *pl, const uint8_t *seg, size_t len, size_t *ret_len)
{
    size_t cap = len + 1, n = 0;
    char *out = malloc(cap);
    fuzz_check(out != NULL, "out of memory");
    for (size_t i = 0; i < len;) {
        const char *with = NULL;
        size_t wlen = 0, skip = 1;
        if (len - i >= 4 && !memcmp(seg + i, "$SID", 4) && pl->sid[0]) {
            with = pl->sid;
            wlen = SID_LEN;
            skip = 4;
        } else if (len - i >= 4 && !memcmp(seg + i, "$BIG", 4)) {
            with = big;
            wlen = sizeof big;
            skip = 4;
        } else {
            with = (const char *)seg + i;
            wlen = 1;
        }
        if (n + wlen > cap) {
            cap = (n + wlen) * 2;
            out = realloc(out, cap);
            fuzz_check(out != NULL, "out of memory");
        }
        memcpy(out + n, with, wlen);
        n += wlen;
        i += skip;
    }
    *ret_len = n;
    return out;
}

static void finish_conn(struct player *pl, struct conn *c)
{
    if (getenv("DSH_FUZZ_VERBOSE"))
        fprintf(stderr, "--- answer (%s):\n%.*s\n", c->eof ? "end" : c->reset ? "reset" : "left", (int)c->len,
                c->buf ? c->buf : "");
    check_answer(pl, c);
    close(c->fd);
    free(c->buf);
    *c = (struct conn){.fd = -1};
}

/* Keeps c open to read after the drain; the oldest kept one goes when there are too many (what
 * came so far is checked). */
static void park(struct player *pl, struct conn *c)
{
    check_answer(pl, c); /* its session id is for the next segments */
    if (pl->nparked == MAX_PARKED) {
        finish_conn(pl, &pl->parked[0]);
        memmove(pl->parked, pl->parked + 1, (MAX_PARKED - 1) * sizeof *pl->parked);
        pl->nparked--;
    }
    pl->parked[pl->nparked++] = *c;
}

/* Whether c is a GET's event stream whose headers came: it would only carry keep-alives. */
static bool is_get_stream(const struct conn *c)
{
    const char *eoh = c->get && c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL;
    size_t tlen;
    const char *type = eoh ? header_value(c->buf, eoh + 2, "Content-Type", &tlen) : NULL;
    return type && value_starts(type, tlen, "text/event-stream");
}

static void play_segment(struct player *pl, const uint8_t *seg, size_t len)
{
    size_t n;
    char *bytes = expand(pl, seg, len, &n);
    struct conn c = {.fd = connect_socket()};
    fuzz_check(c.fd >= 0, "cannot connect to %s: %s", sock_path, strerror(errno));
    c.no_body = memmem(bytes, n, "HEAD", 4) != NULL;
    c.get = n >= 4 && !memcmp(bytes, "GET ", 4);
    send_all(c.fd, bytes, n);
    free(bytes);
    /* The end of the request apart from its bytes: libmicrohttpd (epoll, edge-triggered) reads
     * them, and would not look again for an EOF that came with them (a cut request would then
     * wait for its 60 s timeout). */
    int rc = read_some(&c, HALF_CLOSE_MS);
    shutdown(c.fd, SHUT_WR);
    while (rc != 0 && !is_get_stream(&c) && (rc = read_some(&c, SILENCE_MS)) >= 0) {
    }
    if (rc == 0)
        finish_conn(pl, &c);
    else
        park(pl, &c);
}

/* Waits until /healthz answers 200: the loop runs (so SIGTERM is watched) and still serves. */
static void await_health(struct player *pl)
{
    static const char request[] = "GET /healthz HTTP/1.1\r\nHost: dsh\r\n\r\n";
    int64_t deadline = now_ms() + HEALTH_MS;
    for (;;) {
        struct conn c = {.fd = connect_socket()};
        fuzz_check(c.fd >= 0, "cannot connect to %s for /healthz: %s", sock_path, strerror(errno));
        send_all(c.fd, request, sizeof request - 1);
        shutdown(c.fd, SHUT_WR);
        while (read_some(&c, (int)(deadline - now_ms() > 0 ? deadline - now_ms() : 0)) > 0) {
        }
        bool alive = c.len >= 12 && !memcmp(c.buf + 8, " 200", 4);
        fuzz_check(alive || now_ms() < deadline, "/healthz did not answer 200 within %d ms: %.*s", HEALTH_MS,
                   (int)c.len, c.buf ? c.buf : "");
        finish_conn(pl, &c);
        if (alive)
            return;
        usleep(10000); /* connections the input left may still count against the limit */
    }
}

static void *play(void *arg)
{
    struct player *pl = arg;
    /* The socket appears once the server listens (a connection waits in the backlog). */
    for (int64_t deadline = now_ms() + START_MS;; usleep(1000)) {
        int fd = connect_socket();
        if (fd >= 0) {
            close(fd);
            break;
        }
        fuzz_check(now_ms() < deadline, "%s did not accept within %d ms", sock_path, START_MS);
    }
    const uint8_t *p = pl->data, *end = pl->data + pl->size;
    for (int i = 0; i < MAX_SEGMENTS && p < end; i++) {
        const uint8_t *sep = memmem(p, (size_t)(end - p), SEPARATOR, sizeof SEPARATOR - 1);
        const uint8_t *seg_end = sep ? sep : end;
        play_segment(pl, p, (size_t)(seg_end - p));
        p = sep ? sep + sizeof SEPARATOR - 1 : end;
    }
    await_health(pl);
    kill(getpid(), SIGTERM); /* the stop-signal watch turns it into the drain */
    /* The drain ends every stream: each kept connection reaches its end. */
    int64_t deadline = now_ms() + AFTER_TERM_MS;
    for (size_t i = 0; i < pl->nparked; i++) {
        struct conn *c = &pl->parked[i];
        int rc;
        while ((rc = read_some(c, (int)(deadline - now_ms() > 0 ? deadline - now_ms() : 0))) > 0) {
        }
        fuzz_check(rc == 0, "a connection still open %d ms after SIGTERM: %.*s", AFTER_TERM_MS,
                   (int)(c->len < 300 ? c->len : 300), c->buf ? c->buf : "");
        finish_conn(pl, c);
    }
    pl->nparked = 0;
    return NULL;
}

/* ---- the target --------------------------------------------------------------------------------- */

struct listen_run {
    struct player *pl;
    struct dshh_mcp_listen_options opts;
};

static int mcp_listen(struct dshh_host *host, void *arg)
{
    struct listen_run *lr = arg;
    pthread_t thread;
    fuzz_check(pthread_create(&thread, NULL, play, lr->pl) == 0, "the client thread");
    int rc = dshh__cmd_mcp_listen(host, &profile, &lr->opts);
    /* Before the join: a server that never started leaves the client waiting for its socket. */
    fuzz_check(rc == DSHH_EXIT_OK, "dsh mcp --listen returned %d", rc);
    pthread_join(thread, NULL);
    return rc;
}

static void setup(void)
{
    fuzz_host_profile(&profile, FAKE_PROVIDER_PATH, "");
    memset(big, 'x', sizeof big);
    fuzz_check(mkdtemp(sock_dir) != NULL, "mkdtemp");
    snprintf(sock_path, sizeof sock_path, "%s/s.sock", sock_dir);
    snprintf(listen_addr, sizeof listen_addr, "unix:%s", sock_path);
    snprintf(token_path, sizeof token_path, "%s/token", sock_dir);
    FILE *f = fopen(token_path, "w");
    fuzz_check(f != NULL, "the token file");
    fputs(TOKEN "\n", f);
    fclose(f);
    atexit(remove_files);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!profile.nrows)
        setup();
    if (size > 65536)
        return 0;
    /* The options line, then the segments. */
    uint8_t mode = size ? data[0] : 0;
    const uint8_t *nl = memchr(data, '\n', size);
    size_t skip = nl ? (size_t)(nl - data) + 1 : size;
    struct player pl = {.data = data + skip, .size = size - skip};
    static const char *origins[] = {ORIGIN};
    struct listen_run lr = {
        .pl = &pl,
        .opts = {.listen = listen_addr,
                 .token_file = (mode & 1) ? token_path : NULL,
                 .origins = origins,
                 .norigins = 1,
                 .session_idle_ms = DSHH_MCP_HTTP_SESSION_IDLE_MS,
                 .drain_ms = 100,
                 .log_json = (mode & 2) != 0,
                 .max_sessions = 8,
                 .max_connections = 16,
                 .max_body_bytes = MAX_BODY},
    };
    struct fuzz_client client = {.input = NULL, .size = 0};
    char *out;
    size_t len;
    int rc = fuzz_host_command(&profile, mcp_listen, &lr, &client, &out, &len);
    fuzz_check(rc == DSHH_EXIT_OK, "dsh mcp --listen returned %d", rc);
    fuzz_check(len == 0, "dsh mcp --listen wrote on stdout: %.*s", (int)len, out);
    struct stat st;
    fuzz_check(lstat(sock_path, &st) < 0 && errno == ENOENT, "%s is left after dsh mcp --listen", sock_path);
    free(out);
    return 0;
}

/* dsh as an MCP client of the downstream servers of the `dsh-mcp-bindings` row: each server runs
 * on stdio (newline-delimited JSON-RPC 2.0), its tools become one binding namespace, a program's
 * call becomes tools/call and its answer the call's reply (examples/host/README.md). */
#include "dshh_mcp_downstream.h"

#include "dshh_mcp_restart.h"
#include "dshh_mcp_typescript.h"
#include "dshh_names.h"
#include "dshh_serve_events.h"
#include "dshh_yaml.h"

#include "dsh_config.h"
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_text_buffer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_MESSAGE ((size_t)64 << 20)
/* Bytes waiting for a server's stdin at which its next call is refused (README "Peers that stop
 * reading"). */
#define MAX_UNREAD ((size_t)8 << 20)
#define HANDSHAKE_MS 30000
#define STOP_GRACE_MS 2000
#define MAX_QUEUED 64 /* calls waiting for a restarting server */
#define MAX_TOOL_PAGES 1000
/* JSON values in a message dsh reads as a json-c tree (a request, a handshake answer); an answer
 * to a program's call is never made a tree (README "Downstream MCP servers"). */
#define MAX_TREE_NODES 200000
/* What a call's rejection says (examples/host/README.md, "Restarts"). */
#define EXITED_FMT "the MCP server %s exited"
#define GAVE_UP_FMT "the MCP server %s exited and dsh gave up restarting it"
#define QUEUE_FULL_FMT "the MCP server %s is restarting and already has %d calls waiting"
#define MISSING_TOOL_FMT "the MCP server %s no longer offers the tool %s"
#define NOT_READING_FMT "the MCP server %s is not reading its input: %zu MiB already wait for it"
#define UNTYPED_CONTENT_FMT "the MCP server %s answered with a content item that has no type (a string)"

/* Only these of dsh's environment reach a server (as MCP clients commonly do), plus its `env`. */
static const char *const inherited_env[] = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", NULL};

struct dshh_mcp_pending {
    struct dshh_mcp_pending *next;
    int64_t id;
    dsh_run_id run;
    uint64_t call;
    const struct dshh_mcp_tool *tool;
    bool sent;
    json_object *arguments; /* until it is sent */
};

/* ---- messages ------------------------------------------------------------------------------------ */

/* Queues msg for the server's stdin (never blocks): 0, or -ENOBUFS when the server left
 * MAX_UNREAD bytes unread (msg is not sent), or another -errno. */
static int send_message(struct dshh_mcp_server *s, json_object *msg)
{
    json_object_object_add(msg, "jsonrpc", json_object_new_string("2.0"));
    if (s->exited)
        return -EPIPE;
    const char *text = dshh__jstr(msg);
    struct iovec iov[] = {{(char *)text, strlen(text)}, {"\n", 1}};
    int rc = dshh__out_queue_write(&s->out, iov, 2);
    if (rc < 0 && rc != -ENOBUFS)
        s->exited = true; /* noticed for good at its stdout's EOF */
    return rc;
}

static json_object *request(int64_t id, const char *method, json_object *params)
{
    json_object *msg = json_object_new_object();
    json_object_object_add(msg, "id", json_object_new_int64(id));
    json_object_object_add(msg, "method", json_object_new_string(method));
    if (params)
        json_object_object_add(msg, "params", params);
    return msg;
}

/* Sends a request whose answer is awaited (the handshake's). */
static void send_request(struct dshh_mcp_server *s, const char *method, json_object *params)
{
    s->awaited_id = ++s->next_id;
    json_object *msg = request(s->awaited_id, method, params);
    send_message(s, msg);
    json_object_put(msg);
}

static json_object *tools_page_params(const char *cursor)
{
    json_object *params = json_object_new_object();
    if (cursor)
        json_object_object_add(params, "cursor", json_object_new_string(cursor));
    return params;
}

/* Requests a server sends us: ping is answered, everything else is not supported. */
static void answer_server_request(struct dshh_mcp_server *s, json_object *msg, json_object *id)
{
    json_object *reply = json_object_new_object();
    const char *method = dsh_json_get_text(msg, "method");
    json_object_object_add(reply, "id", json_object_get(id));
    if (method && !strcmp(method, "ping")) {
        json_object_object_add(reply, "result", json_object_new_object());
    } else {
        json_object *err = json_object_new_object();
        json_object_object_add(err, "code", json_object_new_int(-32601));
        json_object_object_add(err, "message", json_object_new_string("dsh does not offer this method"));
        json_object_object_add(reply, "error", err);
    }
    send_message(s, reply);
    json_object_put(reply);
}

/* ---- blocking handshake ----------------------------------------------------------------------- */

struct awaited {
    struct dshh_mcp_server *s;
    int64_t id;
    json_object *response;
};

static json_object *message_tree(struct dshh_mcp_server *s, const char *line, size_t len, size_t nodes);

/* Whether a server's line is one strict JSON value a tree could hold (DSH_JSON_MAX_DEPTH), and
 * how many values it has (what a tree of it would cost). */
static bool line_is_json(const char *line, size_t len, size_t *ret_nodes)
{
    struct dsh_json_extent extent;
    if (!dsh_json_is_value(line, len, DSH_JSON_MAX_DEPTH, &extent))
        return false;
    *ret_nodes = extent.nodes;
    return true;
}

static void on_handshake_line(void *arg, const char *line, size_t len)
{
    struct awaited *a = arg;
    int64_t n;
    size_t nodes;
    json_object *msg = line && line_is_json(line, len, &nodes) ? message_tree(a->s, line, len, nodes) : NULL;
    json_object *id = dsh_json_member(msg, "id");
    if (dsh_json_has(msg, "id")) {
        if (dsh_json_has(msg, "method"))
            answer_server_request(a->s, msg, id);
        else if (dsh_json_as_int64(id, INT64_MIN, INT64_MAX, &n) && n == a->id && !a->response)
            a->response = json_object_get(msg);
    }
    json_object_put(msg);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The result object of a response (a reference), or NULL with a diagnostic on stderr. */
static json_object *result_of(struct dshh_mcp_server *s, const char *method, json_object *response)
{
    json_object *result = dsh_json_get_object(response, "result");
    if (result)
        return json_object_get(result);
    const char *message = dsh_json_get_text(dsh_json_get_object(response, "error"), "message");
    fprintf(stderr, "dsh: MCP server %s: %s failed: %s\n", s->name, method, message ? message : "no result");
    return NULL;
}

/* Sends method and waits (bounded) for its result; NULL with a diagnostic on stderr. */
static json_object *call_blocking(struct dshh_mcp_server *s, const char *method, json_object *params)
{
    send_request(s, method, params);
    struct awaited a = {.s = s, .id = s->awaited_id};
    int64_t deadline = now_ms() + HANDSHAKE_MS;
    while (!a.response) {
        int64_t left = deadline - now_ms();
        struct pollfd p = {.fd = s->from_fd, .events = POLLIN};
        int rc = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0) {
            fprintf(stderr, "dsh: MCP server %s: no answer to %s within %d ms\n", s->name, method, HANDSHAKE_MS);
            return NULL;
        }
        char chunk[65536];
        ssize_t n = read(s->from_fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "dsh: MCP server %s exited during %s\n", s->name, method);
            return NULL;
        }
        dshh__lines_feed(&s->lines, chunk, (size_t)n, on_handshake_line, &a);
    }
    json_object *result = result_of(s, method, a.response);
    json_object_put(a.response);
    return result;
}

static json_object *initialize_params(void)
{
    static const char *const versions[] = DSHH_MCP_PROTOCOL_VERSIONS;
    json_object *params = json_object_new_object(), *info = json_object_new_object();
    json_object_object_add(params, "protocolVersion", json_object_new_string(versions[0]));
    json_object_object_add(params, "capabilities", json_object_new_object());
    json_object_object_add(info, "name", json_object_new_string("dsh"));
    json_object_object_add(info, "version", json_object_new_string(DSH_VERSION));
    json_object_object_add(params, "clientInfo", info);
    return params;
}

/* Checks initialize's result; when dsh speaks its revision, sends notifications/initialized. */
static int initialized(struct dshh_mcp_server *s, json_object *init)
{
    static const char *const versions[] = DSHH_MCP_PROTOCOL_VERSIONS;
    const char *version = dsh_json_get_text(init, "protocolVersion");
    bool known = false;
    for (size_t i = 0; version && versions[i]; i++)
        known = known || !strcmp(versions[i], version);
    if (!version) {
        fprintf(stderr, "dsh: MCP server %s answered initialize without a protocol revision (a string)\n", s->name);
        return -1;
    }
    if (!known) {
        fprintf(stderr, "dsh: MCP server %s speaks protocol revision \"%s\", which dsh does not\n", s->name, version);
        return -1;
    }
    json_object *note = json_object_new_object();
    json_object_object_add(note, "method", json_object_new_string("notifications/initialized"));
    send_message(s, note);
    json_object_put(note);
    return 0;
}

static int handshake(struct dshh_mcp_server *s)
{
    json_object *init = call_blocking(s, "initialize", initialize_params());
    int rc = init ? initialized(s, init) : -1;
    json_object_put(init);
    return rc;
}

static int add_tool(struct dshh_mcp_server *s, json_object *t)
{
    const char *name = dsh_json_get_text(t, "name"), *description = dsh_json_get_text(t, "description");
    if (!name && dsh_json_get_string(t, "name", NULL)) {
        /* A C string would end at the NUL: two such names could collide, so the tool is left out. */
        fprintf(stderr, "dsh: MCP server %s listed a tool whose name contains a NUL byte; programs cannot call it\n",
                s->name);
        return 0;
    }
    if (!name) {
        fprintf(stderr, "dsh: MCP server %s listed a tool without a name\n", s->name);
        return -1;
    }
    const char **taken = calloc(s->ntools + 1, sizeof(*taken));
    struct dshh_mcp_tool *grown = realloc(s->tools, (s->ntools + 1) * sizeof(*grown));
    if (!taken || !grown) {
        free(taken);
        if (grown)
            s->tools = grown;
        return -1;
    }
    s->tools = grown;
    for (size_t i = 0; i < s->ntools; i++)
        taken[i] = s->tools[i].ident;
    struct dshh_mcp_tool *tool = &s->tools[s->ntools];
    *tool = (struct dshh_mcp_tool){.name = strdup(name),
                                   .ident = dshh__mcp_identifier(name, DSH_BINDING_FUNCTION, taken),
                                   .description = description ? strdup(description) : NULL,
                                   .input_schema = json_object_get(dsh_json_get_object(t, "inputSchema")),
                                   .output_schema = json_object_get(dsh_json_get_object(t, "outputSchema"))};
    free(taken);
    s->ntools++;
    return tool->name && tool->ident ? 0 : -1;
}

static int list_tools(struct dshh_mcp_server *s)
{
    char *cursor = NULL;
    for (int page = 0; page < MAX_TOOL_PAGES; page++) {
        json_object *params = tools_page_params(cursor);
        free(cursor);
        cursor = NULL;
        json_object *listed = call_blocking(s, "tools/list", params), *tools;
        if (!listed)
            return -1;
        int rc = 0;
        const char *next = dsh_json_get_text(listed, "nextCursor");
        if ((tools = dsh_json_get_array(listed, "tools")))
            for (size_t i = 0; rc == 0 && i < json_object_array_length(tools); i++)
                rc = add_tool(s, json_object_array_get_idx(tools, i));
        if (next)
            cursor = strdup(next);
        json_object_put(listed);
        if (rc < 0 || !cursor) {
            free(cursor); /* a refused page may still name a next one */
            return rc;
        }
    }
    free(cursor);
    return 0;
}

/* ---- answers to the programs' calls ------------------------------------------------------------ */

static struct dshh_mcp_pending *take_pending(struct dshh_mcp_server *s, int64_t id)
{
    for (struct dshh_mcp_pending **link = &s->pending; *link; link = &(*link)->next)
        if ((*link)->sent && (*link)->id == id) {
            struct dshh_mcp_pending *p = *link;
            *link = p->next;
            return p;
        }
    return NULL;
}

static void reject(struct dshh_mcp_server *s, const struct dshh_mcp_pending *p, const char *message)
{
    s->host->provider->reply(s->host->instance, p->run, p->call, false, message, strlen(message));
}

/* Joins the text items of a CallToolResult's content as one JSON string, from their escaped
 * bodies (no decoded copy); notes an item without a type. */
struct joined {
    struct dsh_json_slice first; /* the first text (a JSON string): the value when it is the only one */
    struct dsh_text_buffer json; /* from a second text on: "..." the texts joined by newlines */
    size_t count;
    bool all_text, untyped;
};

static json_object *parse_span(struct dsh_json_slice span)
{
    return span.text ? dsh_json_parse_strict(span.text, span.len) : NULL;
}

static bool content_item(void *arg, size_t index, struct dsh_json_slice item)
{
    static const char *const keys[] = {"type", "text", NULL};
    struct joined *j = arg;
    struct dsh_json_slice m[2];
    json_object *type = item.text[0] == '{' && dsh_json_members(item.text, item.len, keys, m) ? parse_span(m[0]) : NULL;
    const char *name = dsh_json_as_text(type);
    bool text = name && !strcmp(name, "text") && m[1].text && m[1].text[0] == '"';
    json_object_put(type);
    if (!name) {
        j->untyped = true;
        return false;
    }
    j->all_text = j->all_text && text;
    if (j->all_text && index == 0) {
        j->first = m[1];
    } else if (j->all_text) {
        if (index == 1) {
            dsh_text_buffer_write(&j->json, (unsigned char *)"\"", 1);
            dsh_text_buffer_write(&j->json, (unsigned char *)j->first.text + 1, j->first.len - 2);
        }
        dsh_text_buffer_write(&j->json, (unsigned char *)"\\n", 2);
        dsh_text_buffer_write(&j->json, (unsigned char *)m[1].text + 1, m[1].len - 2);
    }
    j->count = index + 1;
    return true;
}

/* A CallToolResult (the span of an object) as the call's value: structuredContent when there is
 * one, else the text of an all-text content joined by newlines, else the content array; passed
 * on as the text the server sent. isError rejects with that text. */
static void settle(struct dshh_mcp_server *s, const struct dshh_mcp_pending *p, struct dsh_json_slice result)
{
    static const char *const keys[] = {"content", "structuredContent", "isError", NULL};
    struct dsh_json_slice m[3];
    dsh_json_members(result.text, result.len, keys, m);
    struct joined j = {.all_text = m[0].text && m[0].text[0] == '['};
    if (j.all_text)
        dsh_json_elements(m[0].text, m[0].len, content_item, &j);
    if (j.json.len)
        dsh_text_buffer_write(&j.json, (unsigned char *)"\"", 1);
    struct dsh_json_slice joined = j.count > 1 ? (struct dsh_json_slice){(char *)j.json.data, j.json.len}
                                   : j.count    ? j.first
                                                : (struct dsh_json_slice){"\"\"", 2};
    if (j.untyped) {
        char message[512];
        snprintf(message, sizeof message, UNTYPED_CONTENT_FMT, s->name);
        reject(s, p, message);
    } else if (m[2].len == 4 && !memcmp(m[2].text, "true", 4)) {
        json_object *text = j.all_text ? parse_span(joined) : NULL;
        const char *t = dsh_json_as_string(text, NULL);
        char message[1024];
        snprintf(message, sizeof message, "%s", t && *t ? t : "the MCP tool reported an error");
        reject(s, p, message);
        json_object_put(text);
    } else {
        struct dsh_json_slice value = m[1].text ? m[1]
                                      : j.all_text ? joined
                                      : m[0].text     ? m[0]
                                                   : (struct dsh_json_slice){"null", 4};
        s->host->provider->reply(s->host->instance, p->run, p->call, true, value.text, value.len);
    }
    free(j.json.data);
}

/* The answer to a program's call, from the spans of its result and error members. */
static void answer(struct dshh_mcp_server *s, const struct dshh_mcp_pending *p, struct dsh_json_slice result,
                   struct dsh_json_slice error)
{
    static const char *const keys[] = {"message", NULL};
    if (result.text && result.text[0] == '{') {
        settle(s, p, result);
        return;
    }
    struct dsh_json_slice message = {0};
    if (error.text && error.text[0] == '{')
        dsh_json_members(error.text, error.len, keys, &message);
    json_object *parsed = parse_span(message);
    const char *t = dsh_json_as_string(parsed, NULL);
    char text[1024];
    snprintf(text, sizeof text, "%s", t ? t : "the MCP server answered without a result");
    reject(s, p, text);
    json_object_put(parsed);
}

static void send_call(struct dshh_mcp_server *s, struct dshh_mcp_pending *p)
{
    p->sent = true;
    p->id = ++s->next_id;
    json_object *params = json_object_new_object();
    json_object_object_add(params, "name", json_object_new_string(p->tool->name));
    json_object_object_add(params, "arguments", p->arguments);
    p->arguments = NULL;
    json_object *msg = request(p->id, "tools/call", params);
    send_message(s, msg);
    json_object_put(msg);
}

static void enqueue(struct dshh_mcp_server *s, struct dshh_mcp_pending *p)
{
    struct dshh_mcp_pending **tail = &s->pending;
    while (*tail)
        tail = &(*tail)->next;
    p->next = NULL;
    *tail = p;
}

/* Unlinks the calls that were sent (or all of them) as a list of their own, oldest first:
 * rejecting one may end its run, which edits s->pending. */
static struct dshh_mcp_pending *detach(struct dshh_mcp_server *s, bool all)
{
    struct dshh_mcp_pending *taken = NULL, **tail = &taken;
    for (struct dshh_mcp_pending **link = &s->pending; *link;) {
        struct dshh_mcp_pending *p = *link;
        if (!all && !p->sent) {
            link = &p->next;
            continue;
        }
        *link = p->next;
        if (!p->sent)
            s->queued--;
        p->next = NULL;
        *tail = p;
        tail = &p->next;
    }
    return taken;
}

static void reject_each(struct dshh_mcp_server *s, struct dshh_mcp_pending *list, const char *message)
{
    while (list) {
        struct dshh_mcp_pending *p = list;
        list = p->next;
        reject(s, p, message);
        json_object_put(p->arguments);
        free(p);
    }
}

/* ---- the life of a server: exit, restart with back-off, give up (README "Restarts") ---------- */

static int spawn_server(struct dshh_mcp_server *s);
static void on_readable(void *arg, uint32_t events);

/* Ends the current process: stops watching it, closes its pipes and reaps it (killed first when
 * it still runs: it only closed its stdout, or failed the handshake). */
static void end_process(struct dshh_mcp_server *s)
{
    if (s->timer)
        dshh__loop_cancel_timer(s->host->loop, s->timer);
    if (s->watching)
        dshh__loop_remove_fd(s->host->loop, s->from_fd);
    dshh__out_queue_close(&s->out);
    if (s->to_fd >= 0)
        close(s->to_fd);
    if (s->from_fd >= 0)
        close(s->from_fd);
    if (s->pid > 0 && waitpid(s->pid, NULL, WNOHANG) == 0) {
        kill(s->pid, SIGKILL);
        while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    s->timer = 0;
    s->watching = s->failed = false;
    s->to_fd = s->from_fd = -1;
    s->pid = 0;
    s->exited = true;
    dshh__lines_free(&s->lines);
    json_object_put(s->relisted);
    s->relisted = NULL;
}

static void give_up(struct dshh_mcp_server *s)
{
    s->state = DSHH_MCP_GAVE_UP;
    fprintf(stderr, "dsh: MCP server %s: gave up restarting it\n", s->name);
    char message[512];
    snprintf(message, sizeof message, GAVE_UP_FMT, s->name);
    reject_each(s, detach(s, true), message);
}

static void on_restart_due(void *arg);

/* The process exited, closed its stdout or failed to (re)start: the calls sent to it reject, the
 * queued ones wait for the restart the back-off timer makes. */
static void lost(struct dshh_mcp_server *s)
{
    int64_t uptime = s->state == DSHH_MCP_READY ? now_ms() - s->started_ms : 0;
    end_process(s);
    char message[512];
    snprintf(message, sizeof message, EXITED_FMT, s->name);
    reject_each(s, detach(s, false), message);
    int32_t delay = dshh__mcp_restart_delay(&s->strikes, uptime);
    if (delay < 0) {
        give_up(s);
        return;
    }
    int64_t timer = dshh__loop_add_timer(s->host->loop, (uint32_t)delay, on_restart_due, s);
    if (timer < 0) {
        fprintf(stderr, "dsh: MCP server %s: cannot schedule its restart: %s\n", s->name, strerror((int)-timer));
        give_up(s);
        return;
    }
    s->state = DSHH_MCP_RESTART_DUE;
    s->timer = timer;
    fprintf(stderr, "dsh: MCP server %s: restart %d of %d in %d ms\n", s->name, s->strikes, DSHH_MCP_MAX_RESTARTS,
            (int)delay);
}

static void on_handshake_deadline(void *arg)
{
    struct dshh_mcp_server *s = arg;
    s->timer = 0;
    fprintf(stderr, "dsh: MCP server %s: no answer to %s within %d ms\n", s->name,
            s->listing ? "tools/list" : "initialize", HANDSHAKE_MS);
    lost(s);
}

static void on_restart_due(void *arg)
{
    struct dshh_mcp_server *s = arg;
    s->timer = 0;
    s->state = DSHH_MCP_HANDSHAKE;
    s->listing = s->exited = false;
    s->pages = 0;
    if (spawn_server(s) < 0 || dshh__loop_add_fd(s->host->loop, s->from_fd, EPOLLIN, on_readable, s) < 0) {
        lost(s);
        return;
    }
    s->watching = true;
    int64_t timer = dshh__loop_add_timer(s->host->loop, HANDSHAKE_MS, on_handshake_deadline, s);
    if (timer < 0) {
        lost(s);
        return;
    }
    s->timer = timer;
    send_request(s, "initialize", initialize_params());
}

static bool relisted(const struct dshh_mcp_server *s, const char *name)
{
    for (size_t i = 0; i < json_object_array_length(s->relisted); i++)
        if (!strcmp(dsh_json_as_text(json_object_array_get_idx(s->relisted, i)), name))
            return true;
    return false;
}

/* The restarted server is initialized and listed its tools. Programs were told the tools when
 * dsh mcp started: one it no longer lists rejects its calls, a new one stays out of reach. The
 * queued calls go out in the order they came. */
static void ready(struct dshh_mcp_server *s)
{
    dshh__loop_cancel_timer(s->host->loop, s->timer);
    s->timer = 0;
    s->state = DSHH_MCP_READY;
    fprintf(stderr, "dsh: MCP server %s restarted (pid %ld)\n", s->name, (long)s->pid);
    for (size_t t = 0; t < s->ntools; t++) {
        s->tools[t].missing = !relisted(s, s->tools[t].name);
        if (s->tools[t].missing)
            fprintf(stderr, "dsh: MCP server %s no longer offers the tool %s; calls to it reject\n", s->name,
                    s->tools[t].name);
    }
    for (size_t i = 0; i < json_object_array_length(s->relisted); i++) {
        const char *name = dsh_json_as_text(json_object_array_get_idx(s->relisted, i));
        bool known = false;
        for (size_t t = 0; t < s->ntools && !known; t++)
            known = !strcmp(s->tools[t].name, name);
        if (!known)
            fprintf(stderr, "dsh: MCP server %s now offers the tool %s, which programs cannot call\n", s->name, name);
    }
    json_object_put(s->relisted);
    s->relisted = NULL;
    struct dshh_mcp_pending *queue = detach(s, true), *refused = NULL, **refused_tail = &refused;
    while (queue) {
        struct dshh_mcp_pending *p = queue;
        queue = p->next;
        p->next = NULL;
        if (p->tool->missing || dshh__out_queue_waiting(&s->out) >= MAX_UNREAD) {
            *refused_tail = p;
            refused_tail = &p->next;
        } else {
            enqueue(s, p);
            send_call(s, p);
        }
    }
    while (refused) {
        struct dshh_mcp_pending *p = refused;
        refused = p->next;
        char message[512];
        if (p->tool->missing)
            snprintf(message, sizeof message, MISSING_TOOL_FMT, s->name, p->tool->name);
        else
            snprintf(message, sizeof message, NOT_READING_FMT, s->name, dshh__out_queue_waiting(&s->out) >> 20);
        reject(s, p, message);
        json_object_put(p->arguments);
        free(p);
    }
}

/* An answer during the restart handshake. A failure only marks the server: it is ended once the
 * current read is fed (the line buffer is in use). */
static void handshake_step(struct dshh_mcp_server *s, json_object *response)
{
    json_object *result = result_of(s, s->listing ? "tools/list" : "initialize", response), *tools;
    if (!result || (!s->listing && initialized(s, result) < 0)) {
        json_object_put(result);
        s->failed = true;
        return;
    }
    if (!s->listing) {
        json_object_put(result);
        s->listing = true;
        s->relisted = json_object_new_array();
        s->pages = 1;
        send_request(s, "tools/list", tools_page_params(NULL));
        return;
    }
    if ((tools = dsh_json_get_array(result, "tools")))
        for (size_t i = 0; i < json_object_array_length(tools); i++) {
            const char *name = dsh_json_get_text(json_object_array_get_idx(tools, i), "name");
            if (name) /* only names a program could have been told (add_tool) */
                json_object_array_add(s->relisted, json_object_new_string(name));
        }
    const char *next = dsh_json_get_text(result, "nextCursor");
    bool more = next && s->pages < MAX_TOOL_PAGES;
    if (more) {
        s->pages++;
        send_request(s, "tools/list", tools_page_params(next));
    }
    json_object_put(result);
    if (!more)
        ready(s);
}

/* A message that is no answer to a program's call (a request, a handshake answer): read as a
 * tree, which MAX_TREE_NODES bounds. */
static void on_message(struct dshh_mcp_server *s, json_object *msg)
{
    json_object *id = dsh_json_member(msg, "id");
    int64_t n;
    if (dsh_json_has(msg, "method")) {
        answer_server_request(s, msg, id);
        return;
    }
    if (s->state == DSHH_MCP_HANDSHAKE && dsh_json_as_int64(id, INT64_MIN, INT64_MAX, &n) && n == s->awaited_id)
        handshake_step(s, msg);
}

/* A line as a JSON-RPC message (NULL: NULL with a diagnostic): checked without a tree first, so
 * a tree is only built of one within MAX_TREE_NODES values. */
static json_object *message_tree(struct dshh_mcp_server *s, const char *line, size_t len, size_t nodes)
{
    if (nodes > MAX_TREE_NODES) {
        fprintf(stderr, "dsh: MCP server %s sent a message of %zu JSON values; dsh reads at most %d\n", s->name,
                nodes, MAX_TREE_NODES);
        return NULL;
    }
    return dsh_json_parse_strict(line, len);
}

static void on_server_line(void *arg, const char *line, size_t len)
{
    static const char *const keys[] = {"id", "method", "result", "error", NULL};
    struct dshh_mcp_server *s = arg;
    struct dsh_json_slice m[4];
    size_t nodes;
    if (!line || !line_is_json(line, len, &nodes) || !dsh_json_members(line, len, keys, m)) {
        fprintf(stderr, "dsh: MCP server %s sent a line that is not a JSON-RPC message\n", s->name);
        return;
    }
    if (s->failed || !m[0].text)
        return; /* notifications: nothing dsh needs */
    if (!m[1].text && s->state != DSHH_MCP_HANDSHAKE) {
        /* An answer to a program's call: its result is passed on as the text the server sent. */
        json_object *id = m[0].text[0] == '-' || (m[0].text[0] >= '0' && m[0].text[0] <= '9') ? parse_span(m[0]) : NULL;
        int64_t n;
        struct dshh_mcp_pending *p = dsh_json_as_int64(id, INT64_MIN, INT64_MAX, &n) ? take_pending(s, n) : NULL;
        json_object_put(id);
        if (p) /* else the run ended meanwhile */
            answer(s, p, m[2], m[3]);
        free(p);
        return;
    }
    json_object *msg = message_tree(s, line, len, nodes);
    if (msg)
        on_message(s, msg);
    json_object_put(msg);
}

static void on_readable(void *arg, uint32_t events)
{
    (void)events;
    struct dshh_mcp_server *s = arg;
    bool open = dshh__lines_read(&s->lines, s->from_fd, on_server_line, s);
    if (open && !s->failed)
        return;
    if (!open)
        fprintf(stderr, "dsh: MCP server %s closed its stdout\n", s->name);
    lost(s);
}

bool dshh__mcp_downstream_call(struct dshh_mcp_downstream *ds, dsh_run_id run, uint64_t call,
                               const char *global, const char *name, const char *args_json, size_t args_len)
{
    struct dshh_mcp_server *s = NULL;
    for (size_t i = 0; i < ds->n && !s; i++)
        if (!strcmp(ds->servers[i].ident, global))
            s = &ds->servers[i];
    if (!s)
        return false;
    const struct dshh_mcp_tool *tool = NULL;
    for (size_t i = 0; i < s->ntools && !tool; i++)
        if (!strcmp(s->tools[i].ident, name))
            tool = &s->tools[i];
    struct dshh_mcp_pending probe = {.run = run, .call = call};
    json_object *args = dsh_json_parse_strict_value(args_json, args_len);
    size_t nargs = json_object_is_type(args, json_type_array) ? json_object_array_length(args) : 0;
    json_object *input = nargs ? json_object_array_get_idx(args, 0) : NULL;
    /* A server that is restarting (or whose stdin just broke: its exit is on the way) gets the
     * call once it is ready again. */
    bool now = s->state == DSHH_MCP_READY && !s->exited;
    char problem[512] = "";
    if (!tool)
        snprintf(problem, sizeof problem, "no such MCP tool");
    else if (nargs > 1 || (input && !json_object_is_type(input, json_type_object)))
        snprintf(problem, sizeof problem, "an MCP tool takes one argument, an object");
    else if (s->state == DSHH_MCP_GAVE_UP)
        snprintf(problem, sizeof problem, GAVE_UP_FMT, s->name);
    else if (s->state == DSHH_MCP_READY && tool->missing)
        snprintf(problem, sizeof problem, MISSING_TOOL_FMT, s->name, tool->name);
    else if (!now && s->queued >= MAX_QUEUED)
        snprintf(problem, sizeof problem, QUEUE_FULL_FMT, s->name, MAX_QUEUED);
    else if (now && dshh__out_queue_waiting(&s->out) >= MAX_UNREAD)
        snprintf(problem, sizeof problem, NOT_READING_FMT, s->name, dshh__out_queue_waiting(&s->out) >> 20);
    struct dshh_mcp_pending *p = *problem ? NULL : calloc(1, sizeof(*p));
    if (!p) {
        reject(s, &probe, *problem ? problem : "dsh: out of memory");
        json_object_put(args);
        return true;
    }
    *p = (struct dshh_mcp_pending){.run = run, .call = call, .tool = tool,
                                   .arguments = input ? json_object_get(input) : json_object_new_object()};
    enqueue(s, p);
    if (now)
        send_call(s, p);
    else
        s->queued++;
    json_object_put(args);
    return true;
}

void dshh__mcp_downstream_run_ended(struct dshh_mcp_downstream *ds, dsh_run_id run)
{
    for (size_t i = 0; i < ds->n; i++) {
        struct dshh_mcp_server *s = &ds->servers[i];
        for (struct dshh_mcp_pending **link = &s->pending; *link;) {
            struct dshh_mcp_pending *p = *link;
            if (p->run != run) {
                link = &p->next;
                continue;
            }
            *link = p->next;
            if (p->sent) {
                json_object *note = json_object_new_object(), *params = json_object_new_object();
                json_object_object_add(note, "method", json_object_new_string("notifications/cancelled"));
                json_object_object_add(params, "requestId", json_object_new_int64(p->id));
                json_object_object_add(params, "reason", json_object_new_string("the program's run ended"));
                json_object_object_add(note, "params", params);
                send_message(s, note);
                json_object_put(note);
            } else {
                s->queued--;
            }
            json_object_put(p->arguments);
            free(p);
        }
    }
}

/* ---- declarations and bindings ------------------------------------------------------------------ */

void dshh__mcp_downstream_bindings(const struct dshh_mcp_downstream *ds, json_object *bindings)
{
    for (size_t i = 0; i < ds->n; i++) {
        const struct dshh_mcp_server *s = &ds->servers[i];
        json_object *ns = json_object_new_object(), *fns = json_object_new_array();
        for (size_t t = 0; t < s->ntools; t++)
            json_object_array_add(fns, json_object_new_string(s->tools[t].ident));
        json_object_object_add(ns, "global", json_object_new_string(s->ident));
        json_object_object_add(ns, "functions", fns);
        json_object_object_add(ns, "errorClass", json_object_new_string(DSHH_MCP_ERROR_CLASS));
        json_object_array_add(bindings, ns);
    }
}

/* The named types of a tool's input and output schemas (prefixed "namespace_tool_"). */
struct tool_types {
    struct dshh_mcp_schema_types *input, *output;
};

static int tool_types_open(const struct dshh_mcp_server *s, const struct dshh_mcp_tool *tool, json_object *taken,
                           struct tool_types *tt)
{
    char *prefix = NULL;
    *tt = (struct tool_types){0};
    if (asprintf(&prefix, "%s_%s_", s->ident, tool->ident) < 0)
        return -1;
    if (tool->input_schema)
        tt->input = dshh__mcp_schema_types_new(tool->input_schema, prefix, "Input", taken);
    if (tool->output_schema)
        tt->output = dshh__mcp_schema_types_new(tool->output_schema, prefix, "Output", taken);
    free(prefix);
    return (tool->input_schema && !tt->input) || (tool->output_schema && !tt->output) ? -1 : 0;
}

static void tool_types_close(struct tool_types *tt)
{
    dshh__mcp_schema_types_free(tt->input);
    dshh__mcp_schema_types_free(tt->output);
    *tt = (struct tool_types){0};
}

static void tool_aliases(const struct tool_types *tt, FILE *out)
{
    if (tt->input)
        dshh__mcp_schema_aliases(tt->input, out);
    if (tt->output)
        dshh__mcp_schema_aliases(tt->output, out);
}

/* The tool's doc comment and signature, as a member of its namespace's type. */
static void tool_member(const struct dshh_mcp_tool *tool, const struct tool_types *tt, FILE *out, int indent)
{
    char *doc = NULL;
    if (strcmp(tool->name, tool->ident) != 0) {
        if (asprintf(&doc, "%s%s(MCP tool \"%s\")", tool->description ? tool->description : "",
                     tool->description ? " " : "", tool->name) < 0)
            doc = NULL;
    }
    dshh__mcp_doc_comment(doc ? doc : tool->description, out, indent);
    free(doc);
    json_object *props = dsh_json_get_object(tool->input_schema, "properties");
    json_object *required = dsh_json_get_array(tool->input_schema, "required");
    bool composed = dsh_json_has(tool->input_schema, "$ref") || dsh_json_has(tool->input_schema, "allOf") ||
                    dsh_json_has(tool->input_schema, "anyOf") || dsh_json_has(tool->input_schema, "oneOf");
    bool optional = !composed && (!props || json_object_object_length(props) == 0 || !required ||
                                  json_object_array_length(required) == 0);
    fprintf(out, "%*s%s(input%s: ", indent, "", tool->ident, optional ? "?" : "");
    if (tt->input)
        dshh__mcp_schema_root_type(tt->input, out, indent);
    else
        fputs("unknown", out);
    fputs("): Promise<", out);
    if (tt->output)
        dshh__mcp_schema_root_type(tt->output, out, indent);
    else
        fputs("unknown", out);
    fputs(">;\n", out);
}

void dshh__mcp_downstream_declare(const struct dshh_mcp_downstream *ds, FILE *out)
{
    json_object *taken = json_object_new_object(); /* the named types so far: unique in the whole text */
    for (size_t i = 0; i < ds->n; i++) {
        const struct dshh_mcp_server *s = &ds->servers[i];
        struct tool_types *types = calloc(s->ntools ? s->ntools : 1, sizeof(*types));
        for (size_t t = 0; types && t < s->ntools; t++)
            if (tool_types_open(s, &s->tools[t], taken, &types[t]) == 0)
                tool_aliases(&types[t], out);
        fprintf(out, "/** The tools of the MCP server \"%s\". A call resolves to the tool's structuredContent, "
                     "else its text; a failed call throws " DSHH_MCP_ERROR_CLASS " (its member property names "
                     "the function). */\ndeclare const %s: {\n", s->name, s->ident);
        for (size_t t = 0; t < s->ntools; t++) {
            tool_member(&s->tools[t], types ? &types[t] : &(struct tool_types){0}, out, 2);
            if (types)
                tool_types_close(&types[t]);
        }
        fputs("};\n", out);
        free(types);
    }
    json_object_put(taken);
}

int dshh__mcp_downstream_declare_tool(const struct dshh_mcp_downstream *ds, const char *qualified, FILE *out)
{
    const char *dot = strchr(qualified, '.');
    if (!dot)
        return -1;
    /* The names of the whole declaration: every tool before this one names its types first. */
    json_object *taken = json_object_new_object();
    int rc = -1;
    bool found = false;
    for (size_t i = 0; !found && i < ds->n; i++) {
        const struct dshh_mcp_server *s = &ds->servers[i];
        bool server = strlen(s->ident) == (size_t)(dot - qualified) && !strncmp(s->ident, qualified, dot - qualified);
        for (size_t t = 0; t < s->ntools; t++) {
            struct tool_types tt;
            bool open = tool_types_open(s, &s->tools[t], taken, &tt) == 0;
            found = server && !strcmp(s->tools[t].ident, dot + 1);
            if (found && open) {
                tool_aliases(&tt, out);
                fprintf(out, "/** A tool of the MCP server \"%s\"; a failed call throws " DSHH_MCP_ERROR_CLASS
                             ". */\ndeclare const %s: {\n", s->name, s->ident);
                tool_member(&s->tools[t], &tt, out, 2);
                fputs("};\n", out);
                rc = 0;
            }
            tool_types_close(&tt);
            if (found)
                break;
        }
    }
    json_object_put(taken);
    return rc;
}

/* ---- start and stop ------------------------------------------------------------------------------ */

static size_t items(const yaml_node_t *list)
{
    return list && list->type == YAML_SEQUENCE_NODE
               ? (size_t)(list->data.sequence.items.top - list->data.sequence.items.start)
               : 0;
}

static char **server_env(yaml_document_t *doc, yaml_node_t *list)
{
    size_t extra = items(list);
    char **env = calloc(sizeof(inherited_env) / sizeof(*inherited_env) + extra + 1, sizeof(*env));
    size_t n = 0;
    for (size_t i = 0; env && inherited_env[i]; i++) {
        const char *v = getenv(inherited_env[i]);
        if (v && asprintf(&env[n], "%s=%s", inherited_env[i], v) >= 0)
            n++;
    }
    for (size_t i = 0; env && i < extra; i++) {
        const char *entry = dshh__yaml_scalar(yaml_document_get_node(doc, list->data.sequence.items.start[i]));
        if (entry && (env[n] = strdup(entry)))
            n++;
    }
    return env;
}

/* Copies the server's command, args and environment: every restart uses the same. */
static int command_line(struct dshh_mcp_server *s, yaml_document_t *doc, yaml_node_t *map)
{
    const char *command = dshh__yaml_scalar(dsh_mapping_get_cstr(doc, map, "command"));
    yaml_node_t *args = dsh_mapping_get_cstr(doc, map, "args");
    size_t nargs = items(args), n = 1;
    s->argv = calloc(nargs + 2, sizeof(*s->argv));
    s->env = server_env(doc, dsh_mapping_get_cstr(doc, map, "env"));
    if (!s->argv || !s->env || !command || !(s->argv[0] = strdup(command)))
        return -1;
    for (size_t i = 0; i < nargs; i++) {
        const char *arg = dshh__yaml_scalar(yaml_document_get_node(doc, args->data.sequence.items.start[i]));
        if (arg && !(s->argv[n++] = strdup(arg)))
            return -1;
    }
    return 0;
}

static void free_strings(char **strings)
{
    for (size_t i = 0; strings && strings[i]; i++)
        free(strings[i]);
    free(strings);
}

static int spawn_server(struct dshh_mcp_server *s)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, rc = -1;
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
        fprintf(stderr, "dsh: cannot start the MCP server %s: %s\n", s->name, strerror(errno));
        goto done;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    int err = posix_spawnp(&s->pid, s->argv[0], &fa, NULL, s->argv, s->env);
    posix_spawn_file_actions_destroy(&fa);
    if (err) {
        s->pid = 0;
        fprintf(stderr, "dsh: cannot start the MCP server %s (%s): %s\n", s->name, s->argv[0], strerror(err));
        goto done;
    }
    s->started_ms = now_ms();
    s->to_fd = in[1];
    s->from_fd = out[0];
    in[1] = out[0] = -1;
    if ((rc = dshh__out_queue_open(&s->out, s->host->loop, s->to_fd, MAX_UNREAD)) < 0)
        fprintf(stderr, "dsh: cannot start the MCP server %s: %s\n", s->name, strerror(-rc));
done:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
    }
    return rc;
}

int dshh__mcp_downstream_start(struct dshh_mcp_downstream *ds, struct dshh_host *host,
                               const struct dshh_profile *profile, const char *const *taken)
{
    *ds = (struct dshh_mcp_downstream){0};
    const struct dshh_row *row = NULL;
    for (size_t i = 0; i < profile->nrows && !row; i++)
        if (!profile->rows[i].disabled && !strcmp(profile->rows[i].name, DSHH_NAME_MCP_BINDINGS))
            row = &profile->rows[i];
    if (!row || !row->config)
        return 0;
    yaml_document_t *doc = (yaml_document_t *)&(row->config_layer ? row->config_layer : row->layer)->doc;
    yaml_node_t *list = dsh_mapping_get_cstr(doc, row->config, "servers");
    size_t n = items(list);
    size_t ntaken = 0;
    while (taken && taken[ntaken])
        ntaken++;
    ds->servers = calloc(n + 1, sizeof(*ds->servers));
    const char **names = calloc(ntaken + n + 1, sizeof(*names));
    if (!ds->servers || !names) {
        free(names);
        return -1;
    }
    memcpy(names, taken, ntaken * sizeof(*names));
    /* The SIGPIPE of a server that exits early must not end dsh: its write fails instead. */
    signal(SIGPIPE, SIG_IGN);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        yaml_node_t *map = yaml_document_get_node(doc, list->data.sequence.items.start[i]);
        struct dshh_mcp_server *s = &ds->servers[ds->n];
        *s = (struct dshh_mcp_server){.host = host, .to_fd = -1, .from_fd = -1, .lines = {.max = MAX_MESSAGE},
                                      .out = {.fd = -1, .saved_flags = -1}};
        s->name = strdup(dshh__yaml_scalar(dsh_mapping_get_cstr(doc, map, "name")));
        s->ident = s->name ? dshh__mcp_identifier(s->name, DSH_BINDING_GLOBAL, names) : NULL;
        ds->n++;
        if (!s->ident || command_line(s, doc, map) < 0 || spawn_server(s) < 0 || handshake(s) < 0 ||
            list_tools(s) < 0) {
            rc = -1;
            break;
        }
        names[ntaken + i] = s->ident;
        if (dshh__loop_add_fd(host->loop, s->from_fd, EPOLLIN, on_readable, s) < 0) {
            rc = -1;
            break;
        }
        s->watching = true;
    }
    free(names);
    return rc;
}

void dshh__mcp_downstream_stop(struct dshh_mcp_downstream *ds)
{
    for (size_t i = 0; i < ds->n; i++) {
        struct dshh_mcp_server *s = &ds->servers[i];
        if (s->to_fd >= 0) {
            dshh__out_queue_close(&s->out);
            close(s->to_fd); /* EOF on its stdin: the stdio transport's way to end a server */
            s->to_fd = -1;
        }
        int64_t deadline = now_ms() + STOP_GRACE_MS;
        while (s->pid > 0 && now_ms() < deadline) {
            if (waitpid(s->pid, NULL, WNOHANG) != 0) {
                s->pid = 0;
                break;
            }
            struct timespec pause = {.tv_nsec = 10 * 1000000L};
            nanosleep(&pause, NULL);
        }
        end_process(s); /* kills what is left, also a server mid-restart */
        char message[512];
        snprintf(message, sizeof message, EXITED_FMT, s->name);
        reject_each(s, detach(s, true), message);
        for (size_t t = 0; t < s->ntools; t++) {
            free(s->tools[t].name);
            free(s->tools[t].ident);
            free(s->tools[t].description);
            json_object_put(s->tools[t].input_schema);
            json_object_put(s->tools[t].output_schema);
        }
        free(s->tools);
        free_strings(s->argv);
        free_strings(s->env);
        free(s->name);
        free(s->ident);
    }
    free(ds->servers);
    *ds = (struct dshh_mcp_downstream){0};
}

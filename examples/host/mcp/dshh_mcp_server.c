/* `dsh mcp` on stdio: one session (dshh_mcp_session.c) whose messages are the lines of stdin and
 * stdout (newline-delimited JSON-RPC 2.0). It ends at stdin EOF, at a stop signal, or when the
 * client stops reading; then its runs stop, its owner is released and dsh exits.
 * examples/host/README.md, "dsh mcp". */
#include "dshh_mcp_server.h"

#include "dshh_lines.h"
#include "dshh_mcp_session.h"
#include "dshh_out_queue.h"
#include "dshh_output_gate.h"
#include "dshh_serve_events.h"
#include "dshh_stop_signals.h"
#include "dshh_usage.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_LINE ((size_t)256 << 20)
/* Bytes of answers and progress the client left unread at which dsh drops it (README "Peers that
 * stop reading"). */
#define MAX_UNREAD ((size_t)64 << 20)
#define DROPPED_WHY "the MCP client stopped reading dsh's output"

struct stdio_mcp {
    struct dshh_host *host;
    struct dshh_mcp_session *session;
    struct dshh_lines lines;
    bool eof;
    int stop_signal; /* SIGTERM or SIGINT ended the session: dsh exits 128 + it */
    struct dshh_out_queue out; /* stdout */
    struct dshh_output_gate gate; /* pauses runs reporting progress while the client's queue is high */
    bool dropped; /* the client left MAX_UNREAD bytes unread: nothing more is written */
};

/* The session ended (stdin closed, a stop signal, a client that stopped reading). */
static void end(struct stdio_mcp *s, const char *why)
{
    if (s->eof)
        return;
    s->eof = true;
    dshh__loop_remove_fd(s->host->loop, STDIN_FILENO);
    dshh__mcp_session_end(s->session, why);
}

static void on_drop_due(void *arg)
{
    end(arg, DROPPED_WHY);
}

static void send_message(void *arg, json_object *msg, dsh_run_id progress_of)
{
    struct stdio_mcp *s = arg;
    if (s->dropped)
        return;
    const char *text = dshh__jstr(msg);
    struct iovec iov[] = {{(char *)text, strlen(text)}, {"\n", 1}};
    /* A vanished client is noticed at stdin EOF; one that stops reading is dropped: the session
     * ends as at stdin EOF (from the loop, not inside a provider callback). */
    int rc = dshh__out_queue_write(&s->out, iov, 2);
    if (rc == 0 && progress_of)
        dshh__output_gate_check(&s->gate, progress_of);
    if (rc != -ENOBUFS)
        return;
    s->dropped = true;
    fprintf(stderr, "dsh: the MCP client left %zu MiB of dsh's output unread; dsh dropped it\n",
            s->out.max >> 20);
    if (dshh__loop_add_timer(s->host->loop, 0, on_drop_due, s) < 0)
        end(s, DROPPED_WHY);
}

static void on_finished(void *arg)
{
    struct stdio_mcp *s = arg;
    dshh__loop_quit(s->host->loop);
}

static const struct dshh_mcp_sink sink = {.send = send_message, .finished = on_finished};

static void on_line(void *arg, const char *line, size_t len)
{
    struct stdio_mcp *s = arg;
    if (!line)
        dshh__mcp_session_error(s->session, -32700,
                                "message longer than dsh accepts (or out of memory)");
    else
        dshh__mcp_session_text(s->session, line, len);
}

static void on_stdin(void *arg, uint32_t events)
{
    (void)events;
    struct stdio_mcp *s = arg;
    if (!dshh__lines_read(&s->lines, STDIN_FILENO, on_line, s))
        end(s, "the MCP session ended");
}

static void on_stop_signal(void *arg, int sig)
{
    struct stdio_mcp *s = arg;
    if (s->stop_signal)
        return;
    s->stop_signal = sig;
    end(s, sig == SIGINT ? "dsh received SIGINT" : "dsh received SIGTERM");
}

int dshh__cmd_mcp(struct dshh_host *host, const struct dshh_profile *profile)
{
    signal(SIGPIPE, SIG_IGN);
    struct stdio_mcp s = {.host = host, .lines = {.max = MAX_LINE}};
    struct dshh_mcp_shared shared;
    char owner[64];
    int status = DSHH_EXIT_USAGE;
    int rc = dshh__out_queue_open(&s.out, host->loop, STDOUT_FILENO, MAX_UNREAD);
    if (rc < 0) {
        fprintf(stderr, "dsh: cannot write to stdout: %s\n", strerror(-rc));
        return status;
    }
    dshh__output_gate_init(&s.gate, host, &s.out);
    snprintf(owner, sizeof owner, "mcp-session-%ld", (long)getpid());
    if (dshh__mcp_shared_open(&shared, host, profile) < 0)
        goto out;
    if (!(s.session = dshh__mcp_session_new(&shared, NULL, owner, &sink, &s))) {
        fprintf(stderr, "dsh: out of memory\n");
        goto out;
    }
    rc = dshh__loop_watch_input(host->loop, STDIN_FILENO, on_stdin, &s, &s.eof);
    if (rc == 0 && (rc = dshh__stop_signals_watch(host->loop, on_stop_signal, &s)) < 0)
        dshh__loop_remove_fd(host->loop, STDIN_FILENO);
    if (rc < 0) {
        fprintf(stderr, "dsh: cannot watch stdin and SIGTERM/SIGINT: %s\n", strerror(-rc));
        goto out;
    }
    rc = dshh__loop_run(host->loop);
    dshh__stop_signals_unwatch(host->loop);
    if (rc < 0) {
        fprintf(stderr, "dsh: the event loop failed: %s\n", strerror(-rc));
        /* Calls still point at the session: unload now so their on_done cannot outlive it. */
        dshh__host_unload(host);
        goto out;
    }
    status = s.stop_signal ? DSHH_EXIT_SIGNAL(s.stop_signal) : s.dropped ? DSHH_EXIT_FAILURE : DSHH_EXIT_OK;
out:
    if (!s.dropped)
        dshh__out_queue_flush(&s.out); /* the last answers, now that the loop has ended */
    dshh__output_gate_close(&s.gate);
    dshh__out_queue_close(&s.out);
    dshh__mcp_session_free(s.session);
    dshh__mcp_shared_close(&shared);
    dshh__lines_free(&s.lines);
    return status;
}

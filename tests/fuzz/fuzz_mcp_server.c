/* dsh as the MCP client of a downstream server (examples/host/mcp/dshh_mcp_downstream.c) with any
 * server input: the input is the script of mcp_peer.c, the dsh-mcp-bindings server "peer" (its
 * answers to the handshake, tools/list pages, calls; notifications and requests of its own; an
 * exit where it leaves a request unanswered, after which dsh restarts it and later lives answer
 * well). Through the real host over the provider double, a fixed MCP client initializes, lists
 * tools and calls run_code twice, each run calling one of the peer's tools (peer.t, peer.u), and
 * keeps stdin open until both calls are answered. Properties: either dsh mcp refuses to start
 * (exit 2, nothing written) or it exits 0 having answered each of the client's four requests
 * exactly once; every line it writes to the client and to the server is one JSON-RPC 2.0 message
 * (mcp_jsonrpc.c); a call is answered (else the client waits: a hang is the finding). */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_mcp_server.h"
#include "dshh_text_file.h"
#include "dshh_usage.h"
#include "fuzz_host.h"
#include "fuzz_target.h"
#include "mcp_jsonrpc.h"

#ifndef FAKE_PROVIDER_PATH
#error "meson passes FAKE_PROVIDER_PATH (the built fake_provider.c)"
#endif
#ifndef MCP_PEER_PATH
#error "meson passes MCP_PEER_PATH (the built mcp_peer.c)"
#endif

static const char client_input[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
    "\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"0\"}}}\n"
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":"
    "{\"program\":\"bind peer t [{\\\"q\\\":1}]\",\"description\":\"t\"}}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":"
    "{\"program\":\"bind peer u\",\"description\":\"u\"}}}\n";
#define REQUESTS 4

static struct dshh_profile profile;
static char state[] = "/tmp/dsh-fuzz-peer-XXXXXX";
static char script[4096], lives[4096], received[4096];

static int mcp(struct dshh_host *host, void *arg)
{
    (void)arg;
    return dshh__cmd_mcp(host, &profile);
}

static void remove_state(void)
{
    unlink(script);
    unlink(lives);
    unlink(received);
    rmdir(state);
}

/* The peer lives briefly and exits by the hundreds: its own leak check at exit (a sanitizer build)
 * would take most of the target's time. */
static void compose_profile(void)
{
    fuzz_check(mkdtemp(state) != NULL, "mkdtemp");
    atexit(remove_state);
    snprintf(script, sizeof script, "%s/script", state);
    snprintf(lives, sizeof lives, "%s/lives", state);
    snprintf(received, sizeof received, "%s/received", state);
    char rows[16384];
    snprintf(rows, sizeof rows,
             "- {id: mcp-bindings, name: dsh-mcp-bindings, config: {servers: [{name: peer, command: '%s', "
             "args: ['%s', '%s'], env: ['ASAN_OPTIONS=detect_leaks=0']}]}}\n",
             MCP_PEER_PATH, script, state);
    fuzz_host_profile(&profile, FAKE_PROVIDER_PATH, rows);
}

/* The times the client's request id was answered, by id (1..REQUESTS). */
struct answers {
    int count[REQUESTS + 1];
};

static void count_answer(void *arg, const char *line, size_t len)
{
    struct answers *a = arg;
    mcp_jsonrpc_check(NULL, line, len);
    json_object *msg = dsh_json_parse_strict(line, len);
    int64_t id;
    if (!dsh_json_get_text(msg, "method") && dsh_json_get_int64(msg, "id", 1, REQUESTS, &id))
        a->count[id]++;
    json_object_put(msg);
}

/* True once both calls are answered. */
static bool calls_answered(void *arg, const char *line, size_t len)
{
    struct answers *a = arg;
    count_answer(a, line, len);
    return a->count[3] && a->count[4];
}

static void write_file(const char *path, const void *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    fuzz_check(fd >= 0 && write(fd, data, size) == (ssize_t)size && close(fd) == 0, "%s", path);
}

static void check_received(void)
{
    size_t len;
    char *text = dshh__read_text_file(received, &len);
    if (!text)
        return; /* the server never read a line */
    fuzz_host_lines(text, len, mcp_jsonrpc_check, NULL);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!profile.nrows)
        compose_profile();
    if (size > 65536)
        return 0;
    write_file(script, data, size);
    unlink(lives);
    unlink(received);
    struct answers a = {0};
    struct fuzz_client client = {.input = (const uint8_t *)client_input, .size = sizeof client_input - 1,
                                 .on_line = calls_answered, .arg = &a};
    char *out;
    size_t len;
    int rc = fuzz_host_command(&profile, mcp, NULL, &client, &out, &len);
    if (getenv("DSH_FUZZ_VERBOSE"))
        fprintf(stderr, "exit %d\n%.*s", rc, (int)len, out);
    fuzz_check(rc == 0 || (rc == DSHH_EXIT_USAGE && len == 0), "dsh mcp exited %d", rc);
    if (rc == 0) {
        struct answers written = {0};
        fuzz_host_lines(out, len, count_answer, &written);
        for (int id = 1; id <= REQUESTS; id++)
            fuzz_check(written.count[id] == 1, "request %d answered %d times", id, written.count[id]);
    }
    check_received();
    free(out);
    return 0;
}

/* `dsh mcp` (examples/host/mcp/dshh_mcp_server.c) with any client input as its stdin: the real
 * host (profile, Linux services, demo tools) over the provider double fake_provider.c, one
 * dshh__cmd_mcp per input. The client keeps stdin open until every tools/call it sent with a
 * number or string id was answered (except the ones it cancelled, and programs that name the
 * demonstration sleep, which may outlast any run), so runs end by themselves, not only by the
 * session's end.
 * Properties: dsh mcp exits 0 once stdin ends, and every line it writes is one JSON-RPC 2.0
 * message (mcp_jsonrpc.c); a call is answered (else the client waits: a hang is the finding). */
#include <string.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_mcp_server.h"
#include "fuzz_host.h"
#include "fuzz_target.h"
#include "mcp_jsonrpc.h"

#ifndef FAKE_PROVIDER_PATH
#error "meson passes FAKE_PROVIDER_PATH (the built fake_provider.c)"
#endif

static struct dshh_profile profile;

static int mcp(struct dshh_host *host, void *arg)
{
    (void)arg;
    return dshh__cmd_mcp(host, &profile);
}

/* The ids whose answer the client waits for. */
struct awaited {
    json_object *ids;       /* array */
    json_object *cancelled; /* array of the requestIds of notifications/cancelled */
};

static void note_request(void *arg, const char *line, size_t len)
{
    struct awaited *a = arg;
    json_object *msg = dsh_json_parse_strict(line, len), *id, *params = dsh_json_get_object(msg, "params");
    const char *method = dsh_json_get_text(msg, "method");
    if (method && !strcmp(method, "notifications/cancelled") && json_object_object_get_ex(params, "requestId", &id))
        json_object_array_add(a->cancelled, json_object_get(id));
    json_object *arguments = dsh_json_get_object(params, "arguments");
    const char *program = dsh_json_get_text(arguments, "program");
    bool sleeps = program && strstr(program, "sleep");
    if (method && !strcmp(method, "tools/call") && !sleeps && json_object_object_get_ex(msg, "id", &id) &&
        (json_object_is_type(id, json_type_int) || json_object_is_type(id, json_type_string)))
        json_object_array_add(a->ids, json_object_get(id));
    json_object_put(msg);
}

static bool listed(json_object *array, json_object *id)
{
    for (size_t i = 0; i < json_object_array_length(array); i++)
        if (json_object_equal(json_object_array_get_idx(array, i), id))
            return true;
    return false;
}

/* Whether every awaited id is answered or cancelled. */
static bool all_answered(const struct awaited *a)
{
    for (size_t i = 0; i < json_object_array_length(a->ids); i++)
        if (!listed(a->cancelled, json_object_array_get_idx(a->ids, i)))
            return false;
    return true;
}

/* Crosses out the answered id; true once all are. */
static bool on_line(void *arg, const char *line, size_t len)
{
    struct awaited *a = arg;
    mcp_jsonrpc_check(NULL, line, len); /* at once: a line it cannot read would leave it waiting */
    json_object *msg = dsh_json_parse_strict(line, len), *id;
    if (json_object_object_get_ex(msg, "id", &id) && !json_object_object_get_ex(msg, "method", NULL))
        for (size_t i = json_object_array_length(a->ids); i-- > 0;)
            if (json_object_equal(json_object_array_get_idx(a->ids, i), id))
                json_object_array_del_idx(a->ids, i, 1);
    json_object_put(msg);
    return all_answered(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!profile.nrows)
        fuzz_host_profile(&profile, FAKE_PROVIDER_PATH, "");
    if (size > 65536)
        return 0;
    struct awaited a = {.ids = json_object_new_array(), .cancelled = json_object_new_array()};
    /* Only whole lines are requests: a last line without its newline ends with stdin. */
    const char *last = memrchr(data, '\n', size);
    if (last)
        fuzz_host_lines((const char *)data, (size_t)(last - (const char *)data) + 1, note_request, &a);
    struct fuzz_client client = {.input = data, .size = size, .on_line = on_line, .arg = &a};
    /* Nothing to wait for: stdin ends after the input. */
    if (all_answered(&a))
        client.on_line = NULL;
    char *out;
    size_t len;
    int rc = fuzz_host_command(&profile, mcp, NULL, &client, &out, &len);
    fuzz_check(rc == 0, "dsh mcp exited %d", rc);
    fuzz_host_lines(out, len, mcp_jsonrpc_check, NULL);
    if (getenv("DSH_FUZZ_VERBOSE"))
        fprintf(stderr, "%.*s", (int)len, out);
    free(out);
    json_object_put(a.ids);
    json_object_put(a.cancelled);
    return 0;
}

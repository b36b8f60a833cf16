/* What every line dsh writes to an MCP peer must be (mcp_jsonrpc.h). */
#include "mcp_jsonrpc.h"

#include <string.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "fuzz_target.h"

void mcp_jsonrpc_check(void *arg, const char *line, size_t len)
{
    (void)arg;
    json_object *msg = dsh_json_parse_strict(line, len), *result = NULL, *error = NULL, *code;
    const char *version = dsh_json_get_text(msg, "jsonrpc");
    fuzz_check(json_object_is_type(msg, json_type_object) && version && !strcmp(version, "2.0"),
               "not a JSON-RPC 2.0 object: %.*s", (int)len, line);
    if (!dsh_json_get_text(msg, "method")) {
        bool has_result = json_object_object_get_ex(msg, "result", &result);
        bool has_error = json_object_object_get_ex(msg, "error", &error);
        fuzz_check(json_object_object_get_ex(msg, "id", NULL) && has_result != has_error,
                   "a response needs its id and one of result and error: %.*s", (int)len, line);
        fuzz_check(has_error || json_object_is_type(result, json_type_object), "a result that is no object: %.*s",
                   (int)len, line);
        fuzz_check(has_result || (json_object_object_get_ex(error, "code", &code) &&
                                  json_object_is_type(code, json_type_int) && dsh_json_get_text(error, "message")),
                   "an error without an integer code and a message: %.*s", (int)len, line);
    }
    json_object_put(msg);
}

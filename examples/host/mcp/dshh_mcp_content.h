/* A run result as MCP tool result content (dshh_mcp_content.c). */
#ifndef DSHH_MCP_CONTENT_H
#define DSHH_MCP_CONTENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The note a result ends with when the sandbox refused an operation of the program (%s: the mode). */
#define DSHH_MCP_DENIAL_NOTE                                                                       \
    "the sandbox refused: an operation of the program that %s mode does not allow"

/* The line a result starts with when the state owner's earlier environment was released by the
 * provider (result.retained.released: idleReleaseMs, maxRetainedOwners; %s: its message). */
#define DSHH_MCP_RELEASED_NOTE "note: earlier state is gone: %s"

/* {content: [text, images...], structuredContent?, isError} of a provider result:
 * DSHH_MCP_RELEASED_NOTE first when result.retained.released, then the output text,
 * with show_value the completion value as JSON text on a line of its own (and an object value as
 * structuredContent, {} for any other successful result), the failure as "error (KIND): MESSAGE",
 * and DSHH_MCP_DENIAL_NOTE when result.sandbox.denied; images are read from their files and
 * base64-encoded while the total stays within max_bytes (transfer full). */
json_object *dshh__mcp_tool_result(const char *result_json, size_t len, uint64_t max_bytes,
                                   bool show_value);
/* The same for a background run whose first first_entry output entries were shown already as
 * text: lead (what of that text was not returned yet) comes first, then the entries from
 * first_entry on. */
json_object *dshh__mcp_tool_result_rest(const char *result_json, size_t len, uint64_t max_bytes,
                                        bool show_value, size_t first_entry, const char *lead,
                                        size_t lead_len);
/* The one-line text of an output entry for a progress notification (transfer full). */
char *dshh__mcp_progress_message(const char *entry_json, size_t len);

#endif

/* A run result as MCP tool result content (dshh_mcp_content.c). */
#ifndef DSHH_MCP_CONTENT_H
#define DSHH_MCP_CONTENT_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

/* {content: [text, images...], isError} of a provider result; images are read from their files
 * and base64-encoded while the total stays within max_bytes (transfer full). */
json_object *dshh__mcp_tool_result(const char *result_json, size_t len, uint64_t max_bytes);
/* The one-line text of an output entry for a progress notification (transfer full). */
char *dshh__mcp_progress_message(const char *entry_json, size_t len);

#endif

/* What every line dsh writes to an MCP peer must be (mcp_jsonrpc.c). */
#ifndef DSH_FUZZ_MCP_JSONRPC_H
#define DSH_FUZZ_MCP_JSONRPC_H

#include <stddef.h>

/* A broken property unless line is one strict JSON object with "jsonrpc": "2.0" that is a request
 * or notification (a string method) or a response (an id, and exactly one of an object result and
 * an error object with an integer code and a string message). Its arg is unused (fuzz_host_lines). */
void mcp_jsonrpc_check(void *arg, const char *line, size_t len);

#endif

/* The restart policy of a downstream MCP server (dshh_mcp_restart.c). */
#ifndef DSHH_MCP_RESTART_H
#define DSHH_MCP_RESTART_H

#include <stdint.h>

/* Restarts in a row that failed to start or ended early, after which dsh gives up a server. */
#define DSHH_MCP_MAX_RESTARTS 8
/* A server's life ended after uptime_ms (0 for a start that never became ready): updates
 * *strikes, the count of lives in a row that ended within 30 s, and returns the delay in ms before
 * the next start, or -1 when dsh gives up. */
int32_t dshh__mcp_restart_delay(int *strikes, int64_t uptime_ms);

#endif

/* `dsh mcp`: the reference host as an MCP server on stdio (dshh_mcp_server.c;
 * examples/host/README.md, "dsh mcp"). */
#ifndef DSHH_MCP_SERVER_H
#define DSHH_MCP_SERVER_H

#include "dshh_host.h"

int dshh__cmd_mcp(struct dshh_host *host, const struct dshh_profile *profile);

#endif

/* `dsh mcp --listen ADDR`: MCP sessions over Streamable HTTP (dshh_mcp_http.c).
 * examples/host/README.md, "dsh mcp --listen". */
#ifndef DSHH_MCP_HTTP_H
#define DSHH_MCP_HTTP_H

#include "dshh_host.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DSHH_MCP_HTTP_SESSION_IDLE_MS 1800000
#define DSHH_MCP_HTTP_DRAIN_MS        30000
#define DSHH_MCP_HTTP_MAX_SESSIONS    64
#define DSHH_MCP_HTTP_MAX_CONNECTIONS 256
#define DSHH_MCP_HTTP_MAX_BODY_BYTES  ((int64_t)16 << 20)

struct dshh_mcp_listen_options {
    const char *listen;      /* 127.0.0.1:PORT, [::1]:PORT, unix:PATH */
    bool allow_remote;       /* a non-loopback address is refused without it */
    const char *token_file;  /* the bearer token (required unless the listener is a Unix socket) */
    const char **origins;    /* Origin values allowed (a request with another Origin gets 403) */
    size_t norigins;
    int64_t session_idle_ms; /* a session without requests and runs this long ends */
    int64_t drain_ms;        /* after SIGTERM: how long running calls may still finish */
    bool log_json;           /* the per-run log lines on stderr as JSON */
    int64_t max_sessions, max_connections, max_body_bytes;
};

/* A listening dsh keeps environments for many sessions: unless the profile sets them, the Node
 * runtime row gets idleReleaseMs 600000 and maxRetainedOwners = max_sessions (a layer named
 * "dsh mcp --listen"). 0, or -1 with a message on stderr. */
int dshh__mcp_listen_profile(struct dshh_profile *profile, const struct dshh_mcp_listen_options *opts);
/* Serves until SIGTERM/SIGINT and the drain; returns the exit status. */
int dshh__cmd_mcp_listen(struct dshh_host *host, const struct dshh_profile *profile,
                         const struct dshh_mcp_listen_options *opts);

#endif

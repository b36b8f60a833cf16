/* dsh as an MCP client of each server of the `dsh-mcp-bindings` row (dshh_mcp_downstream.c, the
 * only writer of struct dshh_mcp_server). */
#ifndef DSHH_MCP_DOWNSTREAM_H
#define DSHH_MCP_DOWNSTREAM_H

#include "dshh_host.h"
#include "dshh_lines.h"
#include "dshh_out_queue.h"

#include <json-c/json.h>
#include <stdio.h>
#include <sys/types.h>

/* The MCP protocol revisions dsh speaks, newest first; the first is offered to clients that ask
 * for another (the server side, dshh_mcp_server.c, offers the same). */
#define DSHH_MCP_PROTOCOL_VERSIONS {"2025-11-25", "2025-06-18", "2025-03-26", NULL}

struct dshh_mcp_tool {
    char *name;  /* the server's name for it */
    char *ident; /* the function name programs call */
    char *description;
    json_object *input_schema;  /* owned; may be NULL */
    json_object *output_schema; /* owned; may be NULL */
    bool missing;               /* the restarted server does not list it: calls reject */
};

struct dshh_mcp_pending;

/* Where a server is in its life (examples/host/README.md, "Restarts"). */
enum dshh_mcp_state {
    DSHH_MCP_READY,       /* calls are sent at once */
    DSHH_MCP_RESTART_DUE, /* it exited; the back-off timer starts it again; calls queue */
    DSHH_MCP_HANDSHAKE,   /* restarted, not yet initialized and listed; calls queue */
    DSHH_MCP_GAVE_UP,     /* too many lives in a row ended early; calls reject */
};

struct dshh_mcp_server {
    struct dshh_host *host;
    char *name;  /* as configured */
    char *ident; /* the namespace programs see */
    char **argv, **env; /* how it was started, for restarts */
    pid_t pid;
    int to_fd, from_fd; /* its stdin and stdout (ours: write, read) */
    struct dshh_out_queue out; /* what waits for its stdin (README "Peers that stop reading") */
    struct dshh_lines lines;
    bool watching, exited;
    struct dshh_mcp_tool *tools; /* fixed when dsh mcp starts */
    size_t ntools;
    int64_t next_id;
    struct dshh_mcp_pending *pending; /* tools/call requests without an answer, oldest first */
    size_t queued;                    /* of them, those not yet sent (the server is restarting) */
    enum dshh_mcp_state state;
    int strikes;         /* consecutive lives that failed to start or ended early */
    int64_t started_ms;  /* when the current process was started */
    int64_t timer;       /* the restart delay or the handshake deadline on host->loop; 0: none */
    int64_t awaited_id;  /* the restart handshake's open request */
    bool listing;        /* that request is tools/list (else initialize) */
    bool failed;         /* the restart handshake failed: the server ends after the current read */
    int pages;           /* tools/list pages read in this handshake */
    json_object *relisted; /* tool names the restarted server listed so far */
};

struct dshh_mcp_downstream {
    struct dshh_mcp_server *servers;
    size_t n;
};

/* Starts every server of the enabled dsh-mcp-bindings row (none without one), completes the MCP
 * handshake and lists their tools (blocking, bounded), then watches their stdout on host->loop;
 * a server that exits is restarted from there (examples/host/README.md, "Restarts").
 * taken: identifiers programs already see (the demo namespace); NULL-terminated. Prints a
 * diagnostic and returns -1 on error. */
int dshh__mcp_downstream_start(struct dshh_mcp_downstream *ds, struct dshh_host *host,
                               const struct dshh_profile *profile, const char *const *taken);
/* Closes the servers' stdin, waits a little for them to exit, then kills what is left (also a
 * server mid-restart). */
void dshh__mcp_downstream_stop(struct dshh_mcp_downstream *ds);
/* Appends {global, functions, errorClass} of each server to a run request's bindings. */
void dshh__mcp_downstream_bindings(const struct dshh_mcp_downstream *ds, json_object *bindings);
/* The TypeScript declarations of every server namespace (appended to out): per server, the
 * named types of its tools' schemas (`type NS_TOOL_NAME = ...;`), then `declare const NS: {...}`
 * with one member per tool. */
void dshh__mcp_downstream_declare(const struct dshh_mcp_downstream *ds, FILE *out);
/* The declaration of one tool, qualified "namespace.tool" (the identifiers programs use), valid
 * TypeScript alone: the named types it needs, then `declare const NS: {...}` with its one member,
 * each as in dshh__mcp_downstream_declare (the same names). 0, or -1 when there is no such tool
 * (nothing is written). */
int dshh__mcp_downstream_declare_tool(const struct dshh_mcp_downstream *ds, const char *qualified, FILE *out);
/* When global is a server's namespace: forwards the call as tools/call (its answer becomes the
 * reply) and returns true. */
bool dshh__mcp_downstream_call(struct dshh_mcp_downstream *ds, dsh_run_id run, uint64_t call,
                               const char *global, const char *name, const char *args_json,
                               size_t args_len);
/* The run ended: its unanswered tools/call requests are cancelled downstream and forgotten. */
void dshh__mcp_downstream_run_ended(struct dshh_mcp_downstream *ds, dsh_run_id run);

#endif

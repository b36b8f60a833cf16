/* `dsh mcp`: the reference host as an MCP server on stdio, and an MCP client of the downstream
 * servers of the `dsh-mcp-bindings` row (examples/host/README.md, "dsh mcp"). */
#ifndef DSHH_MCP_H
#define DSHH_MCP_H

#include "dsh_binding_names.h"
#include "dshh.h"

#include <json-c/json.h>
#include <sys/types.h>

/* The MCP protocol revisions dsh speaks, newest first; the first is offered to clients that ask
 * for another. */
#define DSHH_MCP_PROTOCOL_VERSIONS {"2025-11-25", "2025-06-18", "2025-03-26", NULL}
/* The error class of every downstream namespace (a failed tool call rejects with it). */
#define DSHH_MCP_ERROR_CLASS "McpToolError"

/* ---- mcp_server.c ------------------------------------------------------------------------------ */
int dshh__cmd_mcp(struct dshh_host *host, const struct dshh_profile *profile);

/* ---- mcp_downstream.c: dsh as an MCP client of each configured server --------------------------- */
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
/* The TypeScript declarations of every server namespace (appended to out). */
void dshh__mcp_downstream_declare(const struct dshh_mcp_downstream *ds, FILE *out);
/* When global is a server's namespace: forwards the call as tools/call (its answer becomes the
 * reply) and returns true. */
bool dshh__mcp_downstream_call(struct dshh_mcp_downstream *ds, dsh_run_id run, uint64_t call,
                               const char *global, const char *name, const char *args_json,
                               size_t args_len);
/* The run ended: its unanswered tools/call requests are cancelled downstream and forgotten. */
void dshh__mcp_downstream_run_ended(struct dshh_mcp_downstream *ds, dsh_run_id run);

/* ---- mcp_restart.c: the restart policy ------------------------------------------------------- */
/* Restarts in a row that failed to start or ended early, after which dsh gives up a server. */
#define DSHH_MCP_MAX_RESTARTS 8
/* A server's life ended after uptime_ms (0 for a start that never became ready): updates
 * *strikes, the count of lives in a row that ended within 30 s, and returns the delay in ms before
 * the next start, or -1 when dsh gives up. */
int32_t dshh__mcp_restart_delay(int *strikes, int64_t uptime_ms);

/* ---- mcp_typescript.c: names and declarations ------------------------------------------------- */
/* The identifier programs use for an MCP name (a namespace: DSH_BINDING_GLOBAL, a tool:
 * DSH_BINDING_FUNCTION): every byte outside [A-Za-z0-9_] becomes '_', a leading digit (or an
 * empty name) gets a '_' before it, a __dunder__ name loses trailing '_' until it is none, a name the runtime
 * refuses (common/dsh_binding_names.h) or a namespace that would shadow a global programs rely
 * on gets a '_' after it, and a name already in taken (NULL-terminated) gets "_2", "_3", ...
 * (transfer full). */
char *dshh__mcp_identifier(const char *name, enum dsh_binding_name_role role, const char *const *taken);
/* TypeScript type of a JSON Schema (the subset MCP tool schemas use; anything else is unknown). */
void dshh__mcp_schema_type(json_object *schema, FILE *out, int indent);
/* A JSDoc comment of text (may be NULL) at indent. */
void dshh__mcp_doc_comment(const char *text, FILE *out, int indent);

/* ---- mcp_content.c: a run result as MCP tool result content ------------------------------------ */
/* {content: [text, images...], isError} of a provider result; images are read from their files
 * and base64-encoded while the total stays within max_bytes (transfer full). */
json_object *dshh__mcp_tool_result(const char *result_json, size_t len, uint64_t max_bytes);
/* The one-line text of an output entry for a progress notification (transfer full). */
char *dshh__mcp_progress_message(const char *entry_json, size_t len);

#endif /* DSHH_MCP_H */

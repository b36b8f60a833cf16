/* One MCP session of `dsh mcp` and what its sessions share (dshh_mcp_session.c), whatever
 * carries the messages: stdio (dshh_mcp_server.c) or Streamable HTTP (dshh_mcp_http.c).
 * examples/host/README.md, "dsh mcp". */
#ifndef DSHH_MCP_SESSION_H
#define DSHH_MCP_SESSION_H

#include "dshh_host.h"
#include "dshh_mcp_downstream.h"
#include "dshh_mcp_tools.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* Built once per dsh mcp, read by every session: the mounted servers, what programs can call,
 * run_code's description (from describe() and the standing policy) and the rows' limits. */
struct dshh_mcp_shared {
    struct dshh_host *host;
    struct dshh_mcp_downstream ds;
    struct dshh_mcp_tools tools;
    char *description; /* of run_code */
    int64_t default_timeout_ms, max_timeout_ms;
    int64_t max_output_bytes;
    int64_t max_background_ms, max_background_runs;
    bool discard;    /* the runtime row's discardCompletion: results show no completion value */
    bool read_only;  /* the standing policy's mode is read-only */
    bool unconfined; /* danger-full-access: the program has the network (and everything else) */
    bool retains;    /* describe().retainsState: a session's runs share one stateOwner */
};
int dshh__mcp_shared_open(struct dshh_mcp_shared *sh, struct dshh_host *host,
                          const struct dshh_profile *profile);
void dshh__mcp_shared_close(struct dshh_mcp_shared *sh);

/* What a finished run was, for the transport's log line. */
struct dshh_mcp_run_log {
    int64_t duration_ms; /* from the tools/call to the run's end */
    const char *outcome; /* "ok", the failure kind, or "rejected" (the run never started) */
    bool denied;         /* the sandbox refused an operation of the program */
    bool background;     /* called with yieldAfterMs */
};

/* How a session reaches its transport (the session's only way up). */
struct dshh_mcp_sink {
    /* One JSON-RPC message to the client; progress_of: the run whose progress it reports, or 0. */
    void (*send)(void *arg, json_object *msg, dsh_run_id progress_of);
    /* After dshh__mcp_session_end: no call is left and the owner is released; the transport may
     * free the session now (also from inside this call). */
    void (*finished)(void *arg);
    /* A run of run_code ended (NULL: not logged). */
    void (*run_ended)(void *arg, const struct dshh_mcp_run_log *log);
};

struct dshh_mcp_session;
/* policy_session: the sandbox-policy session of its runs (NULL: the default one); owner: the
 * stateOwner of a retaining profile. sh and sink must outlive it. NULL when out of memory. */
struct dshh_mcp_session *dshh__mcp_session_new(struct dshh_mcp_shared *sh,
                                               const char *policy_session, const char *owner,
                                               const struct dshh_mcp_sink *sink, void *sink_arg);
/* One message as text (stdio's line): parse errors are answered on the sink. */
void dshh__mcp_session_text(struct dshh_mcp_session *m, const char *text, size_t len);
/* One parsed message (a JSON object). */
void dshh__mcp_session_message(struct dshh_mcp_session *m, json_object *msg);
/* An error response with id null (the transport could not read a message). */
void dshh__mcp_session_error(struct dshh_mcp_session *m, int code, const char *message);
/* Nobody can receive answers any more: queued calls go, running ones are cancelled with why;
 * finished() follows once they ended and the owner is released. */
void dshh__mcp_session_end(struct dshh_mcp_session *m, const char *why);
/* Cancels its runs with why, each answered with its result (error abort); queued calls are
 * answered that they did not start. The session goes on. */
void dshh__mcp_session_cancel_runs(struct dshh_mcp_session *m, const char *why);
/* Whether a call of it is queued or running (background runs included). */
bool dshh__mcp_session_busy(const struct dshh_mcp_session *m);
void dshh__mcp_session_free(struct dshh_mcp_session *m);

#endif

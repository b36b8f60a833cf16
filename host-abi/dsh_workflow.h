/* dsh host ABI v1 -- the workflow engine (`dsh-workflow-ptc`) and the subagent provider vtable.
 *
 * A workflow engine runs a model-written workflow script (helpers agent/parallel/pipeline/phase/
 * log/args) inside one confined PTC process. It owns no launcher: it runs the script through a
 * runtime lent to it (services->runtime, see dsh_services.h) using only that runtime's public
 * provider table, and starts subagents through a host-supplied dsh_subagent_provider.
 *
 * Thread rule: as for providers (ABI.md). The engine calls the host back (on_event, on_done and
 * subagent vtable methods) only on the host thread, inside its own dispatch() (which dispatches
 * the lent runtime), inside the runtime's dispatch()/wait() when the host calls them, inside
 * unload(), or inside a subagent callback; never inside start() or cancel(). See "Workflow
 * engine" in ABI.md.
 */
#ifndef DSH_WORKFLOW_H
#define DSH_WORKFLOW_H

#include "dsh_abi.h"
#include "dsh_services.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- subagent provider: the host's way of running one child agent -------------------------- */
typedef uint64_t dsh_subagent_id; /* never 0; not reused by a provider */

struct dsh_subagent_callbacks {
    DSH_RECORD_HEADER;
    /* Exactly once per started child, even after cancel() (a child may still publish after
     * cancellation). status 0: the child published; text is its output JSON,
     * {"text": "..."} or, when options carried a schema, {"value": <structured output>}.
     * status < 0: the child failed; text is a UTF-8 message. Transfer none. */
    void (*on_result)(void *userdata, dsh_subagent_id child, int status, const char *text,
                      size_t len);
    /* Exactly once, after dispose(), when the child's resources are released. May be called
     * inside dispose(). */
    void (*on_disposed)(void *userdata, dsh_subagent_id child);
    void *userdata;
};

struct dsh_subagent_provider {
    DSH_STRUCT_HEADER;
    const char *name; /* selects the provider ("provider" in requests and agent options) */
    void *ctx;
    /* Starts a child. prompt (UTF-8) and options_json are transfer none:
     * {"label","phase","schema","model","callerAgent","sessionId","workflowRun","cwd"} (absent = none).
     * callbacks are copied. On error no callback is ever called. */
    int (*start)(void *ctx, const char *prompt, size_t prompt_len, const char *options_json,
                 size_t options_len, const struct dsh_subagent_callbacks *callbacks,
                 dsh_subagent_id *ret_child, struct dsh_error *ret_error);
    /* Aborts a running child (idempotent). Its on_result still follows. reason: transfer none. */
    int (*cancel)(void *ctx, dsh_subagent_id child, const char *reason);
    /* Releases a child after its on_result (or cancels it first when it has none yet);
     * on_disposed follows exactly once. */
    int (*dispose)(void *ctx, dsh_subagent_id child);
};

/* ---- the engine --------------------------------------------------------------------------------- */
struct dsh_workflow;              /* opaque engine instance, one per loaded row */
typedef uint64_t dsh_workflow_run; /* never 0 for a live run; not reused */

struct dsh_workflow_callbacks {
    DSH_RECORD_HEADER;
    /* One observer event, in order (JSON object, transfer none, valid during the call):
     * {"type":"start"|"phase"|"log"|"agent-start"|"agent-end"|"end", ...}; see ABI.md. */
    void (*on_event)(void *userdata, dsh_workflow_run run, const char *event_json, size_t len);
    /* Exactly once per accepted run, after the PTC process and every child are gone:
     * {"value", "stopReason": "completed"|"error"|"cancelled", "error"?: {code, message},
     *  "agentsStarted"}. Transfer none; the run id is dead once it returns. */
    void (*on_done)(void *userdata, dsh_workflow_run run, const char *result_json, size_t len);
    void *userdata;
};

struct dsh_workflow_engine {
    DSH_STRUCT_HEADER;
    const char *name;    /* "dsh-workflow-ptc" */
    const char *version;
    /* config_yaml: the row's config (catalog entry dsh-workflow-ptc; empty = defaults).
     * services: borrowed until unload(); services->runtime is required (a per-call runtime).
     * subagents: NULL-terminated array of borrowed providers (may be NULL or empty: agent() then
     * returns null). The first one is the default. */
    int (*load)(const char *config_yaml, size_t config_len, const struct dsh_services *services,
                const struct dsh_subagent_provider *const *subagents, struct dsh_workflow **ret_engine,
                struct dsh_error *ret_error);
    /* request_json: {"script", "meta"?, "args"?, "provider"?, "maxTotalAgents"?, "agent"?:
     * {"id", "sessionId"?}, "cwd"?}. Rejects with DSH_E_REQUEST_INVALID (bad request or meta),
     * DSH_E_NOT_FOUND (unknown provider), DSH_E_LIMIT (a cap out of range) or the runtime's
     * resolve/run error. Never blocks and calls nothing back. A script that does not compile is
     * a run without events whose on_done reports error.code "script-invalid". On success on_done
     * is called exactly once later; on error never. */
    int (*start)(struct dsh_workflow *engine, const char *request_json, size_t request_len,
                 const struct dsh_workflow_callbacks *callbacks, dsh_workflow_run *ret_run,
                 struct dsh_error *ret_error);
    /* Aborts the PTC process and every child at once; the run ends through on_done with
     * stopReason "cancelled" once children are disposed. DSH_E_NOT_FOUND for an unknown run. */
    int (*cancel)(struct dsh_workflow *engine, dsh_workflow_run run, const char *reason);
    /* One pollable fd for the engine and the runtime lent to it (an epoll set holding both);
     * dispatch() also dispatches the runtime, so a host polls only this fd and calls only this
     * dispatch(). */
    int (*get_fd)(struct dsh_workflow *engine);
    int (*dispatch)(struct dsh_workflow *engine);
    /* Cancels every run and waits (blocking, dispatching the runtime) until each has ended;
     * pending on_done callbacks are delivered. Accepts NULL. */
    void (*unload)(struct dsh_workflow *engine);
    void (*free_text)(char *text);
};

/* The one exported symbol of dsh-workflow-ptc.so. NULL when host_abi_major is unsupported. */
const struct dsh_workflow_engine *dsh_workflow_entry(uint32_t host_abi_major);

typedef const struct dsh_workflow_engine *(*dsh_workflow_entry_fn)(uint32_t host_abi_major);

#ifdef __cplusplus
}
#endif

#endif /* DSH_WORKFLOW_H */

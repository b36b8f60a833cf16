/* A start request (wf_request.c): validated with named error codes, and the runtime request it
 * becomes. The PTC program is `const __wf = {...};` followed by the guest library (guest.js). */
#ifndef WF_REQUEST_H
#define WF_REQUEST_H

#include "config.h"
#include "dsh_workflow.h"

#include <stddef.h>

struct wf_request {
    char *agent_id;   /* agent.id, or NULL */
    char *session_id; /* agent.sessionId, or NULL */
    char *cwd;        /* the request's cwd, passed on to children (NULL: the workspace root) */
    const struct dsh_subagent_provider *provider; /* the run's default provider, may be NULL */
    char *runtime_request;                        /* the PTC request JSON */
    char *start_event;                            /* {"type":"start",...} */
};

/* Parses json against config and the engine's providers (NULL-terminated). On failure *ret is
 * zeroed and err names the problem (DSH_E_REQUEST_INVALID, DSH_E_NOT_FOUND, DSH_E_LIMIT). */
int wf__request_parse(const struct wf_config *config,
                      const struct dsh_subagent_provider *const *providers, const char *json,
                      size_t len, struct wf_request *ret, struct dsh_error *err);
/* The start event (transfer full); the request no longer holds it. */
char *wf__request_take_start_event(struct wf_request *request);
void wf__request_release(struct wf_request *request);

#endif

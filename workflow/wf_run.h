/* One workflow run (wf_run.c): its PTC run on the lent runtime, the guest's binding calls,
 * cancellation and the final result. A run ends only when its PTC run ended and every child was
 * disposed. Reports upward only through struct wf_run_hooks. */
#ifndef WF_RUN_H
#define WF_RUN_H

#include "config.h"
#include "dsh_provider.h"
#include "dsh_workflow.h"

#include <stdbool.h>
#include <stddef.h>

struct wf_run_hooks {
    /* A result became due: the engine delivers it (wf__run_finish) in its next dispatch(). */
    void (*due)(void *userdata);
};

/* What every run of one engine borrows from it. */
struct wf_run_env {
    const struct dsh_provider *rt; /* the lent runtime's table */
    struct dsh_instance *rt_inst;  /* and its instance */
    const struct wf_config *config;
    const struct dsh_subagent_provider *const *providers; /* NULL-terminated */
    const struct wf_run_hooks *hooks;
    void *userdata;
};

struct wf_run;

/* Validates the request and starts its PTC run (never blocks; no callback inside). On error
 * nothing is started and no callback ever comes. */
int wf__run_start(const struct wf_run_env *env, dsh_workflow_run id, const char *request_json,
                  size_t request_len, const struct dsh_workflow_callbacks *callbacks,
                  struct wf_run **ret_run, struct dsh_error *err);
/* Aborts the PTC run and every child at once. DSH_E_NOT_FOUND once the result is due. */
int wf__run_cancel(struct wf_run *run, const char *reason);
dsh_workflow_run wf__run_id(const struct wf_run *run);
bool wf__run_due(const struct wf_run *run);
/* Sends the end event and on_done, then frees the run. Only for a due run. */
void wf__run_finish(struct wf_run *run);

#endif

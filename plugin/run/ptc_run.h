/* Runs of one instance (ptc_run.c): admission into a temporary or an owner's retained environment,
 * the deadline, and the provider calls on runs. One run's phases: outcome.h. */
#ifndef PTC_RUN_H
#define PTC_RUN_H

#include "ptc_runs.h"

void ptc__runs_init(struct ptc_runs *runs, struct ptc_host *host, struct ptc_envs *envs, struct ptc_pool *pool,
                    struct ptc_strippers *strippers, const char *program_format, bool retains_state,
                    struct ptc_runs_source source);
/* True while a run has not delivered its result. */
bool ptc__runs_active(const struct ptc_runs *runs);
/* Selects abort for every live run (unload). */
void ptc__runs_cancel_all(struct ptc_runs *runs, const char *reason);
/* Frees what runs leave to later runs (their spare timers); once no run is active. */
void ptc__runs_destroy(struct ptc_runs *runs);

/* The provider calls run, cancel and pause_output (host-abi/ABI.md, the provider table); reply and
 * registerImage are run_frames.h's. */
int ptc__run_start(struct ptc_runs *runs, const char *spec_json, size_t spec_len,
                   const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run, struct dsh_error *err);
int ptc__runs_cancel(struct ptc_runs *runs, dsh_run_id id, const char *reason);
/* ABI 1.5 pause_output: holds or resumes reading the run's process (env.h ptc__env_hold_reading). */
int ptc__runs_pause_output(struct ptc_runs *runs, dsh_run_id id, bool paused);

#endif

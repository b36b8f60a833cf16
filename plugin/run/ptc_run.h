/* Runs of one instance (run.c): admission into a temporary or an owner's retained environment,
 * the deadline, and the provider calls on runs. One run's phases: outcome.h. */
#ifndef PTC_RUN_H
#define PTC_RUN_H

#include "dsh_provider.h"
#include "env.h"
#include "pool.h"
#include "stripper.h"

struct ptc_run;

/* What the run layer asks of the instance above it. */
struct ptc_runs_source {
    /* The joined source of every registered environment initializer, or NULL (transfer full). */
    char *(*initializer)(void *ctx);
    void *ctx;
};

/* Owned by owners.c: the sandboxPolicy subscription. */
struct ptc_subscription {
    bool active;
    uint64_t id;
};

/* Every run of one instance. Written only by run.c (and owners.c, its subscription). */
struct ptc_runs {
    struct ptc_host *host;
    struct ptc_envs *envs;
    struct ptc_pool *pool; /* prewarmed environments for temporary runs */
    struct ptc_strippers *strippers; /* strips temporary runs' programs; NULL: the child strips */
    const char *program_format; /* async-function | vm-script | scoped-repl | repl */
    bool retains_state;         /* stateOwner selects a retained environment */
    struct ptc_runs_source source;
    struct ptc_run *head; /* live runs, newest first */
    dsh_run_id next_id;
    bool admitted_any; /* initializers may only be registered before this */
    struct ptc_subscription subscription;
};

void ptc__runs_init(struct ptc_runs *runs, struct ptc_host *host, struct ptc_envs *envs, struct ptc_pool *pool,
                    struct ptc_strippers *strippers, const char *program_format, bool retains_state,
                    struct ptc_runs_source source);
/* True while a run has not delivered its result. */
bool ptc__runs_active(const struct ptc_runs *runs);
/* Selects abort for every live run (unload). */
void ptc__runs_cancel_all(struct ptc_runs *runs, const char *reason);

/* The provider calls run, cancel and pause_output (host-abi/ABI.md, the provider table); reply and
 * registerImage are run_frames.h's. */
int ptc__run_start(struct ptc_runs *runs, const char *spec_json, size_t spec_len,
                   const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run, struct dsh_error *err);
int ptc__runs_cancel(struct ptc_runs *runs, dsh_run_id id, const char *reason);
/* ABI 1.5 pause_output: holds or resumes reading the run's process (env.h ptc__env_hold_reading). */
int ptc__runs_pause_output(struct ptc_runs *runs, dsh_run_id id, bool paused);

#endif

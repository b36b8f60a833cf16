/* The types of the run layer that its lower files (outcome, owners, run_frames) share: the state
 * of every run of one instance. Its functions are ptc_run.h's (ptc_run.c). */
#ifndef PTC_RUNS_H
#define PTC_RUNS_H

#include "dsh_provider.h"
#include "env.h"
#include "pool.h"
#include "stripper.h"

struct ptc_run;
struct ptc_run_timer;

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

/* Owned by owners.c: an owner whose environment the provider released on its own (idle, or the
 * least recently used one at maxRetainedOwners), kept until the owner's next run is told. */
struct ptc_owner_notice;

/* Every run of one instance. Written only by ptc_run.c (and owners.c, its subscription and
 * notices; outcome.c, the spare timers). */
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
    struct ptc_owner_notice *notices; /* newest first */
    struct ptc_run_timer *spare_timers; /* finished runs' timers, for the next runs */
    unsigned n_spare_timers;
};

#endif

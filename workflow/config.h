/* The row's config (config.c): the caps of catalog entry `dsh-workflow-ptc`. */
#ifndef WF_CONFIG_H
#define WF_CONFIG_H

#include "dsh_abi.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wf_config {
    int64_t max_concurrent_agents;
    int64_t max_total_agents;
    int64_t max_items_per_call;
    int64_t sync_timeout_ms;
    /* ralph: {enabled, maxIterations, completionPromise} */
    bool ralph_enabled;
    int64_t ralph_max_iterations;
    char *ralph_completion_promise; /* owned */
};

/* Validates yaml (empty = defaults) against the catalog and fills *ret; DSH_E_CONFIG_INVALID with
 * the diagnostics in err otherwise. */
int wf__config_parse(const char *yaml, size_t len, struct wf_config *ret, struct dsh_error *err);
void wf__config_release(struct wf_config *config);

#endif

/* The row's config (config.c): the caps of catalog entry `dsh-workflow-ptc`. */
#ifndef WF_CONFIG_H
#define WF_CONFIG_H

#include "dsh_abi.h"

#include <stddef.h>
#include <stdint.h>

struct wf_config {
    int64_t max_concurrent_agents;
    int64_t max_total_agents;
    int64_t max_items_per_call;
    int64_t sync_timeout_ms;
};

/* Validates yaml (empty = defaults) against the catalog and fills *ret; DSH_E_CONFIG_INVALID with
 * the diagnostics in err otherwise. */
int wf__config_parse(const char *yaml, size_t len, struct wf_config *ret, struct dsh_error *err);

#endif

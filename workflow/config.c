/* The row's config, validated against the catalog entry `dsh-workflow-ptc` (catalog.yaml). */
#include "config.h"

#include "dsh_config.h"

#include <errno.h>
#include <stdlib.h>

#define WF_PROVIDER_NAME "dsh-workflow-ptc"

int wf__config_parse(const char *yaml, size_t len, struct wf_config *ret, struct dsh_error *err)
{
    *ret = (struct wf_config){0};
    struct dsh_diagnostics diags;
    yaml_document_t doc;
    struct dsh_catalog *cat = NULL;
    char msg[256] = "";
    int rc = dsh_yaml_load(yaml ? yaml : "", yaml ? len : 0, &doc, &diags);
    if (rc == 0 && (rc = dsh_catalog_open(&cat, msg, sizeof msg)) < 0) {
        yaml_document_delete(&doc);
        return dsh_error_setf(err, DSH_E_CONFIG_INVALID, "catalog: %s", msg);
    }
    yaml_node_t *root = rc == 0 ? yaml_document_get_root_node(&doc) : NULL;
    if (rc == 0)
        rc = dsh_config_validate_node(cat, WF_PROVIDER_NAME, &doc, root, &diags);
    if (rc < 0) {
        char *text = NULL;
        dsh_diagnostics_join(&diags, &text);
        dsh_error_setf(err, rc == -ENOMEM ? -ENOMEM : DSH_E_CONFIG_INVALID, "%s",
                       text && *text ? text : "invalid configuration");
        free(text);
        dsh_diagnostics_release(&diags);
        yaml_document_delete(&doc);
        dsh_catalog_close(cat);
        return rc == -ENOMEM ? -ENOMEM : DSH_E_CONFIG_INVALID;
    }
    dsh_diagnostics_release(&diags);
    const struct dsh_catalog_provider *p = dsh_catalog_find(cat, WF_PROVIDER_NAME);
    static const char *const keys[] = {"maxConcurrentAgents", "maxTotalAgents", "maxItemsPerCall",
                                       "syncTimeoutMs"};
    int64_t *slots[] = {&ret->max_concurrent_agents, &ret->max_total_agents,
                        &ret->max_items_per_call, &ret->sync_timeout_ms};
    for (size_t i = 0; i < 4 && rc == 0; i++)
        rc = dsh_config_get_int(p, &doc, root, keys[i], slots[i]);
    if (rc == 0)
        rc = dsh_config_get_bool(p, &doc, root, "ralph.enabled", &ret->ralph_enabled);
    if (rc == 0)
        rc = dsh_config_get_int(p, &doc, root, "ralph.maxIterations", &ret->ralph_max_iterations);
    if (rc == 0)
        rc = dsh_config_get_str(p, &doc, root, "ralph.completionPromise", &ret->ralph_completion_promise);
    yaml_document_delete(&doc);
    dsh_catalog_close(cat);
    if (rc < 0) {
        wf__config_release(ret);
        return dsh_error_setf(err, DSH_E_CONFIG_INVALID, "cannot read the configuration: %s",
                              dsh_strerror(rc));
    }
    return 0;
}

void wf__config_release(struct wf_config *config)
{
    free(config->ralph_completion_promise);
    config->ralph_completion_promise = NULL;
}

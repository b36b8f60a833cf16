/* Typed configs of the reference host's service rows (dsh-sandbox-linux, dsh-subprocess-local,
 * dsh-sandbox-policy), read through the catalog like the runtime's: the one reader of these rows,
 * from YAML text (_parse) or from a composed row's node (_read, the host). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_diagnostics.h"
#include "dsh_getters.h"
#include "dsh_row.h"
#include "dsh_strv.h"
#include "dsh_typed_config.h"

static const char *const sandbox_mode_names[] = {
    [DSH_SANDBOX_READ_ONLY] = "read-only",
    [DSH_SANDBOX_WORKSPACE_WRITE] = "workspace-write",
    [DSH_SANDBOX_DANGER_FULL_ACCESS] = "danger-full-access",
};
#define N_MODES (sizeof(sandbox_mode_names) / sizeof(sandbox_mode_names[0]))

const char *dsh_sandbox_mode_name(enum dsh_sandbox_mode mode)
{
    return (size_t)mode < N_MODES ? sandbox_mode_names[mode] : NULL;
}

/* A field without a catalog default that the row may leave out: read only when given. */
static int get_optional_int(const struct dsh_catalog_provider *p, yaml_document_t *doc, yaml_node_t *config,
                            const char *field, bool *ret_set, int64_t *ret_value)
{
    *ret_set = dsh_config_is_set(p, doc, config, field);
    return *ret_set ? dsh_config_get_int(p, doc, config, field, ret_value) : 0;
}

static int get_optional_str(const struct dsh_catalog_provider *p, yaml_document_t *doc, yaml_node_t *config,
                            const char *field, char **ret_value)
{
    return dsh_config_is_set(p, doc, config, field) ? dsh_config_get_str(p, doc, config, field, ret_value) : 0;
}

int dsh_sandbox_linux_config_read(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                                  yaml_node_t *config, struct dsh_sandbox_linux_config *ret_config)
{
    struct dsh_sandbox_linux_config *c = ret_config;
    memset(c, 0, sizeof(*c));
    int err = dsh_config_get_list(provider, doc, config, "extraWritableRoots", &c->extra_writable_roots,
                                  &c->n_extra_writable_roots);
    if (err == 0) /* absent: the kernel's ABI */
        err = get_optional_int(provider, doc, config, "maxLandlockAbi", &c->has_max_landlock_abi,
                               &c->max_landlock_abi);
    if (err == 0)
        err = dsh_config_get_int(provider, doc, config, "confineDelayMs", &c->confine_delay_ms);
    if (err == 0)
        err = dsh_config_get_bool(provider, doc, config, "requireFullEnforcement", &c->require_full_enforcement);
    if (err < 0)
        dsh_sandbox_linux_config_destroy(c);
    return err;
}

int dsh_sandbox_linux_config_parse(const char *yaml_text, size_t len,
                                   struct dsh_sandbox_linux_config *ret_config,
                                   struct dsh_diagnostics *ret_diags)
{
    struct dsh_row row;
    memset(ret_config, 0, sizeof(*ret_config));
    int err = dsh_row_load("dsh-sandbox-linux", yaml_text, len, &row, ret_diags);
    if (err < 0)
        return err;
    err = dsh_sandbox_linux_config_read(row.provider, &row.doc, row.root, ret_config);
    dsh_row_release(&row);
    return err;
}

void dsh_sandbox_linux_config_destroy(struct dsh_sandbox_linux_config *config)
{
    if (!config)
        return;
    dsh_strv_free(config->extra_writable_roots);
    memset(config, 0, sizeof(*config));
}

int dsh_subprocess_local_config_read(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                                     yaml_node_t *config, struct dsh_subprocess_local_config *ret_config)
{
    struct dsh_subprocess_local_config *c = ret_config;
    memset(c, 0, sizeof(*c));
    int err = dsh_config_get_int(provider, doc, config, "failQuiescenceObservations",
                                 &c->fail_quiescence_observations);
    if (err == 0)
        err = dsh_config_get_int(provider, doc, config, "faultFreezeSkippedMs", &c->fault_freeze_skipped_ms);
    if (err == 0)
        err = dsh_config_get_int(provider, doc, config, "maxTotalMemoryMb", &c->max_total_memory_mb);
    if (err == 0)
        err = dsh_config_get_int(provider, doc, config, "maxTotalProcesses", &c->max_total_processes);
    if (err == 0)
        err = get_optional_str(provider, doc, config, "cgroupRoot", &c->cgroup_root);
    if (err < 0)
        dsh_subprocess_local_config_destroy(c);
    return err;
}

void dsh_subprocess_local_config_destroy(struct dsh_subprocess_local_config *config)
{
    if (!config)
        return;
    free(config->cgroup_root);
    memset(config, 0, sizeof(*config));
}

int dsh_sandbox_policy_config_read(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                                   yaml_node_t *config, struct dsh_sandbox_policy_config *ret_config)
{
    char *mode = NULL;
    memset(ret_config, 0, sizeof(*ret_config));
    int err = dsh_config_get_str(provider, doc, config, "mode", &mode);
    if (err == 0) {
        err = -EINVAL; /* the catalog and enum dsh_sandbox_mode drifted apart */
        for (size_t i = 0; i < N_MODES; i++)
            if (strcmp(sandbox_mode_names[i], mode) == 0) {
                ret_config->mode = (enum dsh_sandbox_mode)i;
                err = 0;
            }
    }
    if (err == 0) /* absent: the host's current directory */
        err = get_optional_str(provider, doc, config, "workspaceRoot", &ret_config->workspace_root);
    if (err == 0)
        err = dsh_config_get_str(provider, doc, config, "network.mode", &ret_config->network_mode);
    if (err == 0)
        err = dsh_config_get_list(provider, doc, config, "network.allow", &ret_config->network_allow,
                                  &ret_config->n_network_allow);
    if (err == 0)
        err = dsh_config_get_list(provider, doc, config, "network.deny", &ret_config->network_deny,
                                  &ret_config->n_network_deny);
    if (err == 0)
        err = dsh_config_get_list(provider, doc, config, "network.resolverOverride",
                                  &ret_config->network_resolver_override,
                                  &ret_config->n_network_resolver_override);
    if (err == 0)
        err = dsh_config_get_bool(provider, doc, config, "network.allowPrivateAddresses",
                                  &ret_config->network_allow_private_addresses);
    free(mode);
    if (err < 0)
        dsh_sandbox_policy_config_destroy(ret_config);
    return err;
}

int dsh_sandbox_policy_config_parse(const char *yaml_text, size_t len,
                                    struct dsh_sandbox_policy_config *ret_config,
                                    struct dsh_diagnostics *ret_diags)
{
    struct dsh_row row;
    memset(ret_config, 0, sizeof(*ret_config));
    int err = dsh_row_load("dsh-sandbox-policy", yaml_text, len, &row, ret_diags);
    if (err < 0)
        return err;
    err = dsh_sandbox_policy_config_read(row.provider, &row.doc, row.root, ret_config);
    dsh_row_release(&row);
    return err;
}

void dsh_sandbox_policy_config_destroy(struct dsh_sandbox_policy_config *config)
{
    if (!config)
        return;
    free(config->workspace_root);
    free(config->network_mode);
    dsh_strv_free(config->network_allow);
    dsh_strv_free(config->network_deny);
    dsh_strv_free(config->network_resolver_override);
    memset(config, 0, sizeof(*config));
}

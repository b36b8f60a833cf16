/* Typed configs of the reference host's sandbox rows (dsh-sandbox-linux,
 * dsh-sandbox-policy), read through the catalog like the runtime's. */
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

int dsh_sandbox_linux_config_parse(const char *yaml_text, size_t len,
                                   struct dsh_sandbox_linux_config *ret_config,
                                   struct dsh_diagnostics *ret_diags)
{
    struct dsh_row row;
    memset(ret_config, 0, sizeof(*ret_config));
    int err = dsh_row_load("dsh-sandbox-linux", yaml_text, len, &row, ret_diags);
    if (err < 0)
        return err;
    err = dsh_config_get_list(row.provider, &row.doc, row.root, "extraWritableRoots",
                              &ret_config->extra_writable_roots,
                              &ret_config->n_extra_writable_roots);
    if (err == 0) {
        err = dsh_config_get_int(row.provider, &row.doc, row.root, "maxLandlockAbi",
                                 &ret_config->max_landlock_abi);
        ret_config->has_max_landlock_abi = err == 0;
        if (err == -ENOENT) /* the kernel's ABI */
            err = 0;
    }
    dsh_row_release(&row);
    if (err < 0)
        dsh_sandbox_linux_config_destroy(ret_config);
    return err;
}

void dsh_sandbox_linux_config_destroy(struct dsh_sandbox_linux_config *config)
{
    if (!config)
        return;
    dsh_strv_free(config->extra_writable_roots);
    memset(config, 0, sizeof(*config));
}

int dsh_sandbox_policy_config_parse(const char *yaml_text, size_t len,
                                    struct dsh_sandbox_policy_config *ret_config,
                                    struct dsh_diagnostics *ret_diags)
{
    struct dsh_row row;
    char *mode = NULL;
    memset(ret_config, 0, sizeof(*ret_config));
    int err = dsh_row_load("dsh-sandbox-policy", yaml_text, len, &row, ret_diags);
    if (err < 0)
        return err;
    err = dsh_config_get_str(row.provider, &row.doc, row.root, "mode", &mode);
    if (err == 0) {
        err = -EINVAL; /* the catalog and enum dsh_sandbox_mode drifted apart */
        for (size_t i = 0; i < N_MODES; i++)
            if (strcmp(sandbox_mode_names[i], mode) == 0) {
                ret_config->mode = (enum dsh_sandbox_mode)i;
                err = 0;
            }
    }
    if (err == 0) {
        err = dsh_config_get_str(row.provider, &row.doc, row.root, "workspaceRoot",
                                 &ret_config->workspace_root);
        if (err == -ENOENT) /* the host's current directory */
            err = 0;
    }
    free(mode);
    dsh_row_release(&row);
    if (err < 0)
        dsh_sandbox_policy_config_destroy(ret_config);
    return err;
}

void dsh_sandbox_policy_config_destroy(struct dsh_sandbox_policy_config *config)
{
    if (!config)
        return;
    free(config->workspace_root);
    memset(config, 0, sizeof(*config));
}

/* Typed config of @deepseek-ai/dsh-ptc-runtime-node. Every value, given or
 * default, comes through the catalog getters: no default is repeated here. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_diagnostics.h"
#include "dsh_getters.h"
#include "dsh_row.h"
#include "dsh_typed_config.h"

#define N_ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

static const char *const mode_names[] = {
    [PTC_EXECUTION_PER_CALL] = "per-call",
    [PTC_EXECUTION_VM_SCRIPT] = "vm-script",
    [PTC_EXECUTION_PERSISTENT_IN_MEMORY] = "persistent-in-memory",
};

static const char *const launch_kind_names[] = {
    [PTC_LAUNCH_NODE_SCRIPT] = "node-script",
    [PTC_LAUNCH_EMBEDDED] = "embedded",
};

const char *ptc_execution_mode_name(enum ptc_execution_mode mode)
{
    return (size_t)mode < N_ELEMENTS(mode_names) ? mode_names[mode] : NULL;
}

/* Index of text among names; -EINVAL when the catalog and this enum drifted. */
static int name_index(const char *const *names, size_t n, const char *text)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], text) == 0)
            return (int)i;
    return -EINVAL;
}

static int get_enum(struct dsh_row *row, const char *path, const char *const *names, size_t n,
                    int *ret_value)
{
    char *text;
    int err = dsh_config_get_str(row->provider, &row->doc, row->root, path, &text);
    if (err < 0)
        return err;
    err = name_index(names, n, text);
    free(text);
    if (err < 0)
        return err;
    *ret_value = err;
    return 0;
}

static int fill_launch(struct dsh_row *row, struct ptc_launch *launch)
{
    int kind, err;
    launch->is_explicit = dsh_config_is_set(row->provider, &row->doc, row->root, "launch");
    if (!launch->is_explicit)
        return 0;
    err = get_enum(row, "launch.kind", launch_kind_names, N_ELEMENTS(launch_kind_names), &kind);
    if (err < 0)
        return err;
    launch->kind = (enum ptc_launch_kind)kind;
    err = dsh_config_get_str(row->provider, &row->doc, row->root, "launch.executable",
                             &launch->executable);
    if (err < 0)
        return err;
    err = dsh_config_get_str(row->provider, &row->doc, row->root, "launch.bootstrapPath",
                             &launch->bootstrap_path);
    if (err < 0 && err != -ENOENT) /* absent: the plugin's own bootstrap */
        return err;
    err = dsh_config_get_str(row->provider, &row->doc, row->root, "launch.stripperPath",
                             &launch->stripper_path);
    return err == -ENOENT ? 0 : err; /* absent: the plugin's own stripper */
}

static int fill(struct dsh_row *row, struct ptc_config *cfg)
{
    static const struct ptc_config_int ints[] = {
        {"timeoutMs", offsetof(struct ptc_config, timeout_ms)},
        {"maxTimeoutMs", offsetof(struct ptc_config, max_timeout_ms)},
        {"maxOutputBytes", offsetof(struct ptc_config, max_output_bytes)},
        {"maxOldGenerationSizeMb", offsetof(struct ptc_config, max_old_generation_size_mb)},
        {"maxMessageBytes", offsetof(struct ptc_config, max_message_bytes)},
        {"maxPendingCalls", offsetof(struct ptc_config, max_pending_calls)},
        {"stopGraceMs", offsetof(struct ptc_config, stop_grace_ms)},
        {"graceMs", offsetof(struct ptc_config, grace_ms)},
        {"prewarmProcesses", offsetof(struct ptc_config, prewarm_processes)},
        {"prewarmIdleMs", offsetof(struct ptc_config, prewarm_idle_ms)},
        {"prewarmTotalProcesses", offsetof(struct ptc_config, prewarm_total_processes)},
        {"idleReleaseMs", offsetof(struct ptc_config, idle_release_ms)},
        {"maxRetainedOwners", offsetof(struct ptc_config, max_retained_owners)},
        {"maxMemoryMb", offsetof(struct ptc_config, max_memory_mb)},
        {"maxProcesses", offsetof(struct ptc_config, max_processes)},
        {"maxCpuPercent", offsetof(struct ptc_config, max_cpu_percent)},
        {"maxTempBytes", offsetof(struct ptc_config, max_temp_bytes)},
    };
    int mode;
    int err = get_enum(row, "executionMode", mode_names, N_ELEMENTS(mode_names), &mode);
    if (err < 0)
        return err;
    cfg->execution_mode = (enum ptc_execution_mode)mode;
    err = dsh_config_get_bool(row->provider, &row->doc, row->root, "scriptPersistence",
                              &cfg->script_persistence);
    if (err < 0)
        return err;
    err = dsh_config_get_bool(row->provider, &row->doc, row->root, "replScoped",
                              &cfg->repl_scoped);
    if (err < 0)
        return err;
    err = dsh_config_get_bool(row->provider, &row->doc, row->root, "requireResourceLimits",
                              &cfg->require_resource_limits);
    if (err < 0)
        return err;
    err = dsh_config_get_bool(row->provider, &row->doc, row->root, "discardCompletion",
                              &cfg->discard_completion);
    if (err < 0)
        return err;
    err = ptc_config_fill_ints(row, ints, N_ELEMENTS(ints), cfg);
    if (err < 0)
        return err;
    return fill_launch(row, &cfg->launch);
}

int ptc_config_fill_ints(struct dsh_row *row, const struct ptc_config_int *fields, size_t n,
                         struct ptc_config *cfg)
{
    for (size_t i = 0; i < n; i++) {
        int64_t *slot = (int64_t *)((char *)cfg + fields[i].offset);
        int err = dsh_config_get_int(row->provider, &row->doc, row->root, fields[i].key, slot);
        if (err < 0)
            return err;
    }
    return 0;
}

int ptc_config_parse_row(const char *provider, ptc_config_fill_fn fill_row, const char *yaml_text,
                         size_t len, struct ptc_config *ret_config, struct dsh_diagnostics *ret_diags)
{
    struct dsh_row row;
    memset(ret_config, 0, sizeof(*ret_config));
    int err = dsh_row_load(provider, yaml_text, len, &row, ret_diags);
    if (err < 0)
        return err;
    err = fill_row(&row, ret_config);
    dsh_row_release(&row);
    if (err < 0)
        ptc_config_destroy(ret_config);
    return err;
}

int ptc_config_parse(const char *yaml_text, size_t len, struct ptc_config *ret_config,
                     struct dsh_diagnostics *ret_diags)
{
    return ptc_config_parse_row(PTC_PROVIDER_NAME, fill, yaml_text, len, ret_config, ret_diags);
}

void ptc_config_destroy(struct ptc_config *config)
{
    if (!config)
        return;
    free(config->launch.executable);
    free(config->launch.bootstrap_path);
    free(config->launch.stripper_path);
    memset(config, 0, sizeof(*config));
}

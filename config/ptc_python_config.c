/* Typed config of @deepseek-ai/dsh-ptc-runtime-python, in the runtime's shared struct
 * ptc_config. Every value comes through the catalog getters; what the Python row has no field
 * for is fixed by what the provider supports: per-call only (its prewarmed processes serve
 * per-call runs), the configured deadline as its own ceiling (no per-call overrides), the
 * interpreter and bootstrap as its launch. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "dsh_diagnostics.h"
#include "dsh_getters.h"
#include "dsh_row.h"
#include "dsh_typed_config.h"

static int fill(struct dsh_row *row, struct ptc_config *cfg)
{
    static const struct ptc_config_int ints[] = {
        {"timeoutMs", offsetof(struct ptc_config, timeout_ms)},
        {"maxOutputBytes", offsetof(struct ptc_config, max_output_bytes)},
        {"maxMessageBytes", offsetof(struct ptc_config, max_message_bytes)},
        {"maxPendingCalls", offsetof(struct ptc_config, max_pending_calls)},
        {"graceMs", offsetof(struct ptc_config, grace_ms)},
        {"maxMemoryMb", offsetof(struct ptc_config, max_memory_mb)},
        {"maxProcesses", offsetof(struct ptc_config, max_processes)},
        {"maxCpuPercent", offsetof(struct ptc_config, max_cpu_percent)},
        {"maxTempBytes", offsetof(struct ptc_config, max_temp_bytes)},
        {"prewarmProcesses", offsetof(struct ptc_config, prewarm_processes)},
        {"prewarmIdleMs", offsetof(struct ptc_config, prewarm_idle_ms)},
        {"prewarmTotalProcesses", offsetof(struct ptc_config, prewarm_total_processes)},
    };
    int err = ptc_config_fill_ints(row, ints, sizeof ints / sizeof ints[0], cfg);
    if (err == 0)
        err = dsh_config_get_bool(row->provider, &row->doc, row->root, "requireResourceLimits",
                                  &cfg->require_resource_limits);
    if (err == 0)
        err = dsh_config_get_bool(row->provider, &row->doc, row->root, "discardCompletion",
                                  &cfg->discard_completion);
    if (err < 0)
        return err;
    cfg->execution_mode = PTC_EXECUTION_PER_CALL;
    cfg->max_timeout_ms = cfg->timeout_ms;
    cfg->stop_grace_ms = cfg->grace_ms;
    cfg->launch.is_explicit = true;
    err = dsh_config_get_str(row->provider, &row->doc, row->root, "python", &cfg->launch.executable);
    if (err < 0)
        return err;
    err = dsh_config_get_str(row->provider, &row->doc, row->root, "bootstrapPath",
                             &cfg->launch.bootstrap_path);
    return err == -ENOENT ? 0 : err; /* absent: the plugin's own bootstrap */
}

int ptc_python_config_parse(const char *yaml_text, size_t len, struct ptc_config *ret_config,
                            struct dsh_diagnostics *ret_diags)
{
    return ptc_config_parse_row(PTC_PYTHON_PROVIDER_NAME, fill, yaml_text, len, ret_config, ret_diags);
}

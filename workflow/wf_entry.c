/* The engine table behind dsh_workflow_entry, and nothing else (the functions are engine.c's). */
#include "engine.h"

static const struct dsh_workflow_engine engine_table = {
    .struct_size = sizeof(struct dsh_workflow_engine),
    .abi_major = DSH_ABI_MAJOR,
    .abi_minor = DSH_ABI_MINOR,
    .name = "dsh-workflow-ptc",
    .version = "0.1.0",
    .load = wf__engine_load,
    .start = wf__engine_start,
    .cancel = wf__engine_cancel,
    .get_fd = wf__engine_get_fd,
    .dispatch = wf__engine_dispatch,
    .unload = wf__engine_unload,
    .free_text = wf__engine_free_text,
};

__attribute__((visibility("default"))) const struct dsh_workflow_engine *dsh_workflow_entry(
    uint32_t host_abi_major)
{
    return host_abi_major == DSH_ABI_MAJOR ? &engine_table : NULL;
}

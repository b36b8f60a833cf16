/* Freezes the workflow engine ABI (dsh_workflow.h, x86_64 / LP64) like test_abi_layout.c does
 * for the provider: appending is allowed (update the size), existing offsets never move. */
#include "dsh_workflow.h"

#include <criterion/criterion.h>
#include <stddef.h>

#define SIZE(type, n) cr_expect_eq(sizeof(struct type), (size_t)(n), "sizeof(struct %s) changed", #type)
#define OFF(type, field, n)                                                                        \
    cr_expect_eq(offsetof(struct type, field), (size_t)(n), "offset of %s.%s changed", #type, #field)

Test(workflow_abi, engine_table_order)
{
    SIZE(dsh_workflow_engine, 80);
    OFF(dsh_workflow_engine, struct_size, 0);
    OFF(dsh_workflow_engine, abi_major, 4);
    OFF(dsh_workflow_engine, abi_minor, 6);
    OFF(dsh_workflow_engine, name, 8);
    OFF(dsh_workflow_engine, version, 16);
    OFF(dsh_workflow_engine, load, 24);
    OFF(dsh_workflow_engine, start, 32);
    OFF(dsh_workflow_engine, cancel, 40);
    OFF(dsh_workflow_engine, get_fd, 48);
    OFF(dsh_workflow_engine, dispatch, 56);
    OFF(dsh_workflow_engine, unload, 64);
    OFF(dsh_workflow_engine, free_text, 72);
}

Test(workflow_abi, callbacks)
{
    SIZE(dsh_workflow_callbacks, 32);
    OFF(dsh_workflow_callbacks, struct_size, 0);
    OFF(dsh_workflow_callbacks, on_event, 8);
    OFF(dsh_workflow_callbacks, on_done, 16);
    OFF(dsh_workflow_callbacks, userdata, 24);
    SIZE(dsh_subagent_callbacks, 32);
    OFF(dsh_subagent_callbacks, struct_size, 0);
    OFF(dsh_subagent_callbacks, on_result, 8);
    OFF(dsh_subagent_callbacks, on_disposed, 16);
    OFF(dsh_subagent_callbacks, userdata, 24);
}

Test(workflow_abi, subagent_provider)
{
    SIZE(dsh_subagent_provider, 48);
    OFF(dsh_subagent_provider, struct_size, 0);
    OFF(dsh_subagent_provider, abi_major, 4);
    OFF(dsh_subagent_provider, abi_minor, 6);
    OFF(dsh_subagent_provider, name, 8);
    OFF(dsh_subagent_provider, ctx, 16);
    OFF(dsh_subagent_provider, start, 24);
    OFF(dsh_subagent_provider, cancel, 32);
    OFF(dsh_subagent_provider, dispose, 40);
}

/* Freezes the v1 ABI layout (x86_64 / LP64): an accidental change to a public struct fails here.
 * Appending a field is allowed: update the size, keep every existing offset. */
#include "dsh_linux_services.h"
#include "dsh_provider.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#define SIZE(type, n) cr_expect_eq(sizeof(struct type), (size_t)(n), "sizeof(struct %s) changed", #type)
#define OFF(type, field, n)                                                                        \
    cr_expect_eq(offsetof(struct type, field), (size_t)(n), "offset of %s.%s changed", #type, #field)

Test(abi, version_constants)
{
    cr_expect_eq(DSH_ABI_MAJOR, 1);
    cr_expect_eq(DSH_ABI_MINOR, 8);
}

Test(abi, error_details)
{
    SIZE(dsh_error, 1028);
    OFF(dsh_error, message, 4);
}

Test(abi, provider_table_order)
{
    SIZE(dsh_provider, 160);
    OFF(dsh_provider, struct_size, 0);
    OFF(dsh_provider, abi_major, 4);
    OFF(dsh_provider, abi_minor, 6);
    OFF(dsh_provider, name, 8);
    OFF(dsh_provider, version, 16);
    OFF(dsh_provider, load, 24);
    OFF(dsh_provider, resolve, 32);
    OFF(dsh_provider, run, 40);
    OFF(dsh_provider, release, 48);
    OFF(dsh_provider, registerEnvironmentInitializer, 56);
    OFF(dsh_provider, get_fd, 64);
    OFF(dsh_provider, dispatch, 72);
    OFF(dsh_provider, cancel, 80);
    OFF(dsh_provider, reply, 88);
    OFF(dsh_provider, describe, 96);
    OFF(dsh_provider, unload, 104);
    OFF(dsh_provider, unregisterEnvironmentInitializer, 112);
    OFF(dsh_provider, free_text, 120);
    OFF(dsh_provider, wait, 128);
    OFF(dsh_provider, registerImage, 136);
    OFF(dsh_provider, readable_roots, 144); /* 1.1 */
    OFF(dsh_provider, pause_output, 152);   /* 1.5 */
}

Test(abi, run_callbacks)
{
    SIZE(dsh_run_callbacks, 48);
    OFF(dsh_run_callbacks, on_call, 8);
    OFF(dsh_run_callbacks, on_done, 16);
    OFF(dsh_run_callbacks, userdata, 24);
    OFF(dsh_run_callbacks, on_output, 32); /* 1.1 */
    OFF(dsh_run_callbacks, on_done_owned, 40); /* 1.5 */
}

Test(abi, services_bundle)
{
    SIZE(dsh_services, 56);
    OFF(dsh_services, fs, 8);
    OFF(dsh_services, subprocess, 16);
    OFF(dsh_services, sandbox, 24);
    OFF(dsh_services, sandbox_policy, 32);
    OFF(dsh_services, logger, 40);
    OFF(dsh_services, runtime, 48);
    SIZE(dsh_runtime_service, 24);
    OFF(dsh_runtime_service, provider, 8);
    OFF(dsh_runtime_service, instance, 16);
}

Test(abi, fs_service)
{
    SIZE(dsh_fs_service, 24);
    OFF(dsh_fs_service, ctx, 8);
    OFF(dsh_fs_service, map_host_path, 16);
}

Test(abi, sandbox_service)
{
    SIZE(dsh_confinement, 32);
    OFF(dsh_confinement, argv, 8);
    OFF(dsh_confinement, env, 16);
    OFF(dsh_confinement, report_json, 24);
    SIZE(dsh_sandbox_service, 64);
    OFF(dsh_sandbox_service, ctx, 8);
    OFF(dsh_sandbox_service, confine, 16);
    OFF(dsh_sandbox_service, cancel_confine, 24);
    OFF(dsh_sandbox_service, is_denial, 32);
    OFF(dsh_sandbox_service, release_confinement, 40);
    OFF(dsh_sandbox_service, network_json, 48); /* 1.7 */
    OFF(dsh_sandbox_service, network_begin_run, 56); /* 1.8 */
}

Test(abi, subprocess_service)
{
    SIZE(dsh_spawn_request, 48);
    OFF(dsh_spawn_request, argv, 8);
    OFF(dsh_spawn_request, env, 16);
    OFF(dsh_spawn_request, cwd, 24);
    OFF(dsh_spawn_request, max_memory_bytes, 32); /* 1.3 */
    OFF(dsh_spawn_request, max_processes, 40);    /* 1.3 */
    OFF(dsh_spawn_request, max_cpu_percent, 44);  /* 1.3 */
    SIZE(dsh_range_usage, 48);                    /* 1.3 */
    OFF(dsh_range_usage, oom_kills, 4);
    OFF(dsh_range_usage, memory_peak_bytes, 8);
    OFF(dsh_range_usage, cpu_usage_usec, 16);
    OFF(dsh_range_usage, cpu_periods, 24);
    OFF(dsh_range_usage, cpu_throttled_periods, 32);
    OFF(dsh_range_usage, process_limit_hits, 40);
    SIZE(dsh_process, 24);
    OFF(dsh_process, pid, 4);
    OFF(dsh_process, control_fd, 8);
    OFF(dsh_process, stdout_fd, 12);
    OFF(dsh_process, stderr_fd, 16);
    OFF(dsh_process, quiescence_fd, 20);
    SIZE(dsh_exit_status, 12);
    OFF(dsh_exit_status, code, 4);
    OFF(dsh_exit_status, signal, 8);
    SIZE(dsh_subprocess_service, 64);
    OFF(dsh_subprocess_service, spawn, 16);
    OFF(dsh_subprocess_service, terminate, 24);
    OFF(dsh_subprocess_service, poll_quiescent, 32);
    OFF(dsh_subprocess_service, release, 40);
    OFF(dsh_subprocess_service, freeze, 48); /* 1.2 */
    OFF(dsh_subprocess_service, usage, 56);  /* 1.3 */
}

Test(abi, policy_and_logger)
{
    SIZE(dsh_sandbox_policy_service, 40);
    OFF(dsh_sandbox_policy_service, resolve, 16);
    OFF(dsh_sandbox_policy_service, subscribe, 24);
    OFF(dsh_sandbox_policy_service, unsubscribe, 32);
    SIZE(dsh_logger, 24);
    OFF(dsh_logger, log, 16);
}

/* The X-macro table is the only source of codes: values are frozen and unique. */
Test(abi, error_codes_frozen)
{
    cr_expect_eq(DSH_E_CONFIG_INVALID, -4097);
    cr_expect_eq(DSH_E_SANDBOX_UNAVAILABLE, -4107);
    cr_expect_eq(DSH_E_PROTOCOL, -4112);
    cr_expect_eq(DSH_E_SCRIPT_INVALID, -4113);
    cr_expect_str_eq(dsh_error_name(DSH_E_SCRIPT_INVALID), "script-invalid");
    int codes[] = {
#define CODE(suffix, n, short_name, text) DSH_E_##suffix,
        DSH_ERROR_TABLE(CODE)
#undef CODE
    };
    size_t count = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < count; i++) {
        cr_expect_lt(codes[i], -DSH_ERROR_BASE, "provider codes live below -DSH_ERROR_BASE");
        cr_expect_not_null(dsh_error_name(codes[i]));
        cr_expect_str_neq(dsh_strerror(codes[i]), "");
        for (size_t j = i + 1; j < count; j++)
            cr_expect_neq(codes[i], codes[j]);
    }
}

Test(abi, strerror_covers_errno_and_ok)
{
    cr_expect_str_eq(dsh_strerror(DSH_OK), "success");
    cr_expect_str_eq(dsh_strerror(-ENOENT), strerror(ENOENT));
    cr_expect_str_eq(dsh_error_name(DSH_E_OWNER_BUSY), "owner-busy");
    cr_expect_null(dsh_error_name(-ENOENT));
}

/* libdsh-linux-services.so.1: its options struct grows only by appending. */
Test(abi, linux_services_options)
{
    SIZE(dsh_linux_services_options, 184);
    OFF(dsh_linux_services_options, struct_size, 0);
    OFF(dsh_linux_services_options, launcher_path, 8);
    OFF(dsh_linux_services_options, extra_writable_roots, 16);
    OFF(dsh_linux_services_options, max_landlock_abi, 24);
    OFF(dsh_linux_services_options, confine_delay_ms, 28);
    OFF(dsh_linux_services_options, default_mode, 32);
    OFF(dsh_linux_services_options, workspace_root, 40);
    OFF(dsh_linux_services_options, defer, 48);
    OFF(dsh_linux_services_options, loop, 56);
    OFF(dsh_linux_services_options, logger, 64);
    OFF(dsh_linux_services_options, extra_readable_roots, 72);
    OFF(dsh_linux_services_options, supervisor_path, 80);
    OFF(dsh_linux_services_options, temp_root, 88);
    OFF(dsh_linux_services_options, max_processes, 96);
    OFF(dsh_linux_services_options, disable_namespaces, 100);
    OFF(dsh_linux_services_options, fail_quiescence_observations, 104);
    OFF(dsh_linux_services_options, require_full_enforcement, 108);
    OFF(dsh_linux_services_options, fault_freeze_skipped_ms, 112);
    OFF(dsh_linux_services_options, cgroup_root, 120); /* 1.3 */
    OFF(dsh_linux_services_options, max_total_memory_bytes, 128); /* 1.4 */
    OFF(dsh_linux_services_options, max_total_processes, 136);
    OFF(dsh_linux_services_options, network_mode, 144); /* 1.7 */
    OFF(dsh_linux_services_options, network_allow, 152);
    OFF(dsh_linux_services_options, network_deny, 160);
    OFF(dsh_linux_services_options, network_allow_private_addresses, 168);
    OFF(dsh_linux_services_options, network_resolver_override, 176);
}

/* Every versioned struct starts with the same header: struct_size at offset 0, and for tables and
 * services the version right after it. */
#define TABLE_HEADER(type)                                                                         \
    do {                                                                                           \
        OFF(type, struct_size, 0);                                                                 \
        OFF(type, abi_major, 4);                                                                   \
        OFF(type, abi_minor, 6);                                                                   \
    } while (0)

Test(abi, every_struct_starts_with_the_header)
{
    TABLE_HEADER(dsh_provider);
    TABLE_HEADER(dsh_services);
    TABLE_HEADER(dsh_fs_service);
    TABLE_HEADER(dsh_sandbox_service);
    TABLE_HEADER(dsh_subprocess_service);
    TABLE_HEADER(dsh_sandbox_policy_service);
    TABLE_HEADER(dsh_logger);
    TABLE_HEADER(dsh_runtime_service);
    OFF(dsh_run_callbacks, struct_size, 0);
    OFF(dsh_confinement, struct_size, 0);
    OFF(dsh_spawn_request, struct_size, 0);
    OFF(dsh_range_usage, struct_size, 0);
    OFF(dsh_process, struct_size, 0);
    cr_expect_eq(sizeof(((struct dsh_process *)0)->struct_size), 4);
}

/* DSH_HAS: a field is present when the writer's struct_size covers all of it. */
Test(abi, presence_macro)
{
    struct dsh_services bundle = {.struct_size = offsetof(struct dsh_services, runtime)};
    cr_expect(DSH_HAS(&bundle, logger), "a 1.0 bundle without the runtime field still has logger");
    cr_expect_not(DSH_HAS(&bundle, runtime), "the field after struct_size is absent");
    bundle.struct_size = sizeof bundle;
    cr_expect(DSH_HAS(&bundle, runtime));
    bundle.struct_size = offsetof(struct dsh_services, runtime) + 4;
    cr_expect_not(DSH_HAS(&bundle, runtime), "a partly covered field is absent");
    const struct dsh_logger *none = NULL;
    cr_expect_not(DSH_HAS(none, log), "a NULL pointer has no field");
    struct dsh_logger logger = {.struct_size = offsetof(struct dsh_logger, log)};
    cr_expect(DSH_HAS(&logger, ctx));
    cr_expect_not(DSH_HAS(&logger, log));
}

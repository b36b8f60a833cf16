/* Rows of the reference host's services: lists, paths, the field-less rows,
 * and their typed parses. */
#include <string.h>

#include <criterion/criterion.h>

#include "helpers.h"

#define LINUX "dsh-sandbox-linux"
#define POLICY "dsh-sandbox-policy"

Test(services, fieldless_rows_accept_only_empty_configs)
{
    static const char *const names[] = {"dsh-fs-local", "dsh-subprocess-local"};
    for (size_t i = 0; i < 2; i++) {
        expect_valid(names[i], "");
        expect_valid(names[i], "{}\n");
        expect_error(names[i], "root: /tmp\n", "root", 1, 1, "unknown field");
    }
}

/* dsh mcp's own knobs: the demonstration functions on request, the declarations' budget. */
Test(services, demo_tools_mcp_and_declaration_budget)
{
    expect_valid("dsh-demo-tools", "");
    expect_valid("dsh-demo-tools", "mcp: true\n");
    expect_error("dsh-demo-tools", "mcp: 1\n", "mcp", 1, 6, "expected a boolean");
    expect_error("dsh-demo-tools", "root: /tmp\n", "root", 1, 1, "unknown field");
    expect_valid("dsh-mcp-bindings", "declarationBudget: 0\n");
    expect_valid("dsh-mcp-bindings", "declarationBudget: 16777216\nservers: []\n");
    expect_error("dsh-mcp-bindings", "declarationBudget: -1\n", "declarationBudget", 1, 20,
                 "below the minimum 0");
    expect_error("dsh-mcp-bindings", "declarationBudget: 16777217\n", "declarationBudget", 1, 20,
                 "exceeds the maximum 16777216");
}

/* dsh mcp's background runs: the deadline ceiling and the per-session cap. */
Test(services, mcp_background_runs)
{
    expect_valid("dsh-mcp-bindings", "maxBackgroundMs: 1\nmaxBackgroundRuns: 1\n");
    expect_valid("dsh-mcp-bindings", "maxBackgroundMs: 2147483647\nmaxBackgroundRuns: 1024\n");
    expect_error("dsh-mcp-bindings", "maxBackgroundMs: 0\n", "maxBackgroundMs", 1, 18,
                 "below the minimum 1");
    expect_error("dsh-mcp-bindings", "maxBackgroundRuns: 0\n", "maxBackgroundRuns", 1, 20,
                 "below the minimum 1");
    expect_error("dsh-mcp-bindings", "maxBackgroundRuns: 1025\n", "maxBackgroundRuns", 1, 20,
                 "exceeds the maximum 1024");
}

Test(services, extra_writable_roots_list)
{
    expect_valid(LINUX, "extraWritableRoots: []\n");
    expect_valid(LINUX, "extraWritableRoots:\n  - /srv/a\n  - \"/srv/b c\"\n");
}

Test(services, extra_writable_roots_item_must_be_absolute)
{
    expect_error(LINUX, "extraWritableRoots:\n  - /srv/a\n  - srv/b\n", "extraWritableRoots[1]",
                 3, 5, "must be an absolute path");
}

Test(services, extra_writable_roots_items_each_reported)
{
    struct dsh_diagnostics diags;
    cr_assert_eq(validate(LINUX, "extraWritableRoots: [rel, /ok, 5, \"\"]\n", &diags), -EINVAL);
    cr_assert_eq(diags.count, 3);
    expect_diag(&diags, "extraWritableRoots[0]", 1, 22, "must be an absolute path");
    expect_diag(&diags, "extraWritableRoots[2]", 1, 32, "got integer 5");
    expect_diag(&diags, "extraWritableRoots[3]", 1, 35, "must not be empty");
    dsh_diagnostics_release(&diags);
}

Test(services, extra_writable_roots_must_be_a_list)
{
    expect_error(LINUX, "extraWritableRoots: /srv/a\n", "extraWritableRoots", 1, 21,
                 "expected a sequence, got string \"/srv/a\"");
    expect_error(LINUX, "extraWritableRoots: {a: 1}\n", "extraWritableRoots", 1, 21,
                 "got a mapping");
}

Test(services, max_landlock_abi_range)
{
    expect_valid(LINUX, "maxLandlockAbi: 1\n");
    expect_valid(LINUX, "maxLandlockAbi: 7\n");
    expect_error(LINUX, "maxLandlockAbi: 0\n", "maxLandlockAbi", 1, 17, "below the minimum 1");
    expect_error(LINUX, "maxLandlockAbi: 8\n", "maxLandlockAbi", 1, 17, "exceeds the maximum 7");
}

Test(services, policy_mode_and_workspace_root)
{
    expect_valid(POLICY, "mode: workspace-write\nworkspaceRoot: /home/u/project\n");
    expect_error(POLICY, "mode: read-write\n", "mode", 1, 7,
                 "not one of read-only, workspace-write, danger-full-access");
    expect_error(POLICY, "workspaceRoot: project\n", "workspaceRoot", 1, 16,
                 "must be an absolute path");
}

Test(services, sandbox_linux_typed_defaults)
{
    struct dsh_sandbox_linux_config cfg;
    struct dsh_diagnostics diags;
    cr_assert_eq(dsh_sandbox_linux_config_parse("", 0, &cfg, &diags), 0);
    cr_assert_not_null(cfg.extra_writable_roots);
    cr_assert_eq(cfg.n_extra_writable_roots, 0);
    cr_assert_null(cfg.extra_writable_roots[0]);
    cr_assert(!cfg.has_max_landlock_abi);
    dsh_sandbox_linux_config_destroy(&cfg);
    dsh_diagnostics_release(&diags);
}

Test(services, sandbox_linux_typed_values)
{
    const char *yaml = "extraWritableRoots: [/a, /b]\nmaxLandlockAbi: 3\n";
    struct dsh_sandbox_linux_config cfg;
    cr_assert_eq(dsh_sandbox_linux_config_parse(yaml, strlen(yaml), &cfg, NULL), 0);
    cr_assert_eq(cfg.n_extra_writable_roots, 2);
    cr_assert_str_eq(cfg.extra_writable_roots[0], "/a");
    cr_assert_str_eq(cfg.extra_writable_roots[1], "/b");
    cr_assert_null(cfg.extra_writable_roots[2]);
    cr_assert(cfg.has_max_landlock_abi);
    cr_assert_eq(cfg.max_landlock_abi, 3);
    dsh_sandbox_linux_config_destroy(&cfg);
    dsh_sandbox_linux_config_destroy(&cfg);
    dsh_sandbox_linux_config_destroy(NULL);
}

Test(services, sandbox_linux_typed_rejects)
{
    const char *yaml = "maxLandlockAbi: 9\n";
    struct dsh_sandbox_linux_config cfg;
    struct dsh_diagnostics diags;
    cr_assert_eq(dsh_sandbox_linux_config_parse(yaml, strlen(yaml), &cfg, &diags), -EINVAL);
    cr_assert_null(cfg.extra_writable_roots);
    cr_assert_eq(diags.count, 1);
    cr_assert_str_eq(diags.items[0].path, "maxLandlockAbi");
    dsh_diagnostics_release(&diags);
}

Test(services, sandbox_policy_typed)
{
    struct dsh_sandbox_policy_config cfg;
    cr_assert_eq(dsh_sandbox_policy_config_parse(NULL, 0, &cfg, NULL), 0);
    cr_assert_eq(cfg.mode, DSH_SANDBOX_READ_ONLY);
    cr_assert_null(cfg.workspace_root);
    dsh_sandbox_policy_config_destroy(&cfg);

    const char *yaml = "mode: danger-full-access\nworkspaceRoot: /w\n";
    cr_assert_eq(dsh_sandbox_policy_config_parse(yaml, strlen(yaml), &cfg, NULL), 0);
    cr_assert_eq(cfg.mode, DSH_SANDBOX_DANGER_FULL_ACCESS);
    cr_assert_str_eq(cfg.workspace_root, "/w");
    cr_assert_str_eq(dsh_sandbox_mode_name(cfg.mode), "danger-full-access");
    dsh_sandbox_policy_config_destroy(&cfg);
    dsh_sandbox_policy_config_destroy(NULL);
}

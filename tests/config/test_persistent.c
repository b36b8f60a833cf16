/* resolvePersistentExecution: each effective program format selects retained execution, and the
 * three returned settings together form a valid ptc-runtime config. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "dsh_persistent.h"
#include "helpers.h"

static void expect(const char *format, const char *mode, bool script, bool scoped, const char *new_format)
{
    struct dsh_persistent_execution p;
    cr_assert_eq(dsh_resolve_persistent_execution(format, &p), 0, "%s", format);
    cr_expect_str_eq(p.execution_mode, mode, "%s", format);
    cr_expect_eq(p.script_persistence, script, "%s", format);
    cr_expect_eq(p.repl_scoped, scoped, "%s", format);
    /* All three merged at once must load and keep (or switch to) the expected syntax. */
    char yaml[256];
    snprintf(yaml, sizeof yaml, "executionMode: %s\nscriptPersistence: %s\nreplScoped: %s\n", p.execution_mode,
             p.script_persistence ? "true" : "false", p.repl_scoped ? "true" : "false");
    struct ptc_config cfg;
    struct dsh_diagnostics diags;
    cr_assert_eq(ptc_config_parse(yaml, strlen(yaml), &cfg, &diags), 0, "%s", yaml);
    cr_expect_str_eq(dsh_effective_program_format(ptc_execution_mode_name(cfg.execution_mode), cfg.repl_scoped),
                     new_format);
    ptc_config_destroy(&cfg);
    dsh_diagnostics_release(&diags);
}

Test(persistent, script_keeps_its_syntax)
{
    expect("vm-script", "vm-script", true, false, "vm-script");
}

Test(persistent, scoped_repl_keeps_its_syntax)
{
    expect("scoped-repl", "persistent-in-memory", false, true, "scoped-repl");
}

Test(persistent, function_bodies_and_repl_statements_switch_to_the_scoped_repl)
{
    expect("async-function", "persistent-in-memory", false, true, "scoped-repl");
    expect("repl", "persistent-in-memory", false, true, "scoped-repl");
}

Test(persistent, unknown_formats_and_null_are_rejected)
{
    struct dsh_persistent_execution p;
    cr_expect_eq(dsh_resolve_persistent_execution("python", &p), -EINVAL);
    cr_expect_eq(dsh_resolve_persistent_execution(NULL, &p), -EINVAL);
    cr_expect_eq(dsh_resolve_persistent_execution("vm-script", NULL), -EINVAL);
}

Test(persistent, effective_format_of_a_row)
{
    cr_expect_str_eq(dsh_effective_program_format("per-call", false), "async-function");
    cr_expect_str_eq(dsh_effective_program_format("vm-script", false), "vm-script");
    cr_expect_str_eq(dsh_effective_program_format("persistent-in-memory", true), "scoped-repl");
    cr_expect_str_eq(dsh_effective_program_format("persistent-in-memory", false), "repl");
    cr_expect_null(dsh_effective_program_format("other", false));
}

/* Cross-field rules of the PTC runtime row and the valid edges around them. */
#include <criterion/criterion.h>

#include "helpers.h"

Test(rules, script_persistence_needs_vm_script)
{
    expect_error(PTC, "scriptPersistence: true\n", "scriptPersistence", 1, 20,
                 "true requires executionMode: vm-script (executionMode is per-call)");
    expect_error(PTC, "executionMode: persistent-in-memory\nscriptPersistence: true\n",
                 "scriptPersistence", 2, 20, "(executionMode is persistent-in-memory)");
}

Test(rules, script_persistence_valid)
{
    expect_valid(PTC, "executionMode: vm-script\nscriptPersistence: true\n");
    expect_valid(PTC, "scriptPersistence: false\n");
    expect_valid(PTC, "executionMode: persistent-in-memory\nscriptPersistence: false\n");
}

Test(rules, repl_scoped_needs_persistent_in_memory)
{
    expect_error(PTC, "replScoped: true\n", "replScoped", 1, 13,
                 "true requires executionMode: persistent-in-memory");
    expect_error(PTC, "executionMode: vm-script\nreplScoped: true\n", "replScoped", 2, 13,
                 "(executionMode is vm-script)");
}

Test(rules, repl_scoped_valid)
{
    expect_valid(PTC, "executionMode: persistent-in-memory\nreplScoped: true\n");
    expect_valid(PTC, "executionMode: persistent-in-memory\nreplScoped: false\n");
    expect_valid(PTC, "replScoped: false\n");
}

Test(rules, invalid_mode_does_not_add_a_requires_error)
{
    /* The mode's own error is enough; a second one would only confuse. */
    expect_error(PTC, "executionMode: nope\nscriptPersistence: true\n", "executionMode", 1, 16,
                 "not one of");
}

Test(rules, timeout_above_max_timeout)
{
    expect_error(PTC, "maxTimeoutMs: 1000\ntimeoutMs: 1001\n", "timeoutMs", 2, 12,
                 "1001 exceeds maxTimeoutMs 1000");
}

Test(rules, timeout_above_default_max_timeout)
{
    expect_error(PTC, "timeoutMs: 600001\n", "timeoutMs", 1, 12,
                 "600001 exceeds maxTimeoutMs 600000 (default)");
}

Test(rules, max_timeout_below_default_timeout)
{
    expect_error(PTC, "maxTimeoutMs: 60000\n", "maxTimeoutMs", 1, 15,
                 "60000 is below timeoutMs 120000 (default)");
}

Test(rules, timeout_equal_to_max_timeout)
{
    expect_valid(PTC, "timeoutMs: 600000\n");
    expect_valid(PTC, "timeoutMs: 5000\nmaxTimeoutMs: 5000\n");
}

Test(rules, bootstrap_path_needs_node_script)
{
    expect_error(PTC,
                 "launch:\n  kind: embedded\n  executable: /opt/dsh/carrier\n"
                 "  bootstrapPath: /opt/dsh/process.js\n",
                 "launch.bootstrapPath", 4, 18,
                 "requires launch.kind: node-script (launch.kind is embedded)");
}

Test(rules, bootstrap_path_without_kind_reports_only_the_missing_kind)
{
    expect_error(PTC, "launch: {executable: node, bootstrapPath: /p.js}\n", "launch.kind", 1, 9,
                 "required field missing");
}

Test(rules, launch_valid_forms)
{
    expect_valid(PTC, "launch: {kind: embedded, executable: /opt/dsh/carrier}\n");
    expect_valid(PTC, "launch: {kind: node-script, executable: node}\n");
    expect_valid(PTC, "launch:\n  kind: node-script\n  executable: /usr/bin/node\n"
                      "  bootstrapPath: /srv/ptc/bootstrap/process.js\n");
    expect_valid(PTC, "launch: {kind: \"node-script\", executable: 'node'}\n");
}

Test(rules, empty_configs_are_valid)
{
    expect_valid(PTC, "");
    expect_valid(PTC, "~\n");
    expect_valid(PTC, "null\n");
    expect_valid(PTC, "{}\n");
    expect_valid(PTC, "---\n");
    expect_valid(PTC, "# only a comment\n");
}

Test(rules, maximum_values_exactly)
{
    expect_valid(PTC, "timeoutMs: 2147483647\n"
                      "maxTimeoutMs: 2147483647\n"
                      "stopGraceMs: 2147483647\n"
                      "graceMs: 2147483647\n"
                      "maxMessageBytes: 4294967295\n"
                      "maxOutputBytes: 9223372036854775807\n"
                      "maxOldGenerationSizeMb: 16777216\n"
                      "maxPendingCalls: 2147483647\n");
}

Test(rules, minimum_values_exactly)
{
    expect_valid(PTC, "timeoutMs: 1\nmaxTimeoutMs: 1\nmaxOutputBytes: 4\n"
                      "maxOldGenerationSizeMb: 16\nmaxMessageBytes: 4096\nmaxPendingCalls: 1\n"
                      "stopGraceMs: 1\ngraceMs: 1\n");
}

Test(rules, explicit_tags_and_quoted_enums)
{
    expect_valid(PTC, "timeoutMs: !!int 5000\nexecutionMode: \"vm-script\"\n"
                      "scriptPersistence: !!bool true\n");
    expect_error(PTC, "timeoutMs: !!float 5000\n", "timeoutMs", 1, 12, "got number 5000");
}

/* libyaml's events tell an explicit tag from the default one; the loader keeps the difference. */
Test(rules, explicit_str_tag_makes_a_string)
{
    expect_error(PTC, "timeoutMs: !!str 5000\n", "timeoutMs", 1, 12, "got string \"5000\"");
    expect_error(PTC, "scriptPersistence: !!str true\n", "scriptPersistence", 1, 20,
                 "got string \"true\"");
    expect_valid(PTC, "executionMode: !!str per-call\ntimeoutMs: 5000\n");
}

Test(rules, tags_outside_the_core_schema_are_refused)
{
    expect_error(PTC, "timeoutMs: !custom 5000\n", "yaml", 1, 12,
                 "unsupported tag !custom (only the YAML core tags !!str, !!int, !!float, !!bool, "
                 "!!null, !!seq and !!map)");
    expect_error(PTC, "launch: !custom {kind: embedded, executable: x}\n", "yaml", 1, 9,
                 "unsupported tag !custom");
    expect_error(PTC, "timeoutMs: !!binary aGk=\n", "yaml", 1, 12, "unsupported tag !!binary");
    expect_error(PTC, "launch: !!seq {kind: embedded, executable: x}\n", "yaml", 1, 9,
                 "tag !!seq does not fit a mapping");
    expect_error(PTC, "timeoutMs: !!map 5\n", "yaml", 1, 12, "tag !!map does not fit a scalar");
    /* Anchors and aliases still work. */
    expect_valid(PTC, "timeoutMs: &t 5000\nmaxTimeoutMs: *t\n");
    expect_error(PTC, "timeoutMs: *nowhere\n", "yaml", 1, 12, "unknown alias *nowhere");
}

Test(rules, full_seed_example_is_valid)
{
    expect_valid(PTC, "executionMode: per-call\n"
                      "timeoutMs: 120000\n"
                      "maxTimeoutMs: 600000\n"
                      "maxOutputBytes: 67108864\n"
                      "maxOldGenerationSizeMb: 512\n"
                      "maxMessageBytes: 134217728\n"
                      "maxPendingCalls: 128\n"
                      "stopGraceMs: 3000\n"
                      "graceMs: 3000\n");
}

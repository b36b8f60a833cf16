/* Field-level rejections of the PTC runtime row: unknown keys, wrong types,
 * integers and ranges. Each names the field and its line:column. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "helpers.h"

static const char *const timers[] = {"timeoutMs", "maxTimeoutMs", "stopGraceMs", "graceMs"};
static const char *const integers[] = {
    "timeoutMs",       "maxTimeoutMs",    "maxOutputBytes", "maxOldGenerationSizeMb",
    "maxMessageBytes", "maxPendingCalls", "stopGraceMs",    "graceMs",
    "maxMemoryMb",     "maxProcesses",    "maxTempBytes", /* maxCpuPercent takes 0: below */
};
#define N(a) (sizeof(a) / sizeof((a)[0]))

Test(types, unknown_key)
{
    expect_error(PTC, "timeoutMs: 5\nfoo: 1\n", "foo", 2, 1, "unknown field");
}

Test(types, unknown_key_suggests_spelling)
{
    expect_error(PTC, "executionMode: per-call\ntimeoutms: 5\n", "timeoutms", 2, 1,
                 "did you mean timeoutMs?");
}

Test(types, unknown_key_in_launch)
{
    expect_error(PTC, "launch:\n  kind: embedded\n  executable: x\n  extra: 1\n", "launch.extra",
                 4, 3, "unknown field");
}

Test(types, quoted_number_is_a_string)
{
    expect_error(PTC, "timeoutMs: \"5\"\n", "timeoutMs", 1, 12, "got string \"5\"");
    expect_error(PTC, "graceMs: '5'\n", "graceMs", 1, 10, "expected a positive integer");
}

Test(types, boolean_must_be_true_or_false)
{
    static const char *const bad[] = {"yes", "on", "True", "1", "\"true\""};
    for (size_t i = 0; i < N(bad); i++) {
        char yaml[128];
        snprintf(yaml, sizeof(yaml), "executionMode: vm-script\nscriptPersistence: %s\n",
                 bad[i]);
        expect_error(PTC, yaml, "scriptPersistence", 2, 20, "expected a boolean");
    }
}

Test(types, integers_reject_non_integers)
{
    static const char *const bad[] = {"1.5", "1e3", "0x10", ".inf", "1_000", "ten", "0100", "12.0"};
    for (size_t k = 0; k < N(integers); k++)
        for (size_t i = 0; i < N(bad); i++) {
            char yaml[128];
            snprintf(yaml, sizeof(yaml), "%s: %s\n", integers[k], bad[i]);
            expect_error(PTC, yaml, integers[k], 1, strlen(integers[k]) + 3,
                         "expected a positive integer");
        }
}

Test(types, integers_must_be_positive)
{
    static const char *const bad[] = {"0", "-3", "-0"};
    for (size_t k = 0; k < N(integers); k++)
        for (size_t i = 0; i < N(bad); i++) {
            char yaml[128];
            snprintf(yaml, sizeof(yaml), "%s: %s\n", integers[k], bad[i]);
            expect_error(PTC, yaml, integers[k], 1, strlen(integers[k]) + 3,
                         "is below the minimum");
        }
}

Test(types, integer_null_is_not_a_default)
{
    expect_error(PTC, "maxPendingCalls:\ngraceMs: 5\n", "maxPendingCalls", 1, 17, "got null");
}

Test(types, integer_overflow)
{
    expect_error(PTC, "maxOutputBytes: 99999999999999999999\n", "maxOutputBytes", 1, 17,
                 "out of range");
}

Test(types, timers_above_int32_max)
{
    for (size_t k = 0; k < N(timers); k++) {
        char yaml[128];
        snprintf(yaml, sizeof(yaml), "maxTimeoutMs: 2147483647\n%s: 2147483648\n", timers[k]);
        if (strcmp(timers[k], "maxTimeoutMs") == 0)
            snprintf(yaml, sizeof(yaml), "maxTimeoutMs: 2147483648\n");
        size_t line = strcmp(timers[k], "maxTimeoutMs") == 0 ? 1 : 2;
        expect_error(PTC, yaml, timers[k], line, strlen(timers[k]) + 3,
                     "exceeds the maximum 2147483647");
    }
}

Test(types, max_output_bytes_below_4)
{
    expect_error(PTC, "maxOutputBytes: 3\n", "maxOutputBytes", 1, 17, "below the minimum 4");
}

Test(types, max_message_bytes_above_uint32_max)
{
    expect_error(PTC, "maxMessageBytes: 4294967296\n", "maxMessageBytes", 1, 18,
                 "exceeds the maximum 4294967295");
}

Test(types, enum_value_unknown)
{
    expect_error(PTC, "executionMode: forever\n", "executionMode", 1, 16,
                 "string \"forever\" is not one of per-call, vm-script, persistent-in-memory");
}

Test(types, enum_needs_a_string)
{
    expect_error(PTC, "executionMode: 5\n", "executionMode", 1, 16, "got integer 5");
    expect_error(PTC, "executionMode: [per-call]\n", "executionMode", 1, 16, "got a sequence");
}

Test(types, launch_must_be_a_mapping)
{
    expect_error(PTC, "launch: node\n", "launch", 1, 9, "expected a mapping");
    expect_error(PTC, "launch: ~\n", "launch", 1, 9, "got null");
}

Test(types, launch_executable_empty)
{
    expect_error(PTC, "launch:\n  kind: embedded\n  executable: \"\"\n", "launch.executable", 3,
                 15, "must not be empty");
}

Test(types, launch_executable_not_a_string)
{
    expect_error(PTC, "launch: {kind: embedded, executable: 7}\n", "launch.executable", 1, 38,
                 "expected a string");
}

Test(types, launch_executable_with_nul)
{
    expect_error(PTC, "launch: {kind: embedded, executable: \"no\\0de\"}\n",
                 "launch.executable", 1, 38, "NUL");
}

Test(types, launch_bootstrap_path_relative)
{
    expect_error(PTC,
                 "launch:\n  kind: node-script\n  executable: node\n"
                 "  bootstrapPath: bootstrap/process.js\n",
                 "launch.bootstrapPath", 4, 18, "must be an absolute path");
}

Test(types, launch_kind_unknown)
{
    expect_error(PTC, "launch: {kind: wasm, executable: x}\n", "launch.kind", 1, 16,
                 "is not one of node-script, embedded");
}

Test(types, launch_missing_kind)
{
    expect_error(PTC, "timeoutMs: 5\nlaunch:\n  executable: node\n", "launch.kind", 3, 3,
                 "required field missing");
}

Test(types, launch_missing_executable)
{
    expect_error(PTC, "launch: {kind: embedded}\n", "launch.executable", 1, 9,
                 "required field missing");
}

Test(types, duplicate_key)
{
    expect_error(PTC, "timeoutMs: 5\ngraceMs: 5\ntimeoutMs: 6\n", "timeoutMs", 3, 1,
                 "duplicate key (first given at line 1:1)");
}

Test(types, duplicate_key_in_launch)
{
    expect_error(PTC, "launch: {kind: embedded, executable: a, executable: b}\n",
                 "launch.executable", 1, 41, "duplicate key");
}

Test(types, config_must_be_a_mapping)
{
    expect_error(PTC, "- timeoutMs: 5\n", "config", 1, 1, "expected a mapping, got a sequence");
    expect_error(PTC, "\n  per-call\n", "config", 2, 3, "got string \"per-call\"");
}

Test(types, keys_must_be_names)
{
    expect_error(PTC, "? [a]\n: 1\n", "config", 1, 3, "keys must be field names");
}

Test(types, unknown_provider)
{
    expect_error("dsh-no-such-provider", "timeoutMs: 5\n", "name", 1, 1,
                 "unknown provider \"dsh-no-such-provider\"");
}

Test(types, yaml_syntax_error)
{
    expect_error(PTC, "timeoutMs: 5\nlaunch: {kind: embedded\n", "yaml", 3, 1, "flow mapping");
}

Test(types, more_than_one_document)
{
    expect_error(PTC, "timeoutMs: 5\n---\ngraceMs: 5\n", "yaml", 3, 1, "single YAML document");
}

Test(types, collects_every_error)
{
    struct dsh_diagnostics diags;
    int rc = validate(PTC,
                      "executionMode: sometimes\n"
                      "timeoutMs: \"120000\"\n"
                      "maxOutputBytes: 2\n"
                      "bogus: true\n"
                      "launch:\n"
                      "  kind: embedded\n"
                      "  executable: \"\"\n"
                      "  bootstrapPath: /b.js\n",
                      &diags);
    cr_assert_eq(rc, -EINVAL);
    cr_assert_eq(diags.count, 6, "got %zu", diags.count);
    expect_diag(&diags, "executionMode", 1, 16, "not one of");
    expect_diag(&diags, "timeoutMs", 2, 12, "expected a positive integer");
    expect_diag(&diags, "maxOutputBytes", 3, 17, "below the minimum 4");
    expect_diag(&diags, "bogus", 4, 1, "unknown field");
    expect_diag(&diags, "launch.executable", 7, 15, "must not be empty");
    expect_diag(&diags, "launch.bootstrapPath", 8, 18, "requires launch.kind: node-script");
    dsh_diagnostics_release(&diags);
}

Test(types, validate_node_without_diagnostics_still_fails)
{
    yaml_document_t doc;
    struct dsh_catalog *cat;
    char err[256];
    cr_assert_eq(dsh_catalog_open(&cat, err, sizeof(err)), 0, "%s", err);
    yaml_node_t *root = load_doc("timeoutMs: 0\n", &doc);
    cr_assert_eq(dsh_config_validate_node(cat, PTC, &doc, root, NULL), -EINVAL);
    yaml_document_delete(&doc);
    dsh_catalog_close(cat);
}

/* Values the Node runtime cannot run with: a heap too small for the bootstrap or beyond what V8
 * honours, a control message too small for any program, a pending-call count JavaScript cannot
 * represent exactly. */
Test(types, runtime_limits_keep_runs_possible)
{
    expect_error(PTC, "maxOldGenerationSizeMb: 15\n", "maxOldGenerationSizeMb", 1, 25, "below the minimum 16");
    expect_error(PTC, "maxOldGenerationSizeMb: 16777217\n", "maxOldGenerationSizeMb", 1, 25,
                 "exceeds the maximum 16777216");
    expect_error(PTC, "maxMessageBytes: 4095\n", "maxMessageBytes", 1, 18, "below the minimum 4096");
    expect_error(PTC, "maxPendingCalls: 9007199254740992\n", "maxPendingCalls", 1, 18,
                 "exceeds the maximum 2147483647");
}

/* The range limits keep a Node process possible (a dozen tasks, tens of MiB) and stay within
 * what the kernel files take. */
Test(types, range_limits_have_bounds)
{
    expect_error(PTC, "maxMemoryMb: 31\n", "maxMemoryMb", 1, 14, "below the minimum 32");
    expect_error(PTC, "maxProcesses: 31\n", "maxProcesses", 1, 15, "below the minimum 32");
    expect_error(PTC, "maxCpuPercent: -1\n", "maxCpuPercent", 1, 16, "below the minimum 0");
    expect_error(PTC, "maxCpuPercent: 102401\n", "maxCpuPercent", 1, 16, "exceeds the maximum 102400");
    expect_error(PTC, "maxTempBytes: 1048575\n", "maxTempBytes", 1, 15, "below the minimum 1048576");
    expect_error(PTC, "requireResourceLimits: 1\n", "requireResourceLimits", 1, 24, "expected a boolean");
}

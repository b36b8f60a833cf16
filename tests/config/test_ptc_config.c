/* The typed PTC runtime config: defaults filled from the catalog, values
 * parsed, conditional defaults resolved, failures leave nothing behind. */
#include <string.h>

#include <criterion/criterion.h>

#include "helpers.h"

static int parse(const char *yaml, struct ptc_config *cfg, struct dsh_diagnostics *diags)
{
    return ptc_config_parse(yaml, strlen(yaml), cfg, diags);
}

Test(ptc_config, defaults)
{
    struct ptc_config cfg;
    struct dsh_diagnostics diags;
    cr_assert_eq(parse("", &cfg, &diags), 0);
    cr_assert_eq(diags.count, 0);
    cr_assert_eq(cfg.execution_mode, PTC_EXECUTION_PER_CALL);
    cr_assert(!cfg.script_persistence);
    cr_assert(!cfg.repl_scoped);
    cr_assert_eq(cfg.timeout_ms, 120000);
    cr_assert_eq(cfg.max_timeout_ms, 600000);
    cr_assert_eq(cfg.max_output_bytes, 67108864);
    cr_assert_eq(cfg.max_old_generation_size_mb, 512);
    cr_assert_eq(cfg.max_message_bytes, 134217728);
    cr_assert_eq(cfg.max_pending_calls, 128);
    cr_assert_eq(cfg.stop_grace_ms, 3000);
    cr_assert_eq(cfg.grace_ms, 3000);
    cr_assert_eq(cfg.prewarm_processes, 0);
    cr_assert_eq(cfg.prewarm_idle_ms, 60000);
    cr_assert_eq(cfg.prewarm_total_processes, 0);
    cr_assert_eq(cfg.idle_release_ms, 0); /* the seeds' default: idle environments never expire */
    cr_assert_eq(cfg.max_retained_owners, 0);
    cr_assert(!cfg.launch.is_explicit);
    cr_assert_null(cfg.launch.executable);
    cr_assert_null(cfg.launch.bootstrap_path);
    ptc_config_destroy(&cfg);
}

Test(ptc_config, null_text_and_null_document_are_defaults)
{
    struct ptc_config cfg;
    cr_assert_eq(ptc_config_parse(NULL, 0, &cfg, NULL), 0);
    cr_assert_eq(cfg.timeout_ms, 120000);
    ptc_config_destroy(&cfg);
    cr_assert_eq(parse("~\n", &cfg, NULL), 0);
    cr_assert_eq(cfg.grace_ms, 3000);
    ptc_config_destroy(&cfg);
}

/* The typed defaults are the catalog's, not constants of ptc_config.c. */
Test(ptc_config, defaults_come_from_the_catalog)
{
    struct dsh_catalog *cat;
    char err[256];
    struct ptc_config cfg;
    cr_assert_eq(dsh_catalog_open(&cat, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(parse("", &cfg, NULL), 0);
    const struct dsh_catalog_provider *p = dsh_catalog_find(cat, PTC);
    const struct {
        const char *key;
        int64_t value;
    } ints[] = {
        {"timeoutMs", cfg.timeout_ms},
        {"maxTimeoutMs", cfg.max_timeout_ms},
        {"maxOutputBytes", cfg.max_output_bytes},
        {"maxOldGenerationSizeMb", cfg.max_old_generation_size_mb},
        {"maxMessageBytes", cfg.max_message_bytes},
        {"maxPendingCalls", cfg.max_pending_calls},
        {"stopGraceMs", cfg.stop_grace_ms},
        {"graceMs", cfg.grace_ms},
        {"prewarmProcesses", cfg.prewarm_processes},
        {"prewarmIdleMs", cfg.prewarm_idle_ms},
        {"prewarmTotalProcesses", cfg.prewarm_total_processes},
        {"idleReleaseMs", cfg.idle_release_ms},
        {"maxRetainedOwners", cfg.max_retained_owners},
        {"maxMemoryMb", cfg.max_memory_mb},
        {"maxProcesses", cfg.max_processes},
        {"maxCpuPercent", cfg.max_cpu_percent},
        {"maxTempBytes", cfg.max_temp_bytes},
    };
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        const struct dsh_catalog_field *f = dsh_catalog_field_find(p, ints[i].key);
        cr_assert_not_null(f, "%s", ints[i].key);
        cr_assert_eq(f->def.kind, DSH_DEFAULT_VALUE);
        cr_assert_eq(f->def.value.integer, ints[i].value, "%s", ints[i].key);
    }
    const struct dsh_catalog_field *mode = dsh_catalog_field_find(p, "executionMode");
    cr_assert_str_eq(mode->def.value.text, ptc_execution_mode_name(cfg.execution_mode));
    ptc_config_destroy(&cfg);
    dsh_catalog_close(cat);
}

Test(ptc_config, values)
{
    struct ptc_config cfg;
    cr_assert_eq(parse("executionMode: vm-script\n"
                       "scriptPersistence: true\n"
                       "timeoutMs: 1000\n"
                       "maxTimeoutMs: 2000\n"
                       "maxOutputBytes: 4\n"
                       "maxOldGenerationSizeMb: 64\n"
                       "maxMessageBytes: 4294967295\n"
                       "maxPendingCalls: 3\n"
                       "stopGraceMs: 10\n"
                       "graceMs: 20\n"
                       "prewarmProcesses: 16\n"
                       "prewarmIdleMs: 1\n"
                       "prewarmTotalProcesses: 1024\n",
                       &cfg, NULL),
                 0);
    cr_assert_eq(cfg.execution_mode, PTC_EXECUTION_VM_SCRIPT);
    cr_assert(cfg.script_persistence);
    cr_assert(!cfg.repl_scoped);
    cr_assert_eq(cfg.timeout_ms, 1000);
    cr_assert_eq(cfg.max_timeout_ms, 2000);
    cr_assert_eq(cfg.max_output_bytes, 4);
    cr_assert_eq(cfg.max_old_generation_size_mb, 64);
    cr_assert_eq(cfg.max_message_bytes, 4294967295LL);
    cr_assert_eq(cfg.max_pending_calls, 3);
    cr_assert_eq(cfg.stop_grace_ms, 10);
    cr_assert_eq(cfg.grace_ms, 20);
    cr_assert_eq(cfg.prewarm_processes, 16);
    cr_assert_eq(cfg.prewarm_idle_ms, 1);
    cr_assert_eq(cfg.prewarm_total_processes, 1024);
    ptc_config_destroy(&cfg);
}

/* The pool's fields are integers within their catalog bounds, refused with their path otherwise. */
Test(ptc_config, prewarm_fields_are_validated)
{
    static const char *const bad[] = {
        "prewarmProcesses: -1\n", "prewarmProcesses: 17\n", "prewarmProcesses: one\n", "prewarmProcesses: 1.5\n",
        "prewarmIdleMs: 0\n",     "prewarmIdleMs: true\n", "prewarmTotalProcesses: -1\n", "prewarmTotalProcesses: 1025\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ptc_config cfg;
        struct dsh_diagnostics diags;
        cr_assert_eq(parse(bad[i], &cfg, &diags), -EINVAL, "%s", bad[i]);
        cr_assert_eq(diags.count, 1, "%s", bad[i]);
        cr_assert_eq(strncmp(diags.items[0].path, bad[i], strlen(diags.items[0].path)), 0, "%s", bad[i]);
        cr_assert_eq(cfg.prewarm_processes, 0);
        dsh_diagnostics_release(&diags);
    }
}

Test(ptc_config, repl_scoped_defaults_to_true_with_persistent_in_memory)
{
    struct ptc_config cfg;
    cr_assert_eq(parse("executionMode: persistent-in-memory\n", &cfg, NULL), 0);
    cr_assert_eq(cfg.execution_mode, PTC_EXECUTION_PERSISTENT_IN_MEMORY);
    cr_assert(cfg.repl_scoped);
    ptc_config_destroy(&cfg);

    cr_assert_eq(parse("executionMode: persistent-in-memory\nreplScoped: false\n", &cfg, NULL),
                 0);
    cr_assert(!cfg.repl_scoped);
    ptc_config_destroy(&cfg);

    cr_assert_eq(parse("executionMode: vm-script\n", &cfg, NULL), 0);
    cr_assert(!cfg.repl_scoped);
    ptc_config_destroy(&cfg);
}

Test(ptc_config, explicit_launch)
{
    struct ptc_config cfg;
    cr_assert_eq(parse("launch:\n  kind: node-script\n  executable: /usr/bin/node\n"
                       "  bootstrapPath: /srv/ptc/process.js\n",
                       &cfg, NULL),
                 0);
    cr_assert(cfg.launch.is_explicit);
    cr_assert_eq(cfg.launch.kind, PTC_LAUNCH_NODE_SCRIPT);
    cr_assert_str_eq(cfg.launch.executable, "/usr/bin/node");
    cr_assert_str_eq(cfg.launch.bootstrap_path, "/srv/ptc/process.js");
    ptc_config_destroy(&cfg);

    cr_assert_eq(parse("launch: {kind: embedded, executable: dsh-carrier}\n", &cfg, NULL), 0);
    cr_assert(cfg.launch.is_explicit);
    cr_assert_eq(cfg.launch.kind, PTC_LAUNCH_EMBEDDED);
    cr_assert_str_eq(cfg.launch.executable, "dsh-carrier");
    cr_assert_null(cfg.launch.bootstrap_path);
    ptc_config_destroy(&cfg);
}

Test(ptc_config, rejection_leaves_a_zeroed_config)
{
    struct ptc_config cfg;
    struct dsh_diagnostics diags;
    cr_assert_eq(parse("launch: {kind: embedded, executable: x, bootstrapPath: /p}\n"
                       "timeoutMs: 0\n",
                       &cfg, &diags),
                 -EINVAL);
    cr_assert_eq(diags.count, 2);
    cr_assert_str_eq(diags.items[0].path, "launch.bootstrapPath");
    cr_assert_str_eq(diags.items[1].path, "timeoutMs");
    cr_assert_eq(cfg.timeout_ms, 0);
    cr_assert_null(cfg.launch.executable);
    ptc_config_destroy(&cfg);
    ptc_config_destroy(NULL);
    dsh_diagnostics_release(&diags);
    dsh_diagnostics_release(NULL);
}

Test(ptc_config, syntax_error)
{
    struct ptc_config cfg;
    struct dsh_diagnostics diags;
    cr_assert_eq(parse("timeoutMs: [1\n", &cfg, &diags), -EINVAL);
    cr_assert_eq(diags.count, 1);
    cr_assert_str_eq(diags.items[0].path, "yaml");
    cr_assert_eq(diags.items[0].line, 2);
    dsh_diagnostics_release(&diags);
}

Test(ptc_config, execution_mode_names)
{
    cr_assert_str_eq(ptc_execution_mode_name(PTC_EXECUTION_PER_CALL), "per-call");
    cr_assert_str_eq(ptc_execution_mode_name(PTC_EXECUTION_PERSISTENT_IN_MEMORY),
                     "persistent-in-memory");
    cr_assert_null(ptc_execution_mode_name((enum ptc_execution_mode)42));
}

Test(getters, effective_values)
{
    yaml_document_t doc;
    struct dsh_catalog *cat;
    char err[256], *s = NULL;
    int64_t i = 0;
    bool b = false;
    cr_assert_eq(dsh_catalog_open(&cat, err, sizeof(err)), 0, "%s", err);
    const struct dsh_catalog_provider *p = dsh_catalog_find(cat, PTC);
    yaml_node_t *root = load_doc("executionMode: persistent-in-memory\ngraceMs: 7\n"
                                 "launch: {kind: embedded, executable: x}\n",
                                 &doc);

    cr_assert_eq(dsh_config_get_int(p, &doc, root, "graceMs", &i), 0);
    cr_assert_eq(i, 7);
    cr_assert_eq(dsh_config_get_int(p, &doc, root, "stopGraceMs", &i), 0);
    cr_assert_eq(i, 3000);
    cr_assert_eq(dsh_config_get_bool(p, &doc, root, "replScoped", &b), 0);
    cr_assert(b);
    cr_assert_eq(dsh_config_get_str(p, &doc, root, "launch.kind", &s), 0);
    cr_assert_str_eq(s, "embedded");
    free(s);
    cr_assert(dsh_config_is_set(p, &doc, root, "launch"));
    cr_assert(!dsh_config_is_set(p, &doc, root, "timeoutMs"));
    cr_assert_eq(dsh_config_get_str(p, &doc, root, "launch.bootstrapPath", &s), -ENOENT);
    /* Wrong getter for the type, unknown paths, paths through scalars. */
    cr_assert_eq(dsh_config_get_bool(p, &doc, root, "graceMs", &b), -EINVAL);
    cr_assert_eq(dsh_config_get_str(p, &doc, root, "timeoutMs", &s), -EINVAL);
    cr_assert_eq(dsh_config_get_int(p, &doc, root, "nope", &i), -EINVAL);
    cr_assert_eq(dsh_config_get_int(p, &doc, root, "graceMs.x", &i), -EINVAL);
    /* No config at all: everything is its default. */
    cr_assert_eq(dsh_config_get_bool(p, &doc, NULL, "replScoped", &b), 0);
    cr_assert(!b);
    yaml_document_delete(&doc);
    dsh_catalog_close(cat);
}

Test(getters, list_values_and_defaults)
{
    yaml_document_t doc;
    struct dsh_catalog *cat;
    char err[256], **items;
    size_t n;
    int64_t i;
    cr_assert_eq(dsh_catalog_open(&cat, err, sizeof(err)), 0, "%s", err);
    const struct dsh_catalog_provider *p = dsh_catalog_find(cat, "dsh-sandbox-linux");
    yaml_node_t *root = load_doc("extraWritableRoots: [/x, /y/z]\n", &doc);
    cr_assert_eq(dsh_config_get_list(p, &doc, root, "extraWritableRoots", &items, &n), 0);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(items[1], "/y/z");
    dsh_strv_free(items);
    cr_assert_eq(dsh_config_get_list(p, &doc, NULL, "extraWritableRoots", &items, &n), 0);
    cr_assert_eq(n, 0);
    cr_assert_null(items[0]);
    dsh_strv_free(items);
    cr_assert_eq(dsh_config_get_int(p, &doc, root, "maxLandlockAbi", &i), -ENOENT);
    cr_assert_eq(dsh_config_get_list(p, &doc, root, "maxLandlockAbi", &items, &n), -EINVAL);
    yaml_document_delete(&doc);
    dsh_catalog_close(cat);
}

/* The Python row in the shared struct: catalog defaults, and the fixed per-call values. */
Test(ptc_python_config, defaults_and_fixed_values)
{
    struct ptc_config cfg;
    struct dsh_diagnostics diags;
    cr_assert_eq(ptc_python_config_parse("", 0, &cfg, &diags), 0);
    cr_assert_eq(cfg.execution_mode, PTC_EXECUTION_PER_CALL);
    cr_assert_eq(cfg.timeout_ms, 120000);
    cr_assert_eq(cfg.max_timeout_ms, 120000, "no per-call overrides: the deadline is its own ceiling");
    cr_assert_eq(cfg.max_output_bytes, 67108864);
    cr_assert_eq(cfg.max_message_bytes, 134217728);
    cr_assert_eq(cfg.max_pending_calls, 128);
    cr_assert_eq(cfg.grace_ms, 3000);
    cr_assert_eq(cfg.prewarm_processes, 0, "no pool unless the row asks for one");
    cr_assert_eq(cfg.prewarm_total_processes, 0);
    cr_assert_eq(cfg.prewarm_idle_ms, 60000);
    cr_assert(cfg.launch.is_explicit);
    cr_assert_str_eq(cfg.launch.executable, "/usr/bin/python3");
    cr_assert_null(cfg.launch.bootstrap_path);
    ptc_config_destroy(&cfg);
}

Test(ptc_python_config, values_and_node_only_fields_refused)
{
    struct ptc_config cfg;
    struct dsh_diagnostics diags;
    const char *yaml = "python: python3\nbootstrapPath: /opt/b/process.py\ntimeoutMs: 5000\n"
                       "prewarmProcesses: 2\nprewarmTotalProcesses: 3\nprewarmIdleMs: 700\n";
    cr_assert_eq(ptc_python_config_parse(yaml, strlen(yaml), &cfg, &diags), 0);
    cr_assert_eq(cfg.timeout_ms, 5000);
    cr_assert_eq(cfg.prewarm_processes, 2);
    cr_assert_eq(cfg.prewarm_total_processes, 3);
    cr_assert_eq(cfg.prewarm_idle_ms, 700);
    cr_assert_eq(cfg.max_timeout_ms, 5000);
    cr_assert_str_eq(cfg.launch.executable, "python3");
    cr_assert_str_eq(cfg.launch.bootstrap_path, "/opt/b/process.py");
    ptc_config_destroy(&cfg);
    const char *node_only = "maxTimeoutMs: 9000\n";
    cr_assert_lt(ptc_python_config_parse(node_only, strlen(node_only), &cfg, &diags), 0);
    cr_assert_eq(cfg.launch.executable, NULL);
    dsh_diagnostics_release(&diags);
}

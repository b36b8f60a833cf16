/* What the reference host reads through config/: its service rows from a composed row's node
 * (the same readers as the text parses), the mapping lookup with its key semantics, and a node
 * emitted as events into the host's own emitter. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "dsh_text_buffer.h"
#include "helpers.h"

static const struct dsh_catalog_provider *provider(struct dsh_catalog **cat, const char *name)
{
    char msg[256] = "";
    cr_assert_eq(dsh_catalog_open(cat, msg, sizeof msg), 0, "%s", msg);
    const struct dsh_catalog_provider *p = dsh_catalog_find(*cat, name);
    cr_assert_not_null(p);
    return p;
}

Test(host_rows, sandbox_linux_host_fields)
{
    const char *yaml = "confineDelayMs: 250\nrequireFullEnforcement: true\n";
    struct dsh_sandbox_linux_config cfg;
    cr_assert_eq(dsh_sandbox_linux_config_parse(yaml, strlen(yaml), &cfg, NULL), 0);
    cr_expect_eq(cfg.confine_delay_ms, 250);
    cr_expect(cfg.require_full_enforcement);
    cr_expect(!cfg.has_max_landlock_abi);
    dsh_sandbox_linux_config_destroy(&cfg);
    cr_assert_eq(dsh_sandbox_linux_config_parse("", 0, &cfg, NULL), 0);
    cr_expect_eq(cfg.confine_delay_ms, 0);
    cr_expect(!cfg.require_full_enforcement);
    dsh_sandbox_linux_config_destroy(&cfg);
}

static int read_subprocess(const char *yaml, struct dsh_subprocess_local_config *cfg)
{
    yaml_document_t doc;
    yaml_node_t *root = load_doc(yaml, &doc);
    struct dsh_catalog *cat;
    int rc = dsh_subprocess_local_config_read(provider(&cat, "dsh-subprocess-local"), &doc, root, cfg);
    dsh_catalog_close(cat);
    yaml_document_delete(&doc);
    return rc;
}

Test(host_rows, subprocess_local_defaults_and_values)
{
    struct dsh_subprocess_local_config cfg;
    cr_assert_eq(read_subprocess("", &cfg), 0);
    cr_expect_eq(cfg.max_total_memory_mb, 16384);
    cr_expect_eq(cfg.max_total_processes, 4096);
    cr_expect_eq(cfg.fail_quiescence_observations, 0);
    cr_expect_eq(cfg.fault_freeze_skipped_ms, 0);
    cr_expect_null(cfg.cgroup_root);
    dsh_subprocess_local_config_destroy(&cfg);
    cr_assert_eq(read_subprocess("maxTotalMemoryMb: 512\nmaxTotalProcesses: 64\ncgroupRoot: /tmp/fake-cgroup\n", &cfg), 0);
    cr_expect_eq(cfg.max_total_memory_mb, 512);
    cr_expect_eq(cfg.max_total_processes, 64);
    cr_expect_str_eq(cfg.cgroup_root, "/tmp/fake-cgroup");
    dsh_subprocess_local_config_destroy(&cfg);
    dsh_subprocess_local_config_destroy(&cfg);
    dsh_subprocess_local_config_destroy(NULL);
    /* A value of another type (the row was not validated): the getter's error, nothing kept. */
    cr_expect_eq(read_subprocess("maxTotalProcesses: many\n", &cfg), -EINVAL);
    cr_expect_null(cfg.cgroup_root);
}

Test(host_rows, policy_read_from_a_node_of_a_larger_document)
{
    /* The host's rows live inside a profile: the config is a node, not a document of its own. */
    yaml_document_t doc;
    yaml_node_t *root = load_doc("- id: p\n  config:\n    mode: workspace-write\n    workspaceRoot: /w\n", &doc);
    yaml_node_t *row = yaml_document_get_node(&doc, root->data.sequence.items.start[0]);
    struct dsh_catalog *cat;
    struct dsh_sandbox_policy_config cfg;
    cr_assert_eq(dsh_sandbox_policy_config_read(provider(&cat, "dsh-sandbox-policy"), &doc,
                                                dsh_mapping_get(&doc, row, "config"), &cfg), 0);
    cr_expect_eq(cfg.mode, DSH_SANDBOX_WORKSPACE_WRITE);
    cr_expect_str_eq(cfg.workspace_root, "/w");
    dsh_sandbox_policy_config_destroy(&cfg);
    /* An absent config: the defaults, no workspace root. */
    cr_assert_eq(dsh_sandbox_policy_config_read(dsh_catalog_find(cat, "dsh-sandbox-policy"), &doc, NULL, &cfg), 0);
    cr_expect_eq(cfg.mode, DSH_SANDBOX_READ_ONLY);
    cr_expect_null(cfg.workspace_root);
    dsh_sandbox_policy_config_destroy(&cfg);
    dsh_catalog_close(cat);
    yaml_document_delete(&doc);
}

Test(host_rows, mapping_get_key_semantics)
{
    yaml_document_t doc;
    yaml_node_t *map = load_doc("\"id\\0x\": a\nid: b\nname: c\n", &doc);
    /* Whole text: "id\0x" is another key than "id". */
    cr_expect_str_eq((char *)dsh_mapping_get(&doc, map, "id")->data.scalar.value, "b");
    /* As strcmp() sees it: "id\0x" is "id", and the first one wins. */
    cr_expect_str_eq((char *)dsh_mapping_get_cstr(&doc, map, "id")->data.scalar.value, "a");
    cr_expect_str_eq((char *)dsh_mapping_get_cstr(&doc, map, "name")->data.scalar.value, "c");
    cr_expect_null(dsh_mapping_get_cstr(&doc, map, "i"));
    cr_expect_null(dsh_mapping_get_cstr(&doc, map, "idx"));
    cr_expect_null(dsh_mapping_get_cstr(&doc, NULL, "id"));
    cr_expect_null(dsh_mapping_get_cstr(&doc, dsh_mapping_get_cstr(&doc, map, "name"), "id"));
    yaml_document_delete(&doc);
}

Test(host_rows, node_emitted_as_events_keeps_scalar_styles)
{
    yaml_document_t doc;
    yaml_node_t *map = load_doc("a: \"true\"\nb: [1, x]\n", &doc);
    yaml_emitter_t e;
    yaml_event_t ev;
    struct dsh_text_buffer out = {0};
    cr_assert(yaml_emitter_initialize(&e));
    yaml_emitter_set_output(&e, dsh_text_buffer_write, &out);
    cr_assert(yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&e, &ev));
    cr_assert(yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(&e, &ev));
    cr_assert_eq(dsh_yaml_node_emit_events(&e, &doc, map), 0);
    cr_assert(yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev));
    cr_assert(yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) && yaml_emitter_flush(&e));
    yaml_emitter_delete(&e);
    cr_expect_str_eq(out.data, "a: \"true\"\nb:\n- 1\n- x\n");
    free(out.data);
    yaml_document_delete(&doc);
}

/* dsh_yaml_node_emit: a node subtree out as standalone YAML text, types kept. */
#include <string.h>

#include <criterion/criterion.h>

#include "helpers.h"

static char *emit(yaml_document_t *doc, yaml_node_t *node)
{
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(dsh_yaml_node_emit(doc, node, &text, &len), 0);
    cr_assert_not_null(text);
    cr_assert_eq(strlen(text), len);
    return text;
}

/* A composed row's config, emitted, is what load() receives. */
Test(emit, row_config_round_trip)
{
    yaml_document_t doc;
    yaml_node_t *root = load_doc("- name: '@deepseek-ai/dsh-ptc-runtime-node'\n"
                                 "  config:\n"
                                 "    executionMode: vm-script\n"
                                 "    scriptPersistence: true\n"
                                 "    timeoutMs: 5000\n"
                                 "    launch:\n"
                                 "      kind: node-script\n"
                                 "      executable: \"/opt/node bin/node\"\n"
                                 "- name: dsh-fs-local\n",
                                 &doc);
    yaml_node_t *row = yaml_document_get_node(&doc, root->data.sequence.items.start[0]);
    yaml_node_t *config = NULL;
    for (yaml_node_pair_t *p = row->data.mapping.pairs.start; p < row->data.mapping.pairs.top; p++)
        if (strcmp((char *)yaml_document_get_node(&doc, p->key)->data.scalar.value, "config") == 0)
            config = yaml_document_get_node(&doc, p->value);
    cr_assert_not_null(config);

    char *text = emit(&doc, config);
    cr_assert_null(strstr(text, "dsh-fs-local"), "emitted more than the subtree:\n%s", text);
    struct ptc_config cfg;
    struct dsh_diagnostics diags;
    cr_assert_eq(ptc_config_parse(text, strlen(text), &cfg, &diags), 0, "%s", text);
    cr_assert_eq(cfg.execution_mode, PTC_EXECUTION_VM_SCRIPT);
    cr_assert(cfg.script_persistence);
    cr_assert_eq(cfg.timeout_ms, 5000);
    cr_assert_str_eq(cfg.launch.executable, "/opt/node bin/node");
    ptc_config_destroy(&cfg);
    dsh_diagnostics_release(&diags);

    /* Emitting the re-loaded text again gives the same text. */
    yaml_document_t again;
    char *text2 = emit(&again, load_doc(text, &again));
    cr_assert_str_eq(text2, text);
    free(text2);
    free(text);
    yaml_document_delete(&again);
    yaml_document_delete(&doc);
}

/* A quoted "5" must stay a string after the round trip, or a rejected row
 * would turn valid on its way to the plugin. */
Test(emit, quoted_scalars_stay_strings)
{
    yaml_document_t doc;
    char *text = emit(&doc, load_doc("timeoutMs: \"5\"\nreplScoped: 'true'\n", &doc));
    struct dsh_diagnostics diags;
    cr_assert_eq(validate(PTC, text, &diags), -EINVAL, "%s", text);
    cr_assert_eq(diags.count, 2);
    expect_diag(&diags, "timeoutMs", 1, 12, "got string \"5\"");
    expect_diag(&diags, "replScoped", 2, 13, "got string \"true\"");
    dsh_diagnostics_release(&diags);
    free(text);
    yaml_document_delete(&doc);
}

Test(emit, lists_and_shared_nodes)
{
    yaml_document_t doc, out;
    char *text = emit(&doc, load_doc("a: &roots [/x, /y]\nb: *roots\nc: {d: [1, [2, 3]]}\n",
                                     &doc));
    yaml_node_t *root = load_doc(text, &out);
    cr_assert_eq(root->type, YAML_MAPPING_NODE);
    cr_assert_eq(root->data.mapping.pairs.top - root->data.mapping.pairs.start, 3);
    yaml_node_t *a = yaml_document_get_node(&out, root->data.mapping.pairs.start[0].value);
    yaml_node_t *b = yaml_document_get_node(&out, root->data.mapping.pairs.start[1].value);
    cr_assert_eq(a->type, YAML_SEQUENCE_NODE);
    cr_assert_eq(b->type, YAML_SEQUENCE_NODE);
    cr_assert_eq(b->data.sequence.items.top - b->data.sequence.items.start, 2);
    yaml_node_t *y = yaml_document_get_node(&out, b->data.sequence.items.start[1]);
    cr_assert_str_eq((char *)y->data.scalar.value, "/y");
    free(text);
    yaml_document_delete(&out);
    yaml_document_delete(&doc);
}

Test(emit, scalar_and_empty_mapping)
{
    yaml_document_t doc, out;
    char *text = emit(&doc, load_doc("{}\n", &doc));
    yaml_node_t *root = load_doc(text, &out);
    cr_assert_eq(root->type, YAML_MAPPING_NODE);
    cr_assert_eq(root->data.mapping.pairs.top, root->data.mapping.pairs.start);
    free(text);
    yaml_document_delete(&out);
    yaml_document_delete(&doc);

    text = emit(&doc, load_doc("\"multi\\nline: text\"\n", &doc));
    root = load_doc(text, &out);
    cr_assert_eq(root->type, YAML_SCALAR_NODE);
    cr_assert_str_eq((char *)root->data.scalar.value, "multi\nline: text");
    free(text);
    yaml_document_delete(&out);
    yaml_document_delete(&doc);
}

Test(emit, refuses_cycles_and_foreign_nodes)
{
    yaml_document_t doc, other;
    char *text = NULL;
    size_t len = 0;
    yaml_node_t *root = load_doc("&a [1, *a]\n", &doc);
    cr_assert_eq(dsh_yaml_node_emit(&doc, root, &text, &len), -ELOOP);
    cr_assert_null(text);
    yaml_node_t *foreign = load_doc("x: 1\n", &other);
    cr_assert_eq(dsh_yaml_node_emit(&doc, foreign, &text, &len), -EINVAL);
    cr_assert_eq(dsh_yaml_node_emit(&doc, NULL, &text, &len), -EINVAL);
    yaml_document_delete(&other);
    yaml_document_delete(&doc);
}

/* The catalog: embedded verbatim, complete, and read strictly so that a typo
 * in catalog.yaml fails instead of silently widening what rows accept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "helpers.h"

Test(catalog, embedded_text_is_catalog_yaml)
{
    FILE *f = fopen(CATALOG_PATH, "rbe");
    cr_assert_not_null(f, "%s", CATALOG_PATH);
    char *file = NULL;
    size_t file_len = 0;
    FILE *mem = open_memstream(&file, &file_len);
    int c;
    while ((c = fgetc(f)) != EOF)
        fputc(c, mem);
    fclose(mem);
    fclose(f);
    size_t len;
    const char *text = dsh_catalog_embedded_text(&len);
    cr_assert_eq(len, file_len);
    cr_assert(memcmp(text, file, len) == 0);
    cr_assert_eq(text[len], '\0');
    free(file);
}

Test(catalog, providers_and_fields)
{
    static const char *const providers[] = {
        PTC, "dsh-fs-local", "dsh-subprocess-local", "dsh-sandbox-linux",
        "dsh-sandbox-policy", "dsh-demo-tools", "dsh-mcp-bindings", "dsh-native-bindings",
        "dsh-workflow-ptc", PTC_PYTHON_PROVIDER_NAME,
    };
    static const char *const ptc_fields[] = {
        "executionMode", "scriptPersistence", "replScoped", "timeoutMs", "maxTimeoutMs",
        "maxOutputBytes", "discardCompletion", "maxOldGenerationSizeMb", "maxMessageBytes", "maxPendingCalls",
        "stopGraceMs", "prewarmProcesses", "prewarmTotalProcesses", "prewarmIdleMs", "idleReleaseMs", "maxRetainedOwners", "graceMs",
        "maxMemoryMb", "maxProcesses", "maxCpuPercent", "maxTempBytes", "requireResourceLimits", "launch", "launch.kind",
        "launch.executable", "launch.bootstrapPath", "launch.stripperPath",
    };
    struct dsh_catalog *cat;
    char err[256];
    cr_assert_eq(dsh_catalog_open(&cat, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(cat->n_providers, 10);
    for (size_t i = 0; i < 10; i++)
        cr_assert_not_null(dsh_catalog_find(cat, providers[i]), "%s", providers[i]);
    cr_assert_null(dsh_catalog_find(cat, "dsh-nope"));
    cr_assert_null(dsh_catalog_find(cat, NULL));

    const struct dsh_catalog_provider *p = dsh_catalog_find(cat, PTC);
    cr_assert_eq(p->n_fields, 23);
    for (size_t i = 0; i < sizeof(ptc_fields) / sizeof(ptc_fields[0]); i++)
        cr_assert_not_null(dsh_catalog_field_find(p, ptc_fields[i]), "%s", ptc_fields[i]);
    cr_assert_null(dsh_catalog_field_find(p, "launch.nope"));
    cr_assert_null(dsh_catalog_field_find(p, "timeoutMs.x"));
    /* The Python row has no per-call knobs: no maxTimeoutMs, executionMode or launch. */
    const struct dsh_catalog_provider *py = dsh_catalog_find(cat, PTC_PYTHON_PROVIDER_NAME);
    cr_assert_eq(py->n_fields, 16);
    cr_assert_null(dsh_catalog_field_find(py, "maxTimeoutMs"));
    cr_assert_null(dsh_catalog_field_find(py, "executionMode"));
    cr_assert_not_null(dsh_catalog_field_find(py, "prewarmProcesses"));
    cr_assert_not_null(dsh_catalog_field_find(py, "prewarmTotalProcesses"));
    cr_assert_not_null(dsh_catalog_field_find(py, "prewarmIdleMs"));

    const struct dsh_catalog_field *repl = dsh_catalog_field_find(p, "replScoped");
    cr_assert_eq(repl->def.kind, DSH_DEFAULT_CONDITIONAL);
    cr_assert_str_eq(repl->def.if_field, "executionMode");
    cr_assert_str_eq(repl->def.if_equals, "persistent-in-memory");
    cr_assert(repl->def.value.boolean);
    cr_assert(!repl->def.otherwise.boolean);
    const struct dsh_catalog_field *launch = dsh_catalog_field_find(p, "launch");
    cr_assert_eq(launch->def.kind, DSH_DEFAULT_NONE);
    cr_assert_not_null(strstr(launch->def.text, "local carrier"));
    const struct dsh_catalog_field *roots =
        dsh_catalog_field_find(dsh_catalog_find(cat, "dsh-sandbox-linux"), "extraWritableRoots");
    cr_assert_eq(roots->type, DSH_FIELD_LIST);
    cr_assert_eq(roots->item_type, DSH_FIELD_PATH);
    cr_assert_eq(roots->def.value.n_items, 0);
    dsh_catalog_close(cat);
    dsh_catalog_close(NULL);
}

/* A catalog with one field; field_yaml is indented by 6 and starts at line 4. */
static void expect_bad_field(const char *field_yaml, const char *where, const char *needle)
{
    char text[2048], err[256];
    struct dsh_catalog *cat = NULL;
    snprintf(text, sizeof(text), "providers:\n  - name: p\n    fields:\n%s", field_yaml);
    int rc = dsh_catalog_open_text(text, strlen(text), &cat, err, sizeof(err));
    cr_assert_eq(rc, -EINVAL, "accepted:\n%s", text);
    cr_assert_null(cat);
    cr_assert(strncmp(err, where, strlen(where)) == 0, "position: %s, want %s", err, where);
    cr_assert(strstr(err, needle), "message lacks \"%s\": %s", needle, err);
}

Test(catalog, minimal_catalog_opens)
{
    const char *text = "providers:\n  - name: p\n    fields:\n"
                       "      - {key: a, type: integer, default: 3, min: 1, meaning: m}\n";
    struct dsh_catalog *cat;
    char err[256];
    cr_assert_eq(dsh_catalog_open_text(text, strlen(text), &cat, err, sizeof(err)), 0, "%s",
                 err);
    dsh_catalog_close(cat);
}

Test(catalog, rejects_unknown_keys)
{
    expect_bad_field("      - {key: a, type: integer, default: 3, maximum: 9, meaning: m}\n",
                     "catalog.yaml:4:", "unknown key \"maximum\"");
}

Test(catalog, rejects_unknown_types)
{
    expect_bad_field("      - {key: a, type: float, default: 3, meaning: m}\n", "catalog.yaml:4:",
                     "unknown type");
}

Test(catalog, rejects_defaults_that_break_their_field)
{
    expect_bad_field("      - {key: a, type: integer, default: 0, min: 1, meaning: m}\n",
                     "catalog.yaml:4:", "outside min..max");
    expect_bad_field("      - {key: a, type: enum, values: [x, y], default: z, meaning: m}\n",
                     "catalog.yaml:4:", "not one of its values");
    expect_bad_field("      - {key: a, type: boolean, default: yes, meaning: m}\n",
                     "catalog.yaml:4:", "true or false");
    expect_bad_field("      - {key: a, type: list, items: path, default: [rel], meaning: m}\n",
                     "catalog.yaml:4:", "absolute path");
}

Test(catalog, lists_of_objects)
{
    struct dsh_catalog *cat;
    char err[256];
    cr_assert_eq(dsh_catalog_open(&cat, err, sizeof(err)), 0, "%s", err);
    const struct dsh_catalog_field *servers =
        dsh_catalog_field_find(dsh_catalog_find(cat, "dsh-mcp-bindings"), "servers");
    cr_assert_not_null(servers);
    cr_expect_eq(servers->type, DSH_FIELD_LIST);
    cr_expect_eq(servers->item_type, DSH_FIELD_OBJECT);
    cr_assert_eq(servers->n_fields, 4);
    cr_expect_str_eq(servers->fields[0].key, "name");
    cr_expect(servers->fields[0].required && servers->fields[1].required);
    cr_expect_eq(servers->fields[3].item_type, DSH_FIELD_STRING);
    dsh_catalog_close(cat);
    expect_bad_field("      - {key: a, type: list, items: object, default: [], meaning: m}\n",
                     "catalog.yaml:4:",
                     "`fields` goes with (and only with) objects, maps and lists of objects");
    expect_bad_field("      - {key: a, type: list, items: list, default: [], meaning: m}\n",
                     "catalog.yaml:4:", "list items must be scalars or objects");
}

Test(catalog, rejects_optional_fields_without_default)
{
    expect_bad_field("      - {key: a, type: string, meaning: m}\n", "catalog.yaml:4:9",
                     "needs default or defaultText");
}

Test(catalog, rejects_dangling_references)
{
    expect_bad_field("      - key: a\n        type: boolean\n        default: false\n"
                     "        requires: {when: true, field: b, equals: x}\n        meaning: m\n",
                     "catalog.yaml:4:", "requires names no scalar sibling b");
    expect_bad_field("      - {key: a, type: integer, default: 1, atMost: b, meaning: m}\n",
                     "catalog.yaml:4:", "atMost needs two integer siblings");
    expect_bad_field("      - key: a\n        type: boolean\n        meaning: m\n"
                     "        default: {if: {field: b, equals: x}, then: true, else: false}\n",
                     "catalog.yaml:4:", "default if names no plain sibling b");
}

Test(catalog, rejects_at_most_defaults_out_of_order)
{
    expect_bad_field("      - {key: a, type: integer, default: 5, atMost: b, meaning: m}\n"
                     "      - {key: b, type: integer, default: 4, meaning: m}\n",
                     "catalog.yaml:4:", "default exceeds the default of b");
}

Test(catalog, rejects_duplicates)
{
    expect_bad_field("      - {key: a, type: integer, default: 5, meaning: m}\n"
                     "      - {key: a, type: integer, default: 4, meaning: m}\n",
                     "catalog.yaml:5:", "duplicate field a");
    char err[256];
    struct dsh_catalog *cat;
    const char *text = "providers:\n  - {name: p, fields: []}\n  - {name: p, fields: []}\n";
    cr_assert_eq(dsh_catalog_open_text(text, strlen(text), &cat, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "catalog.yaml:3:5: duplicate provider p"), "%s", err);
}

Test(catalog, rejects_syntax_errors_and_empty_text)
{
    char err[256];
    struct dsh_catalog *cat;
    cr_assert_eq(dsh_catalog_open_text("providers: [\n", 13, &cat, err, sizeof(err)), -EINVAL);
    cr_assert(strncmp(err, "catalog.yaml:2:", 15) == 0, "%s", err);
    cr_assert_eq(dsh_catalog_open_text("", 0, &cat, err, sizeof(err)), -EINVAL);
    cr_assert(strstr(err, "empty"), "%s", err);
}

/* The workflow engine's row: four integer caps with defaults and ranges. */
Test(catalog, workflow_engine_fields)
{
    struct dsh_catalog *cat;
    char err[256];
    cr_assert_eq(dsh_catalog_open(&cat, err, sizeof(err)), 0, "%s", err);
    const struct dsh_catalog_provider *p = dsh_catalog_find(cat, "dsh-workflow-ptc");
    cr_assert_not_null(p);
    cr_assert_eq(p->n_fields, 6);
    static const struct { const char *key; int64_t def, min; } want[] = {
        {"maxConcurrentAgents", 4, 1}, {"maxTotalAgents", 100, 1},
        {"maxItemsPerCall", 1000, 1}, {"syncTimeoutMs", 5000, 1},
    };
    for (size_t i = 0; i < 4; i++) {
        const struct dsh_catalog_field *f = dsh_catalog_field_find(p, want[i].key);
        cr_assert_not_null(f, "%s", want[i].key);
        cr_assert_eq(f->type, DSH_FIELD_INTEGER);
        cr_assert_eq(f->def.value.integer, want[i].def, "%s default", want[i].key);
        cr_assert(f->has_min && f->min == want[i].min && f->has_max, "%s range", want[i].key);
    }
    /* Read by the host: the argv template of the "command" subagent provider. */
    const struct dsh_catalog_field *t = dsh_catalog_field_find(p, "commandTemplate");
    cr_assert_not_null(t);
    cr_assert_eq(t->type, DSH_FIELD_LIST);
    cr_assert_eq(t->item_type, DSH_FIELD_STRING);
    /* Ralph loops are opt-in: off unless a row enables them. */
    const struct dsh_catalog_field *enabled = dsh_catalog_field_find(p, "ralph.enabled");
    cr_assert_not_null(enabled);
    cr_assert_eq(enabled->type, DSH_FIELD_BOOLEAN);
    cr_assert(!enabled->def.value.boolean);
    cr_assert_eq(dsh_catalog_field_find(p, "ralph.maxIterations")->def.value.integer, 10);
    dsh_catalog_close(cat);
}

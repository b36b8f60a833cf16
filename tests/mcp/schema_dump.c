/* The run_code declarations dsh makes of recorded tools/list answers, for schema-oracle.test.mjs:
 * each FILE is {"server": NAME, "tools": [...]} (a fixture of tests/mcp/schemas/), mounted as one
 * downstream server in order; stdout gets dshh__mcp_downstream_declare of them all, or with
 * --tool NS.TOOL first, dshh__mcp_downstream_declare_tool of that one (exit 3 when there is none).
 * Usage: mcp-schema-dump [--tool NS.TOOL] FILE... */
#include "dshh_mcp_downstream.h"
#include "dshh_mcp_typescript.h"

#include "dsh_json_get.h"
#include "dsh_strv.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mount(struct dshh_mcp_server *s, const char *path, struct dsh_strv *namespaces)
{
    json_object *fixture = json_object_from_file(path);
    const char *name = dsh_json_get_text(fixture, "server");
    json_object *tools = dsh_json_get_array(fixture, "tools");
    if (!name || !tools) {
        fprintf(stderr, "%s: not {\"server\": NAME, \"tools\": [...]}\n", path);
        return -1;
    }
    s->name = strdup(name);
    s->ident = dshh__mcp_identifier(name, DSH_BINDING_GLOBAL, (const char *const *)namespaces->v);
    dsh_strv_push(namespaces, s->ident);
    s->tools = calloc(json_object_array_length(tools), sizeof(*s->tools));
    struct dsh_strv idents = {0};
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *t = json_object_array_get_idx(tools, i);
        const char *tool = dsh_json_get_text(t, "name"), *description = dsh_json_get_text(t, "description");
        if (!tool)
            continue;
        struct dshh_mcp_tool *slot = &s->tools[s->ntools++];
        slot->name = strdup(tool);
        slot->ident = dshh__mcp_identifier(tool, DSH_BINDING_FUNCTION, (const char *const *)idents.v);
        dsh_strv_push(&idents, slot->ident);
        slot->description = description ? strdup(description) : NULL;
        slot->input_schema = json_object_get(dsh_json_get_object(t, "inputSchema"));
        slot->output_schema = json_object_get(dsh_json_get_object(t, "outputSchema"));
    }
    dsh_strv_clear(&idents);
    json_object_put(fixture);
    return 0;
}

int main(int argc, char **argv)
{
    const char *tool = NULL;
    int first = 1;
    if (argc > 2 && !strcmp(argv[1], "--tool")) {
        tool = argv[2];
        first = 3;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: mcp-schema-dump [--tool NS.TOOL] FILE...\n");
        return 2;
    }
    struct dshh_mcp_downstream ds = {.servers = calloc((size_t)(argc - first), sizeof(*ds.servers))};
    struct dsh_strv namespaces = {0};
    for (int i = first; i < argc; i++)
        if (mount(&ds.servers[ds.n++], argv[i], &namespaces) < 0)
            return 2;
    int rc = 0;
    if (tool)
        rc = dshh__mcp_downstream_declare_tool(&ds, tool, stdout) == 0 ? 0 : 3;
    else
        dshh__mcp_downstream_declare(&ds, stdout);
    for (size_t i = 0; i < ds.n; i++) {
        for (size_t t = 0; t < ds.servers[i].ntools; t++) {
            struct dshh_mcp_tool *slot = &ds.servers[i].tools[t];
            free(slot->name);
            free(slot->ident);
            free(slot->description);
            json_object_put(slot->input_schema);
            json_object_put(slot->output_schema);
        }
        free(ds.servers[i].tools);
        free(ds.servers[i].name);
        free(ds.servers[i].ident);
    }
    free(ds.servers);
    dsh_strv_clear(&namespaces);
    return rc;
}

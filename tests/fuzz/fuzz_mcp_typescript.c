/* JSON Schema to TypeScript declarations (examples/host/mcp/dshh_mcp_typescript.c): a downstream MCP
 * server's tool schemas and names become the declarations `dsh mcp` shows the model. Any schema:
 * the declaration is one well-formed type (brackets balance outside string literals and
 * comments, every doc comment ends only at its end) and stays within a budget of the schema's
 * size, so a server cannot make dsh print an exponential declaration. Any name: the identifier
 * is a portable binding name of its role, not one already taken. With DSH_FUZZ_DECLARATIONS=DIR
 * each declaration is also written to DIR as a TypeScript file, which declarations.mjs gives to
 * the pinned Node's TypeScript parser (module.stripTypeScriptTypes). Every $ref target gets a
 * named type (an identifier with the prefix, none twice), and a $ref cycle or a target referenced
 * from many places is printed once as its alias. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_binding_names.h"
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_mcp_typescript.h"
#include "fuzz_target.h"

/* The declaration may be this many times the schema's text, plus a constant. */
#define DECLARATION_BUDGET(schema_len) (32 * (schema_len) + 4096)

/* Whether text is one well-formed type: brackets nest and close, string literals are JSON
 * strings (they come from json-c), block comments close. */
static bool well_formed(const char *text, size_t len)
{
    char stack[4096];
    size_t depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '"') {
            for (i++; i < len && text[i] != '"'; i++)
                if (text[i] == '\\')
                    i++;
            if (i >= len)
                return false;
        } else if (c == '/' && i + 2 < len && text[i + 1] == '*') {
            const char *end = strstr(text + i + 2, "*/");
            if (!end)
                return false;
            i = (size_t)(end - text) + 1;
        } else if (c == '{' || c == '[' || c == '(' || c == '<') {
            if (depth == sizeof stack)
                return false;
            stack[depth++] = c == '{' ? '}' : c == '[' ? ']' : c == '(' ? ')' : '>';
        } else if (c == '}' || c == ']' || c == ')' || (c == '>' && depth && stack[depth - 1] == '>')) {
            if (!depth || stack[--depth] != c)
                return false;
        }
    }
    return depth == 0;
}

static void check_identifier(const char *name)
{
    static const char *const taken[] = {"tools", "tools_2", "x", NULL};
    for (int role = DSH_BINDING_GLOBAL; role <= DSH_BINDING_FUNCTION; role++) {
        char *id = dshh__mcp_identifier(name, (enum dsh_binding_name_role)role, taken);
        fuzz_check(id && *id, "an identifier for every name");
        fuzz_check(strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(id) &&
                       !(id[0] >= '0' && id[0] <= '9'),
                   "identifier %s", id);
        fuzz_check(!dsh_binding_name_problem((enum dsh_binding_name_role)role, id), "%s: %s", id,
                   dsh_binding_name_problem((enum dsh_binding_name_role)role, id));
        for (const char *const *t = taken; *t; t++)
            fuzz_check(strcmp(id, *t), "identifier %s is taken", id);
        free(id);
    }
}

/* Every named type ("type NAME = " at a line's start) is an identifier with the prefix, declared
 * once, and recorded in taken; "ns_tool_Input" was taken before. */
static void check_names(const char *aliases, json_object *taken)
{
    json_object *seen = json_object_new_object();
    for (const char *p = aliases; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, "type ", 5))
            continue;
        size_t len = strspn(p + 5, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        char *name = strndup(p + 5, len);
        fuzz_check(!strncmp(p + 5 + len, " = ", 3) && !strncmp(name, "ns_tool_", 8) && name[8], "type name %.80s", p);
        fuzz_check(strcmp(name, "ns_tool_Input") && !dsh_json_has(seen, name) && dsh_json_has(taken, name),
                   "type name %s twice or not recorded", name);
        json_object_object_add(seen, name, NULL);
        free(name);
    }
    json_object_put(seen);
}

static void write_declaration(const char *aliases, const char *type, const char *comment)
{
    static unsigned count;
    const char *dir = getenv("DSH_FUZZ_DECLARATIONS");
    if (!dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%u.ts", dir, count++);
    FILE *f = fopen(path, "w");
    fuzz_check(f != NULL, "%s", path);
    fprintf(f, "%sdeclare function f(input: %s): void;\n%sdeclare const x: 1;\n", aliases, type, comment);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = strndup((const char *)data, size);
    check_identifier(name);

    json_object *schema = dsh_json_parse_strict((const char *)data, size);
    char *aliases = NULL, *type = NULL, *comment = NULL;
    size_t aliases_len = 0, type_len = 0, comment_len = 0;
    json_object *taken = json_object_new_object();
    json_object_object_add(taken, "ns_tool_Input", NULL); /* taken before: the schema's root gets another */
    struct dshh_mcp_schema_types *types = dshh__mcp_schema_types_new(schema, "ns_tool_", "Input", taken);
    fuzz_check(types != NULL, "schema types");
    FILE *out = open_memstream(&aliases, &aliases_len);
    dshh__mcp_schema_aliases(types, out);
    fclose(out);
    out = open_memstream(&type, &type_len);
    dshh__mcp_schema_root_type(types, out, 2);
    fclose(out);
    check_names(aliases, taken);
    dshh__mcp_schema_types_free(types);
    json_object_put(taken);
    out = open_memstream(&comment, &comment_len);
    dshh__mcp_doc_comment(name, out, 2);
    fclose(out);
    size_t total = aliases_len + type_len + comment_len;
    fuzz_check(total <= DECLARATION_BUDGET(size), "a %zu-byte schema made a %zu-byte declaration", size, total);
    fuzz_check(well_formed(aliases, aliases_len), "not well-formed aliases: %s", aliases);
    fuzz_check(well_formed(type, type_len), "not one type: %s", type);
    fuzz_check(well_formed(comment, comment_len), "not one comment: %s", comment);
    write_declaration(aliases, type, comment);
    free(aliases);
    free(type);
    free(comment);
    json_object_put(schema);
    free(name);
    return 0;
}

/* JSON Schema to TypeScript declarations (examples/host/mcp/dshh_mcp_typescript.c): a downstream MCP
 * server's tool schemas and names become the declarations `dsh mcp` shows the model. Any schema:
 * the declaration is one well-formed type (brackets balance outside string literals and
 * comments, every doc comment ends only at its end) and stays within a budget of the schema's
 * size, so a server cannot make dsh print an exponential declaration. Any name: the identifier
 * is a portable binding name of its role, not one already taken. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_binding_names.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = strndup((const char *)data, size);
    check_identifier(name);

    json_object *schema = dsh_json_parse_strict((const char *)data, size);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    dshh__mcp_schema_type(schema, out, 2);
    dshh__mcp_doc_comment(name, out, 2);
    fclose(out);
    fuzz_check(len <= DECLARATION_BUDGET(size), "a %zu-byte schema made a %zu-byte declaration", size, len);
    fuzz_check(well_formed(text, len), "not one type: %s", text);
    free(text);
    json_object_put(schema);
    free(name);
    return 0;
}

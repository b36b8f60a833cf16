/* Unit level: MCP names mapped to binding identifiers (every result is a name the runtime accepts)
 * and JSON Schemas turned into TypeScript types for the run_code description. */
#include "dshh_mcp_typescript.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static void expect_ident(const char *name, enum dsh_binding_name_role role, const char *const *taken,
                         const char *want)
{
    char *got = dshh__mcp_identifier(name, role, taken);
    cr_assert_not_null(got);
    cr_expect_str_eq(got, want, "%s -> %s, want %s", name, got, want);
    cr_expect_null(dsh_binding_name_problem(role, got), "%s: %s", got, dsh_binding_name_problem(role, got));
    free(got);
}

Test(mcp_names, invalid_characters_and_leading_digits)
{
    expect_ident("issue-tracker", DSH_BINDING_GLOBAL, NULL, "issue_tracker");
    expect_ident("fail-always", DSH_BINDING_FUNCTION, NULL, "fail_always");
    expect_ident("a$b.c d", DSH_BINDING_FUNCTION, NULL, "a_b_c_d");
    expect_ident("9lives", DSH_BINDING_FUNCTION, NULL, "_9lives");
    expect_ident("caf\xc3\xa9", DSH_BINDING_FUNCTION, NULL, "caf__");
    expect_ident("", DSH_BINDING_FUNCTION, NULL, "__");
    expect_ident("search_issues", DSH_BINDING_FUNCTION, NULL, "search_issues"); /* control: kept */
}

Test(mcp_names, reserved_names_get_a_trailing_underscore)
{
    expect_ident("delete", DSH_BINDING_FUNCTION, NULL, "delete_");
    expect_ident("lambda", DSH_BINDING_FUNCTION, NULL, "lambda_");
    expect_ident("match", DSH_BINDING_GLOBAL, NULL, "match_");
    expect_ident("message", DSH_BINDING_FUNCTION, NULL, "message_");
    expect_ident("message", DSH_BINDING_GLOBAL, NULL, "message"); /* only error members are refused */
    expect_ident("inspect", DSH_BINDING_GLOBAL, NULL, "inspect_");
    expect_ident("inspect", DSH_BINDING_FUNCTION, NULL, "inspect");
    expect_ident("Object", DSH_BINDING_GLOBAL, NULL, "Object_");
    expect_ident("McpToolError", DSH_BINDING_GLOBAL, NULL, "McpToolError_");
    expect_ident("__init__", DSH_BINDING_FUNCTION, NULL, "__init_");
}

Test(mcp_names, taken_names_get_a_counter)
{
    const char *const demo[] = {"tools", NULL};
    expect_ident("tools", DSH_BINDING_GLOBAL, demo, "tools_2");
    const char *const two[] = {"x", "x_2", NULL};
    expect_ident("x", DSH_BINDING_FUNCTION, two, "x_3");
    const char *const mapped[] = {"a_b", NULL};
    expect_ident("a-b", DSH_BINDING_FUNCTION, mapped, "a_b_2");
}

static char *ts(const char *schema_json)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    json_object *schema = json_tokener_parse(schema_json);
    json_object *taken = json_object_new_object();
    struct dshh_mcp_schema_types *types = dshh__mcp_schema_types_new(schema, "ns_t_", "Input", taken);
    dshh__mcp_schema_aliases(types, out);
    dshh__mcp_schema_root_type(types, out, 0);
    dshh__mcp_schema_types_free(types);
    json_object_put(taken);
    json_object_put(schema);
    fclose(out);
    return text;
}

Test(mcp_typescript, schemas_become_types)
{
    struct {
        const char *schema, *want;
    } cases[] = {
        {"{\"type\":\"string\"}", "string"},
        {"{\"type\":\"integer\"}", "number"},
        {"{\"type\":[\"string\",\"null\"]}", "string | null"},
        {"{\"enum\":[\"a\",1,null]}", "\"a\" | 1 | null"},
        {"{\"const\":\"x\"}", "\"x\""},
        {"{\"anyOf\":[{\"type\":\"boolean\"},{\"type\":\"array\",\"items\":{\"type\":\"number\"}}]}",
         "boolean | Array<number>"},
        {"{\"type\":\"array\"}", "unknown[]"},
        {"{\"type\":\"object\"}", "Record<string, unknown>"},
        {"{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\",\"description\":\"the */ query\"},"
         "\"max-n\":{\"type\":\"number\"}},\"required\":[\"q\"]}",
         "{\n  /** the *\\/ query */\n  q: string;\n  \"max-n\"?: number;\n}"},
        {"{\"$ref\":\"#/x\"}", "unknown"},
        {"true", "unknown"},
        {"false", "never"},
        /* $ref: each target is a named type, printed once; a cycle through braces is fine */
        {"{\"$defs\":{\"N\":{\"type\":\"object\",\"properties\":{\"next\":{\"$ref\":\"#/$defs/N\"}}}},"
         "\"$ref\":\"#/$defs/N\"}",
         "type ns_t_N = {\n  next?: ns_t_N;\n};\nns_t_N"},
        {"{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}", "type ns_t_Input = Array<ns_t_Input>;\nns_t_Input"},
        /* a bare cycle would be an alias circularly referencing itself */
        {"{\"definitions\":{\"A\":{\"anyOf\":[{\"$ref\":\"#/definitions/A\"},{\"type\":\"string\"}]}},"
         "\"$ref\":\"#/definitions/A\"}",
         "type ns_t_A = unknown | string;\nns_t_A"},
        /* allOf: an intersection of its typed members */
        {"{\"allOf\":[{\"type\":\"string\"},{\"description\":\"x\"},{\"enum\":[\"a\",\"b\"]}]}",
         "(string) & (\"a\" | \"b\")"},
        {"{\"type\":[\"integer\",\"null\"]}", "number | null"},
        /* tuples: minItems are required, the rest is the rest schema, closed without one */
        {"{\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"number\"}],\"minItems\":1,"
         "\"items\":{\"type\":\"boolean\"}}",
         "[string, (number)?, ...Array<boolean>]"},
        {"{\"type\":\"array\",\"items\":[{\"type\":\"null\"}],\"minItems\":1}", "[null]"},
        /* index signatures: typed additionalProperties and patternProperties */
        {"{\"type\":\"object\",\"additionalProperties\":{\"type\":\"number\"}}",
         "{ [key: string]: number }"},
        {"{\"type\":\"object\",\"additionalProperties\":false}", "Record<string, never>"},
        {"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"default\":\"z\"}},"
         "\"patternProperties\":{\"^x\":{\"type\":\"boolean\"}}}",
         "{\n  /** @default \"z\" */\n  a?: string;\n  [key: string]: boolean | string | undefined;\n}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = ts(cases[i].schema);
        cr_expect_str_eq(got, cases[i].want, "%s", cases[i].schema);
        free(got);
    }
}

Test(mcp_typescript, nesting_is_bounded)
{
    char schema[4096] = "", *p = schema;
    for (int i = 0; i < 20; i++)
        p += sprintf(p, "{\"type\":\"array\",\"items\":");
    p += sprintf(p, "{\"type\":\"string\"}");
    for (int i = 0; i < 20; i++)
        *p++ = '}';
    *p = '\0';
    char *got = ts(schema);
    cr_expect(strstr(got, "unknown") != NULL && strstr(got, "string") == NULL, "%s", got);
    free(got);
}

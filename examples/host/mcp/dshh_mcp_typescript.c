/* MCP names as program identifiers, and JSON Schemas of MCP tools as TypeScript types for the
 * run_code tool description (examples/host/README.md, "Downstream MCP servers"). */
#include "dshh_mcp_typescript.h"

#include "dshh_serve_events.h"

#include "dsh_json_get.h"

#include <stdlib.h>
#include <string.h>

/* Beyond what the runtime refuses (common/dsh_binding_names.h): the globals a namespace would
 * shadow that programs rely on, and the error classes. */
static const char *const shadowed_globals[] = {"Buffer", "Error", "Object", "Array", "Promise", "JSON", "Math",
                                               "ToolCallError", DSHH_MCP_ERROR_CLASS, NULL};

static bool in_list(const char *const *list, const char *word)
{
    for (size_t i = 0; list && list[i]; i++)
        if (!strcmp(list[i], word))
            return true;
    return false;
}

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool is_identifier(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!ident_char(*s) && *s != '$')
            return false;
    return true;
}

char *dshh__mcp_identifier(const char *name, enum dsh_binding_name_role role, const char *const *taken)
{
    size_t n = strlen(name);
    char *base = malloc(n + 3);
    if (!base)
        return NULL;
    size_t o = 0;
    if (n == 0 || (name[0] >= '0' && name[0] <= '9'))
        base[o++] = '_';
    for (size_t i = 0; i < n; i++)
        base[o++] = ident_char(name[i]) ? name[i] : '_';
    base[o] = '\0';
    /* __dunder__ -> __dunder_, and ___x____ -> ___x_ (one '_' less is not always enough). */
    while (o > 4 && !strncmp(base, "__", 2) && !strcmp(base + o - 2, "__"))
        base[--o] = '\0';
    if (dsh_binding_name_problem(role, base) || (role == DSH_BINDING_GLOBAL && in_list(shadowed_globals, base))) {
        base[o++] = '_'; /* reserved -> reserved_ */
        base[o] = '\0';
    }
    if (!in_list(taken, base))
        return base;
    char *next = malloc(o + 24);
    for (unsigned k = 2; next; k++) {
        snprintf(next, o + 24, "%s_%u", base, k);
        if (!in_list(taken, next))
            break;
    }
    free(base);
    return next;
}

void dshh__mcp_doc_comment(const char *text, FILE *out, int indent)
{
    if (!text || !*text)
        return;
    fprintf(out, "%*s/** ", indent, "");
    char last = ' '; /* the last character written: a '/' after a '*' would end the comment */
    for (const char *p = text; *p; p++) {
        if (*p == '\r')
            continue;
        if (*p == '\n') {
            fprintf(out, "\n%*s * ", indent, "");
            last = ' ';
            continue;
        }
        if (*p == '/' && last == '*')
            fputc('\\', out);
        fputc(*p, out);
        last = *p;
    }
    fputs(" */\n", out);
}

#define MAX_DEPTH 8

static void schema_type(json_object *schema, FILE *out, int indent, int depth);

static void union_of(json_object *list, FILE *out, int indent, int depth)
{
    size_t n = json_object_array_length(list);
    if (n == 0) {
        fputs("never", out);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(" | ", out);
        schema_type(json_object_array_get_idx(list, i), out, indent, depth + 1);
    }
}

static bool listed(json_object *list, const char *key)
{
    for (size_t i = 0; json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
        const char *name = dsh_json_as_text(json_object_array_get_idx(list, i));
        if (name && !strcmp(name, key))
            return true;
    }
    return false;
}

static void object_type(json_object *schema, FILE *out, int indent, int depth)
{
    json_object *props = dsh_json_get_object(schema, "properties"), *required = dsh_json_get_array(schema, "required");
    if (!props || json_object_object_length(props) == 0) {
        fputs("Record<string, unknown>", out);
        return;
    }
    fputs("{\n", out);
    json_object_object_foreach(props, key, sub)
    {
        const char *desc = dsh_json_get_text(sub, "description");
        if (desc)
            dshh__mcp_doc_comment(desc, out, indent + 2);
        fprintf(out, "%*s", indent + 2, "");
        if (is_identifier(key)) {
            fputs(key, out);
        } else {
            json_object *k = json_object_new_string(key);
            fputs(dshh__jstr(k), out);
            json_object_put(k);
        }
        fputs(listed(required, key) ? ": " : "?: ", out);
        schema_type(sub, out, indent + 2, depth + 1);
        fputs(";\n", out);
    }
    fprintf(out, "%*s}", indent, "");
}

static void named_type(const char *type, json_object *schema, FILE *out, int indent, int depth)
{
    json_object *items = dsh_json_get_object(schema, "items");
    if (!strcmp(type, "string"))
        fputs("string", out);
    else if (!strcmp(type, "number") || !strcmp(type, "integer"))
        fputs("number", out);
    else if (!strcmp(type, "boolean"))
        fputs("boolean", out);
    else if (!strcmp(type, "null"))
        fputs("null", out);
    else if (!strcmp(type, "object"))
        object_type(schema, out, indent, depth);
    else if (!strcmp(type, "array") && items) {
        fputs("Array<", out);
        schema_type(items, out, indent, depth + 1);
        fputs(">", out);
    } else if (!strcmp(type, "array"))
        fputs("unknown[]", out);
    else
        fputs("unknown", out);
}

static void schema_type(json_object *schema, FILE *out, int indent, int depth)
{
    json_object *v;
    const char *type;
    if (depth > MAX_DEPTH || !json_object_is_type(schema, json_type_object)) {
        fputs("unknown", out);
        return;
    }
    if (dsh_json_has(schema, "const")) {
        fputs(dshh__jstr(dsh_json_member(schema, "const")), out);
    } else if ((v = dsh_json_get_array(schema, "enum")) && json_object_array_length(v) > 0) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            fprintf(out, "%s%s", i ? " | " : "", dshh__jstr(json_object_array_get_idx(v, i)));
    } else if ((v = dsh_json_get_array(schema, "anyOf")) || (v = dsh_json_get_array(schema, "oneOf"))) {
        union_of(v, out, indent, depth);
    } else if ((type = dsh_json_get_text(schema, "type"))) {
        named_type(type, schema, out, indent, depth);
    } else if ((v = dsh_json_get_array(schema, "type")) && json_object_array_length(v) > 0) {
        /* Each type once: a repeated "object" would print the schema's properties again, and
         * repeats at every level would multiply (a server could make the declaration huge). */
        static const char *const names[] = {"string", "number", "integer", "boolean", "null", "object", "array"};
        bool seen[sizeof names / sizeof names[0] + 1] = {false}; /* the last: anything else */
        bool first = true;
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            const char *t = dsh_json_as_text(json_object_array_get_idx(v, i));
            size_t k = 0;
            while (k < sizeof names / sizeof names[0] && (!t || strcmp(t, names[k])))
                k++;
            if (k == 2)
                k = 1; /* integer is number */
            if (seen[k])
                continue;
            seen[k] = true;
            fputs(first ? "" : " | ", out);
            first = false;
            named_type(k < sizeof names / sizeof names[0] ? names[k] : "unknown", schema, out, indent, depth);
        }
    } else if (dsh_json_has(schema, "properties")) {
        object_type(schema, out, indent, depth);
    } else {
        fputs("unknown", out);
    }
}

void dshh__mcp_schema_type(json_object *schema, FILE *out, int indent)
{
    schema_type(schema, out, indent, 0);
}

/* MCP names as program identifiers, and JSON Schemas of MCP tools as TypeScript types for the
 * run_code tool description (examples/host/README.md, "Downstream MCP servers"). */
#include "dshh_mcp_typescript.h"

#include "dshh_serve_events.h"

#include "dsh_json_get.h"

#include <stdint.h>
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

#define MAX_DEPTH 8        /* nesting levels of one type printed in place */
#define INDEX_PENALTY 3    /* levels a property's type costs when printed again in an index signature */
#define MAX_NAMED 256      /* named types of one schema; a $ref to any further target is unknown */
#define MAX_NAME 64        /* bytes of a named type's own part (after the prefix) */
#define MAX_WALK_DEPTH 64  /* nesting the search for $ref follows */
#define MAX_WALK_STEPS 100000 /* schemas the search for $ref visits in all */
#define MAX_CYCLE_STEPS 256   /* schemas one check for a bare cycle visits */

struct named {
    json_object *node; /* the $ref target (transfer none) */
    char *name;
};

struct dshh_mcp_schema_types {
    json_object *root;
    struct named *named;
    size_t n;
    size_t steps; /* walked so far */
};

/* Where a type is printed: in the alias of a named type (whose own name must not stand for its
 * whole body), or in place (alias NULL). */
struct ctx {
    const struct dshh_mcp_schema_types *t;
    json_object *alias;
};

static bool is_schema(json_object *v)
{
    return json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_boolean);
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

/* The JSON Pointer of a "#..." $ref in root (RFC 6901, with URI %-escapes), or NULL. */
static json_object *resolve(json_object *root, const char *ref)
{
    if (!ref || ref[0] != '#')
        return NULL;
    json_object *at = root;
    const char *p = ref + 1;
    if (*p && *p != '/')
        return NULL; /* "#anchor": not followed */
    while (*p == '/' && at) {
        char seg[256];
        size_t n = 0;
        for (p++; *p && *p != '/'; p++) {
            char c = *p;
            if (c == '~' && (p[1] == '0' || p[1] == '1'))
                c = *++p == '0' ? '~' : '/';
            else if (c == '%') {
                int hi = hex_digit(p[1]), lo = hi < 0 ? -1 : hex_digit(p[2]);
                if (lo < 0 || (hi == 0 && lo == 0))
                    return NULL; /* not an escape, or a NUL */
                c = (char)(hi * 16 + lo);
                p += 2;
            }
            if (n + 1 >= sizeof seg)
                return NULL;
            seg[n++] = c;
        }
        seg[n] = '\0';
        if (json_object_is_type(at, json_type_object)) {
            at = dsh_json_member(at, seg);
        } else if (json_object_is_type(at, json_type_array)) {
            char *end;
            unsigned long i = strtoul(seg, &end, 10);
            at = n && *end == '\0' && (seg[0] != '0' || n == 1) ? json_object_array_get_idx(at, i) : NULL;
        } else {
            at = NULL;
        }
    }
    return is_schema(at) ? at : NULL;
}

static const struct named *named_of(const struct dshh_mcp_schema_types *t, json_object *node)
{
    for (size_t i = 0; node && i < t->n; i++)
        if (t->named[i].node == node)
            return &t->named[i];
    return NULL;
}

/* The name of a $ref target: its pointer's segments without $defs, definitions and properties,
 * joined by '_' (the root: root_name), after prefix; not a member of taken (and added to it: an
 * object is a hash set, as a declaration may hold many names). */
static char *type_name(const char *prefix, const char *ref, const char *root_name, json_object *taken)
{
    char own[MAX_NAME + 1];
    size_t n = 0;
    for (const char *p = ref + 1; *p == '/' && n < MAX_NAME;) {
        const char *seg = ++p;
        while (*p && *p != '/')
            p++;
        size_t len = (size_t)(p - seg);
        if ((len == 5 && !strncmp(seg, "$defs", 5)) || (len == 11 && !strncmp(seg, "definitions", 11)) ||
            (len == 10 && !strncmp(seg, "properties", 10)) || len == 0)
            continue;
        if (n && n < MAX_NAME)
            own[n++] = '_';
        for (size_t i = 0; i < len && n < MAX_NAME; i++)
            own[n++] = ident_char(seg[i]) ? seg[i] : '_';
    }
    own[n] = '\0';
    char *name = NULL;
    if (asprintf(&name, "%s%s", prefix, n ? own : root_name) < 0)
        return NULL;
    for (unsigned k = 2; name && dsh_json_has(taken, name); k++) {
        free(name);
        if (asprintf(&name, "%s%s_%u", prefix, n ? own : root_name, k) < 0)
            name = NULL;
    }
    if (name && json_object_object_add(taken, name, NULL) < 0) {
        free(name);
        name = NULL;
    }
    return name;
}

static void walk(struct dshh_mcp_schema_types *t, json_object *schema, const char *prefix, const char *root_name,
                 json_object *taken, int depth);

/* The schemas of an array (a list keyword) or of an object's members (a map keyword). */
static void walk_each(struct dshh_mcp_schema_types *t, json_object *list, bool map, const char *prefix,
                      const char *root_name, json_object *taken, int depth)
{
    if (!map && json_object_is_type(list, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(list); i++)
            walk(t, json_object_array_get_idx(list, i), prefix, root_name, taken, depth);
    } else if (map && json_object_is_type(list, json_type_object)) {
        json_object_object_foreach(list, key, sub)
        {
            (void)key;
            walk(t, sub, prefix, root_name, taken, depth);
        }
    }
}

/* Names every $ref target found from schema, in the order met. */
static void walk(struct dshh_mcp_schema_types *t, json_object *schema, const char *prefix, const char *root_name,
                 json_object *taken, int depth)
{
    if (depth > MAX_WALK_DEPTH || t->steps >= MAX_WALK_STEPS || !json_object_is_type(schema, json_type_object))
        return;
    t->steps++;
    const char *ref = dsh_json_get_text(schema, "$ref");
    json_object *target = resolve(t->root, ref);
    if (target && !named_of(t, target) && t->n < MAX_NAMED) {
        char *name = type_name(prefix, ref, root_name, taken);
        if (name)
            t->named[t->n++] = (struct named){.node = target, .name = name}; /* walked in its turn */
    }
    static const char *const maps[] = {"properties", "patternProperties"};
    static const char *const lists[] = {"prefixItems", "anyOf", "oneOf", "allOf", "items"};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        walk_each(t, dsh_json_member(schema, maps[i]), true, prefix, root_name, taken, depth + 1);
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
        walk_each(t, dsh_json_member(schema, lists[i]), false, prefix, root_name, taken, depth + 1);
    static const char *const single[] = {"additionalProperties", "additionalItems", "items"};
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++)
        walk(t, dsh_json_member(schema, single[i]), prefix, root_name, taken, depth + 1);
}

struct dshh_mcp_schema_types *dshh__mcp_schema_types_new(json_object *schema, const char *prefix,
                                                         const char *root_name, json_object *taken)
{
    struct dshh_mcp_schema_types *t = calloc(1, sizeof(*t));
    if (!t || !(t->named = calloc(MAX_NAMED, sizeof(*t->named)))) {
        free(t);
        return NULL;
    }
    t->root = schema;
    /* The root, then each target named meanwhile (so a long $ref chain is not a deep recursion). */
    walk(t, schema, prefix, root_name, taken, 0);
    for (size_t i = 0; i < t->n; i++)
        walk(t, t->named[i].node, prefix, root_name, taken, 0);
    return t;
}

void dshh__mcp_schema_types_free(struct dshh_mcp_schema_types *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->named[i].name);
    free(t->named);
    free(t);
}

/* Whether a schema says anything of its type (a schema that says nothing is unknown). */
static bool has_type(json_object *schema)
{
    static const char *const keywords[] = {"const", "enum", "type", "anyOf", "oneOf", "allOf", "properties",
                                           "patternProperties", "additionalProperties", "items", "prefixItems"};
    if (json_object_is_type(schema, json_type_boolean))
        return !json_object_get_boolean(schema);
    if (dsh_json_get_text(schema, "$ref"))
        return true;
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (dsh_json_has(schema, keywords[i]))
            return true;
    return false;
}

/* Whether from reaches to through what is printed bare, outside any braces or brackets (a $ref,
 * the members of anyOf, oneOf and allOf): `type A = B | string; type B = A & {...}` would be an
 * alias that circularly references itself. Unsure (too many steps): true. */
static bool bare_reaches(const struct dshh_mcp_schema_types *t, json_object *from, json_object *to, int *steps)
{
    if (from == to || ++*steps > MAX_CYCLE_STEPS)
        return true;
    if (!json_object_is_type(from, json_type_object))
        return false;
    json_object *target = resolve(t->root, dsh_json_get_text(from, "$ref"));
    if (target && named_of(t, target) && bare_reaches(t, target, to, steps))
        return true;
    static const char *const lists[] = {"anyOf", "oneOf", "allOf"};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        json_object *list = dsh_json_get_array(from, lists[k]);
        for (size_t i = 0; list && i < json_object_array_length(list); i++)
            if (bare_reaches(t, json_object_array_get_idx(list, i), to, steps))
                return true;
    }
    return false;
}

/* A named type by its name; unknown where the alias being printed would reference itself bare. */
static void named_ref(const struct ctx *c, const struct named *nm, FILE *out, bool bare)
{
    int steps = 0;
    if (c->alias && bare && bare_reaches(c->t, nm->node, c->alias, &steps))
        fputs("unknown", out);
    else
        fputs(nm->name, out);
}

static void schema_type(const struct ctx *c, json_object *schema, FILE *out, int indent, int depth, bool bare);

static void union_of(const struct ctx *c, json_object *list, FILE *out, int indent, int depth, bool bare)
{
    size_t n = json_object_array_length(list);
    if (n == 0) {
        fputs("never", out);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs(" | ", out);
        schema_type(c, json_object_array_get_idx(list, i), out, indent, depth + 1, bare);
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

/* A property's doc comment: its description, and its default as @default JSON. */
static void property_doc(json_object *sub, FILE *out, int indent)
{
    const char *desc = dsh_json_get_text(sub, "description");
    if (!dsh_json_has(sub, "default")) {
        dshh__mcp_doc_comment(desc, out, indent);
        return;
    }
    char *doc = NULL;
    if (asprintf(&doc, "%s%s@default %s", desc ? desc : "", desc ? "\n" : "",
                 dshh__jstr(dsh_json_member(sub, "default"))) >= 0) {
        dshh__mcp_doc_comment(doc, out, indent);
        free(doc);
    }
}

/* The value type of an index signature: patternProperties and a typed additionalProperties, and
 * (a TypeScript rule) every property's type, since each must fit the index signature. */
static void index_type(const struct ctx *c, json_object *schema, FILE *out, int indent, int depth)
{
    json_object *patterns = dsh_json_get_object(schema, "patternProperties"),
                *props = dsh_json_get_object(schema, "properties"), *required = dsh_json_get_array(schema, "required"),
                *more = dsh_json_member(schema, "additionalProperties");
    bool open = is_schema(more) && !has_type(more);
    if (patterns) {
        json_object_object_foreach(patterns, p, pattern_schema)
        {
            (void)p;
            open = open || !has_type(pattern_schema);
        }
    }
    if (open) {
        fputs("unknown", out);
        return;
    }
    bool first = true, optional = false;
    if (json_object_is_type(more, json_type_object)) {
        schema_type(c, more, out, indent, depth + 1, false);
        first = false;
    }
    if (patterns) {
        json_object_object_foreach(patterns, p2, pattern_schema2)
        {
            (void)p2;
            fputs(first ? "" : " | ", out);
            schema_type(c, pattern_schema2, out, indent, depth + 1, false);
            first = false;
        }
    }
    if (props) {
        json_object_object_foreach(props, key, sub)
        {
            fputs(first ? "" : " | ", out);
            schema_type(c, sub, out, indent, depth + 1 + INDEX_PENALTY, false);
            first = false;
            optional = optional || !listed(required, key);
        }
    }
    if (optional)
        fputs(" | undefined", out);
}

/* Whether the object has an index signature: additionalProperties true or a schema,
 * patternProperties. An object whose properties are listed and that says nothing of others has
 * none (TypeScript then refuses other properties in an object literal). */
static bool has_index(json_object *schema)
{
    json_object *patterns = dsh_json_get_object(schema, "patternProperties"),
                *more = dsh_json_member(schema, "additionalProperties");
    return (patterns && json_object_object_length(patterns) > 0) || json_object_is_type(more, json_type_object) ||
           (json_object_is_type(more, json_type_boolean) && json_object_get_boolean(more));
}

static void object_type(const struct ctx *c, json_object *schema, FILE *out, int indent, int depth)
{
    json_object *props = dsh_json_get_object(schema, "properties"), *required = dsh_json_get_array(schema, "required");
    json_object *more = dsh_json_member(schema, "additionalProperties");
    if (!props || json_object_object_length(props) == 0) {
        if (!has_index(schema) && json_object_is_type(more, json_type_boolean)) {
            fputs("Record<string, never>", out); /* additionalProperties: false */
        } else if (!has_index(schema) || (!dsh_json_get_object(schema, "patternProperties") && !has_type(more))) {
            fputs("Record<string, unknown>", out);
        } else {
            fputs("{ [key: string]: ", out);
            index_type(c, schema, out, indent, depth);
            fputs(" }", out);
        }
        return;
    }
    fputs("{\n", out);
    json_object_object_foreach(props, key, sub)
    {
        property_doc(sub, out, indent + 2);
        fprintf(out, "%*s", indent + 2, "");
        if (is_identifier(key)) {
            fputs(key, out);
        } else {
            json_object *k = json_object_new_string(key);
            fputs(dshh__jstr(k), out);
            json_object_put(k);
        }
        fputs(listed(required, key) ? ": " : "?: ", out);
        schema_type(c, sub, out, indent + 2, depth + 1, false);
        fputs(";\n", out);
    }
    if (has_index(schema)) {
        fprintf(out, "%*s[key: string]: ", indent + 2, "");
        index_type(c, schema, out, indent + 2, depth);
        fputs(";\n", out);
    }
    fprintf(out, "%*s}", indent, "");
}

/* A tuple: prefixItems (then items for the rest) or an items array (then additionalItems); the
 * first minItems elements are required, and without a rest schema the tuple is closed. */
static void tuple_type(const struct ctx *c, json_object *schema, json_object *prefix, json_object *rest, FILE *out,
                       int indent, int depth)
{
    int64_t min = 0;
    dsh_json_get_int64(schema, "minItems", 0, INT64_MAX, &min);
    size_t n = json_object_array_length(prefix);
    fputs("[", out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", out);
        if ((int64_t)i < min) {
            schema_type(c, json_object_array_get_idx(prefix, i), out, indent, depth + 1, false);
        } else {
            fputs("(", out);
            schema_type(c, json_object_array_get_idx(prefix, i), out, indent, depth + 1, false);
            fputs(")?", out);
        }
    }
    if (is_schema(rest) && !json_object_is_type(rest, json_type_boolean) && has_type(rest)) {
        fputs(n ? ", ...Array<" : "...Array<", out);
        schema_type(c, rest, out, indent, depth + 1, false);
        fputs(">", out);
    } else if (is_schema(rest) && !has_type(rest)) {
        fputs(n ? ", ...unknown[]" : "...unknown[]", out); /* true, {} */
    }
    fputs("]", out);
}

static void array_type(const struct ctx *c, json_object *schema, FILE *out, int indent, int depth)
{
    json_object *prefix = dsh_json_get_array(schema, "prefixItems"), *items = dsh_json_member(schema, "items");
    if (prefix)
        tuple_type(c, schema, prefix, items, out, indent, depth);
    else if (json_object_is_type(items, json_type_array))
        tuple_type(c, schema, items, dsh_json_member(schema, "additionalItems"), out, indent, depth);
    else if (is_schema(items) && has_type(items)) {
        fputs("Array<", out);
        schema_type(c, items, out, indent, depth + 1, false);
        fputs(">", out);
    } else
        fputs("unknown[]", out);
}

static void named_type(const struct ctx *c, const char *type, json_object *schema, FILE *out, int indent, int depth)
{
    if (!strcmp(type, "string"))
        fputs("string", out);
    else if (!strcmp(type, "number") || !strcmp(type, "integer"))
        fputs("number", out);
    else if (!strcmp(type, "boolean"))
        fputs("boolean", out);
    else if (!strcmp(type, "null"))
        fputs("null", out);
    else if (!strcmp(type, "object"))
        object_type(c, schema, out, indent, depth);
    else if (!strcmp(type, "array"))
        array_type(c, schema, out, indent, depth);
    else
        fputs("unknown", out);
}

/* The type keywords of a schema: "type" (a name or a list), else what its keywords imply. */
static bool typed(json_object *schema)
{
    static const char *const implied[] = {"properties", "patternProperties", "additionalProperties", "items",
                                          "prefixItems"};
    json_object *list = dsh_json_get_array(schema, "type");
    if (dsh_json_get_text(schema, "type") || (list && json_object_array_length(list) > 0))
        return true;
    for (size_t i = 0; i < sizeof implied / sizeof implied[0]; i++)
        if (dsh_json_has(schema, implied[i]))
            return true;
    return false;
}

static void typed_part(const struct ctx *c, json_object *schema, FILE *out, int indent, int depth)
{
    json_object *v;
    const char *type = dsh_json_get_text(schema, "type");
    if (type) {
        named_type(c, type, schema, out, indent, depth);
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
            named_type(c, k < sizeof names / sizeof names[0] ? names[k] : "unknown", schema, out, indent, depth);
        }
    } else if (dsh_json_has(schema, "items") || dsh_json_has(schema, "prefixItems")) {
        array_type(c, schema, out, indent, depth);
    } else {
        object_type(c, schema, out, indent, depth);
    }
}

/* Opens the next part of an intersection ("A & (B)"): the first without " & ", each in
 * parentheses when there are several. */
static void part(FILE *out, int *written, int parts)
{
    fputs(*written ? ") & (" : parts > 1 ? "(" : "", out);
    (*written)++;
}

/* A schema's type: the intersection of what its keywords say ($ref, const or enum or type,
 * anyOf, oneOf, each typed member of allOf); unknown when they say nothing. */
static void schema_type(const struct ctx *c, json_object *schema, FILE *out, int indent, int depth, bool bare)
{
    if (json_object_is_type(schema, json_type_boolean)) {
        fputs(json_object_get_boolean(schema) ? "unknown" : "never", out);
        return;
    }
    if (depth > MAX_DEPTH || !json_object_is_type(schema, json_type_object)) {
        fputs("unknown", out);
        return;
    }
    const struct named *self = named_of(c->t, schema);
    if (self && !(schema == c->alias && depth == 0)) {
        named_ref(c, self, out, bare);
        return;
    }
    const char *ref = dsh_json_get_text(schema, "$ref");
    json_object *enum_values = dsh_json_get_array(schema, "enum"), *any = dsh_json_get_array(schema, "anyOf"),
                *one = dsh_json_get_array(schema, "oneOf"), *all = dsh_json_get_array(schema, "allOf");
    bool exact = dsh_json_has(schema, "const") || enum_values, has_typed = !exact && typed(schema);
    int parts = (ref != NULL) + exact + has_typed + (any != NULL) + (one != NULL), written = 0;
    for (size_t i = 0; all && i < json_object_array_length(all); i++)
        parts += has_type(json_object_array_get_idx(all, i));
    if (parts == 0) {
        fputs("unknown", out);
        return;
    }
    if (ref) {
        part(out, &written, parts);
        const struct named *nm = named_of(c->t, resolve(c->t->root, ref));
        if (nm)
            named_ref(c, nm, out, bare);
        else
            fputs("unknown", out); /* not in this document, or past MAX_NAMED */
    }
    if (dsh_json_has(schema, "const")) {
        part(out, &written, parts);
        fputs(dshh__jstr(dsh_json_member(schema, "const")), out);
    } else if (enum_values) {
        part(out, &written, parts);
        size_t n = json_object_array_length(enum_values);
        fputs(n ? "" : "never", out);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%s", i ? " | " : "", dshh__jstr(json_object_array_get_idx(enum_values, i)));
    } else if (has_typed) {
        part(out, &written, parts);
        typed_part(c, schema, out, indent, depth);
    }
    if (any) {
        part(out, &written, parts);
        union_of(c, any, out, indent, depth, bare);
    }
    if (one) {
        part(out, &written, parts);
        union_of(c, one, out, indent, depth, bare);
    }
    for (size_t i = 0; all && i < json_object_array_length(all); i++) {
        json_object *member = json_object_array_get_idx(all, i);
        if (!has_type(member))
            continue;
        part(out, &written, parts);
        schema_type(c, member, out, indent, depth + 1, bare);
    }
    if (parts > 1)
        fputs(")", out);
}

void dshh__mcp_schema_aliases(const struct dshh_mcp_schema_types *t, FILE *out)
{
    for (size_t i = 0; i < t->n; i++) {
        json_object *node = t->named[i].node;
        dshh__mcp_doc_comment(dsh_json_get_text(node, "description"), out, 0);
        fprintf(out, "type %s = ", t->named[i].name);
        struct ctx c = {.t = t, .alias = node};
        schema_type(&c, node, out, 0, 0, true);
        fputs(";\n", out);
    }
}

void dshh__mcp_schema_root_type(const struct dshh_mcp_schema_types *t, FILE *out, int indent)
{
    struct ctx c = {.t = t, .alias = NULL};
    schema_type(&c, t->root, out, indent, 0, false);
}

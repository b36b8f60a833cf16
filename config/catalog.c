/* Parses catalog.yaml into struct dsh_catalog. The catalog is read as strictly
 * as the rows it validates: unknown keys, wrong types and defaults that break
 * their own field's rules are errors, so a catalog typo fails the build's tests
 * instead of silently accepting bad rows. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_check.h"
#include "dsh_catalog_lookup.h"
#include "dsh_diagnostics.h"
#include "dsh_strv.h"
#include "dsh_yaml_load.h"
#include "scalar.h"

struct reader {
    yaml_document_t *doc;
    char *errbuf;
    size_t errlen;
    int err; /* first error; later failures keep it */
};

static int read_fields(struct reader *r, yaml_node_t *seq,
                       struct dsh_catalog_field **ret_fields, size_t *ret_n);

/* Records "catalog.yaml:L:C: ..." (first error wins); returns the error. */
__attribute__((format(printf, 3, 4))) static int
reader_fail(struct reader *r, const yaml_node_t *node, const char *fmt, ...)
{
    if (r->err == 0 && r->errbuf && r->errlen > 0) {
        int n = node ? snprintf(r->errbuf, r->errlen, "catalog.yaml:%zu:%zu: ",
                                node->start_mark.line + 1, node->start_mark.column + 1)
                     : snprintf(r->errbuf, r->errlen, "catalog.yaml: ");
        if (n > 0 && (size_t)n < r->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->errbuf + n, r->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    if (r->err == 0)
        r->err = -EINVAL;
    return r->err;
}

static int oom(struct reader *r)
{
    if (r->err == 0 && r->errbuf && r->errlen > 0)
        snprintf(r->errbuf, r->errlen, "catalog.yaml: out of memory");
    r->err = -ENOMEM;
    return r->err;
}

/* Checks map holds only keys[] (each at most once) and returns their values. */
static int collect(struct reader *r, yaml_node_t *map, const char *what,
                   const char *const *keys, size_t n_keys, yaml_node_t **ret_nodes)
{
    for (size_t i = 0; i < n_keys; i++)
        ret_nodes[i] = NULL;
    if (!map || map->type != YAML_MAPPING_NODE)
        return reader_fail(r, map, "%s must be a mapping", what);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        if (k->type != YAML_SCALAR_NODE)
            return reader_fail(r, k, "%s: keys must be scalars", what);
        size_t i = 0;
        while (i < n_keys && strcmp(keys[i], dsh_node_text(k)) != 0)
            i++;
        if (i == n_keys)
            return reader_fail(r, k, "%s: unknown key \"%s\"", what, dsh_node_text(k));
        if (ret_nodes[i])
            return reader_fail(r, k, "%s: duplicate key \"%s\"", what, keys[i]);
        ret_nodes[i] = yaml_document_get_node(r->doc, p->value);
    }
    return 0;
}

static int read_text(struct reader *r, yaml_node_t *node, const char *what,
                     char **ret_text)
{
    if (node->type != YAML_SCALAR_NODE || dsh_node_is_null(node))
        return reader_fail(r, node, "%s must be a non-null scalar", what);
    *ret_text = strdup(dsh_node_text(node));
    return *ret_text ? 0 : oom(r);
}

static int read_bool(struct reader *r, yaml_node_t *node, const char *what,
                     bool *ret_value)
{
    if (node->type != YAML_SCALAR_NODE || dsh_scalar_kind(node) != DSH_SCALAR_BOOL)
        return reader_fail(r, node, "%s must be true or false", what);
    *ret_value = strcmp(dsh_node_text(node), "true") == 0;
    return 0;
}

static int read_int(struct reader *r, yaml_node_t *node, const char *what,
                    int64_t *ret_value)
{
    if (node->type != YAML_SCALAR_NODE || dsh_scalar_kind(node) != DSH_SCALAR_INT ||
        dsh_scalar_int(node, ret_value) < 0)
        return reader_fail(r, node, "%s must be a 64-bit integer", what);
    return 0;
}

static int read_type(struct reader *r, yaml_node_t *node, const char *what,
                     enum dsh_field_type *ret_type)
{
    if (node->type == YAML_SCALAR_NODE)
        for (int t = DSH_FIELD_ENUM; t <= DSH_FIELD_MAP; t++)
            if (strcmp(dsh_node_text(node), dsh_field_type_name(t)) == 0) {
                *ret_type = t;
                return 0;
            }
    return reader_fail(r, node, "%s: unknown type", what);
}

static int read_strv(struct reader *r, yaml_node_t *seq, const char *what,
                     char ***ret_strv, size_t *ret_n)
{
    if (seq->type != YAML_SEQUENCE_NODE)
        return reader_fail(r, seq, "%s must be a sequence", what);
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    char **strv = calloc(n + 1, sizeof(*strv));
    if (!strv)
        return oom(r);
    *ret_strv = strv;
    *ret_n = n;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = yaml_document_get_node(r->doc, seq->data.sequence.items.start[i]);
        int err = read_text(r, item, what, &strv[i]);
        if (err < 0)
            return err;
    }
    return 0;
}

/* One typed constant (a default or a conditional branch) of field. */
static int read_value(struct reader *r, const struct dsh_catalog_field *field,
                      enum dsh_field_type type, yaml_node_t *node,
                      struct dsh_catalog_value *ret_value)
{
    char what[160];
    snprintf(what, sizeof(what), "default of %s", field->key);
    if (type == DSH_FIELD_OBJECT || type == DSH_FIELD_MAP)
        return reader_fail(r, node, "%s: objects and maps take defaultText only", what);
    if (type == DSH_FIELD_LIST) {
        int err = read_strv(r, node, what, &ret_value->items, &ret_value->n_items);
        for (size_t i = 0; err == 0 && i < ret_value->n_items; i++) {
            yaml_node_t *item =
                yaml_document_get_node(r->doc, node->data.sequence.items.start[i]);
            struct dsh_catalog_value v = {0};
            err = read_value(r, field, field->item_type, item, &v);
            free(v.text);
        }
        return err;
    }
    if (node->type != YAML_SCALAR_NODE)
        return reader_fail(r, node, "%s must be a scalar", what);
    enum dsh_scalar_kind kind = dsh_scalar_kind(node);
    const char *text = dsh_node_text(node);
    switch (type) {
    case DSH_FIELD_BOOLEAN:
        if (read_bool(r, node, what, &ret_value->boolean) < 0)
            return r->err;
        break;
    case DSH_FIELD_INTEGER:
        if (read_int(r, node, what, &ret_value->integer) < 0)
            return r->err;
        if ((field->has_min && ret_value->integer < field->min) ||
            (field->has_max && ret_value->integer > field->max))
            return reader_fail(r, node, "%s is outside min..max", what);
        break;
    case DSH_FIELD_ENUM:
        if (!dsh_strv_contains(field->values, text))
            return reader_fail(r, node, "%s is not one of its values", what);
        break;
    case DSH_FIELD_PATH:
        if (text[0] != '/')
            return reader_fail(r, node, "%s must be an absolute path", what);
        /* fall through */
    case DSH_FIELD_STRING:
        if (kind != DSH_SCALAR_STRING)
            return reader_fail(r, node, "%s must be a string", what);
        if (field->non_empty && text[0] == '\0')
            return reader_fail(r, node, "%s must not be empty", what);
        break;
    default:
        break;
    }
    ret_value->text = strdup(text);
    return ret_value->text ? 0 : oom(r);
}

static int read_default(struct reader *r, struct dsh_catalog_field *field,
                        yaml_node_t *node)
{
    static const char *const keys[] = {"if", "then", "else"};
    static const char *const if_keys[] = {"field", "equals"};
    yaml_node_t *v[3], *c[2];

    if (node->type != YAML_MAPPING_NODE || !dsh_mapping_get(r->doc, node, "if")) {
        field->def.kind = DSH_DEFAULT_VALUE;
        return read_value(r, field, field->type, node, &field->def.value);
    }
    field->def.kind = DSH_DEFAULT_CONDITIONAL;
    if (field->type == DSH_FIELD_LIST || field->type == DSH_FIELD_OBJECT ||
        field->type == DSH_FIELD_MAP)
        return reader_fail(r, node, "%s: conditional defaults need a scalar type",
                                field->key);
    if (collect(r, node, "conditional default", keys, 3, v) < 0 ||
        collect(r, v[0], "default if", if_keys, 2, c) < 0)
        return r->err;
    if (!v[1] || !v[2] || !c[0] || !c[1])
        return reader_fail(r, node, "%s: a conditional default needs "
                                "if: {field, equals}, then and else", field->key);
    if (read_text(r, c[0], "if.field", &field->def.if_field) < 0 ||
        read_text(r, c[1], "if.equals", &field->def.if_equals) < 0 ||
        read_value(r, field, field->type, v[1], &field->def.value) < 0 ||
        read_value(r, field, field->type, v[2], &field->def.otherwise) < 0)
        return r->err;
    return 0;
}

static int read_requirement(struct reader *r, yaml_node_t *node,
                            struct dsh_catalog_requirement *ret_req)
{
    static const char *const keys[] = {"when", "field", "equals"};
    yaml_node_t *v[3];
    if (collect(r, node, "requires", keys, 3, v) < 0)
        return r->err;
    if (!v[0] || !v[1] || !v[2])
        return reader_fail(r, node, "requires needs when, field and equals");
    if (read_text(r, v[0], "requires.when", &ret_req->when) < 0 ||
        read_text(r, v[1], "requires.field", &ret_req->field) < 0 ||
        read_text(r, v[2], "requires.equals", &ret_req->equals) < 0)
        return r->err;
    return 0;
}

static int read_requirements(struct reader *r, struct dsh_catalog_field *field,
                             yaml_node_t *node)
{
    bool single = node->type != YAML_SEQUENCE_NODE;
    size_t n = single ? 1 : (size_t)(node->data.sequence.items.top -
                                     node->data.sequence.items.start);
    field->requires = calloc(n ? n : 1, sizeof(*field->requires));
    if (!field->requires)
        return oom(r);
    field->n_requires = n;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = single ? node : yaml_document_get_node(
            r->doc, node->data.sequence.items.start[i]);
        if (read_requirement(r, item, &field->requires[i]) < 0)
            return r->err;
    }
    return 0;
}

enum {
    K_KEY, K_TYPE, K_DEFAULT, K_DEFAULT_TEXT, K_VALUES, K_MIN, K_MAX, K_UNIT, K_ITEMS,
    K_REQUIRED, K_NON_EMPTY, K_REQUIRES, K_AT_MOST, K_FIELDS, K_MEANING, K_COUNT
};
static const char *const field_keys[K_COUNT] = {
    "key",      "type",     "default",  "defaultText", "values", "min",    "max",    "unit",
    "items",    "required", "nonEmpty", "requires",    "atMost", "fields", "meaning",
};

static int read_field(struct reader *r, yaml_node_t *node,
                      struct dsh_catalog_field *f)
{
    yaml_node_t *v[K_COUNT];
    if (collect(r, node, "field", field_keys, K_COUNT, v) < 0)
        return r->err;
    if (!v[K_KEY] || !v[K_TYPE] || !v[K_MEANING])
        return reader_fail(r, node, "a field needs key, type and meaning");
    if (read_text(r, v[K_KEY], "key", &f->key) < 0 ||
        read_type(r, v[K_TYPE], f->key, &f->type) < 0 ||
        read_text(r, v[K_MEANING], "meaning", &f->meaning) < 0)
        return r->err;

    bool is_list = f->type == DSH_FIELD_LIST;
    if (is_list != (v[K_ITEMS] != NULL))
        return reader_fail(r, node, "%s: `items` goes with (and only with) type list",
                                f->key);
    f->item_type = f->type;
    if (is_list && read_type(r, v[K_ITEMS], f->key, &f->item_type) < 0)
        return r->err;
    if (is_list && (f->item_type == DSH_FIELD_LIST || f->item_type == DSH_FIELD_MAP))
        return reader_fail(r, v[K_ITEMS], "%s: list items must be scalars or objects", f->key);

    bool is_enum = f->item_type == DSH_FIELD_ENUM;
    if (is_enum != (v[K_VALUES] != NULL))
        return reader_fail(r, node, "%s: `values` goes with (and only with) enums",
                                f->key);
    if (is_enum && read_strv(r, v[K_VALUES], "values", &f->values, &f->n_values) < 0)
        return r->err;
    if (is_enum && f->n_values == 0)
        return reader_fail(r, v[K_VALUES], "%s: an enum needs values", f->key);

    bool is_int = f->item_type == DSH_FIELD_INTEGER;
    if (!is_int && (v[K_MIN] || v[K_MAX] || v[K_UNIT]))
        return reader_fail(r, node, "%s: min, max and unit need integers", f->key);
    if ((f->has_min = v[K_MIN]) && read_int(r, v[K_MIN], "min", &f->min) < 0)
        return r->err;
    if ((f->has_max = v[K_MAX]) && read_int(r, v[K_MAX], "max", &f->max) < 0)
        return r->err;
    if (f->has_min && f->has_max && f->min > f->max)
        return reader_fail(r, v[K_MIN], "%s: min exceeds max", f->key);
    if (v[K_UNIT] && read_text(r, v[K_UNIT], "unit", &f->unit) < 0)
        return r->err;

    if (v[K_REQUIRED] && read_bool(r, v[K_REQUIRED], "required", &f->required) < 0)
        return r->err;
    if (v[K_NON_EMPTY] && read_bool(r, v[K_NON_EMPTY], "nonEmpty", &f->non_empty) < 0)
        return r->err;
    if (f->non_empty && f->item_type != DSH_FIELD_STRING && f->item_type != DSH_FIELD_PATH)
        return reader_fail(r, v[K_NON_EMPTY], "%s: nonEmpty needs strings", f->key);

    bool has_fields = f->item_type == DSH_FIELD_OBJECT || f->type == DSH_FIELD_MAP;
    if (has_fields != (v[K_FIELDS] != NULL))
        return reader_fail(r, node,
                           "%s: `fields` goes with (and only with) objects, maps and lists of "
                           "objects",
                           f->key);
    if (v[K_FIELDS] && read_fields(r, v[K_FIELDS], &f->fields, &f->n_fields) < 0)
        return r->err;

    if (v[K_REQUIRES] && read_requirements(r, f, v[K_REQUIRES]) < 0)
        return r->err;
    if (v[K_AT_MOST] && read_text(r, v[K_AT_MOST], "atMost", &f->at_most) < 0)
        return r->err;
    if (v[K_DEFAULT] && read_default(r, f, v[K_DEFAULT]) < 0)
        return r->err;
    if (v[K_DEFAULT_TEXT] && read_text(r, v[K_DEFAULT_TEXT], "defaultText", &f->def.text) < 0)
        return r->err;
    if (!f->required && f->def.kind == DSH_DEFAULT_NONE && !f->def.text)
        return reader_fail(r, node, "%s: an optional field needs default or defaultText",
                                f->key);
    if (f->required && (v[K_DEFAULT] || v[K_DEFAULT_TEXT]))
        return reader_fail(r, node, "%s: a required field has no default", f->key);
    return 0;
}

static int read_fields(struct reader *r, yaml_node_t *seq,
                       struct dsh_catalog_field **ret_fields, size_t *ret_n)
{
    if (seq->type != YAML_SEQUENCE_NODE)
        return reader_fail(r, seq, "fields must be a sequence");
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    struct dsh_catalog_field *fields = calloc(n ? n : 1, sizeof(*fields));
    if (!fields)
        return oom(r);
    *ret_fields = fields;
    *ret_n = n;
    for (size_t i = 0; i < n; i++)
        if (read_field(r, yaml_document_get_node(r->doc, seq->data.sequence.items.start[i]),
                       &fields[i]) < 0)
            return r->err;
    char problem[256];
    size_t bad;
    if (dsh_catalog_check_siblings(fields, n, &bad, problem, sizeof problem) < 0)
        return reader_fail(
            r, yaml_document_get_node(r->doc, seq->data.sequence.items.start[bad]), "%s", problem);
    return 0;
}

static int read_provider(struct reader *r, yaml_node_t *node,
                         struct dsh_catalog_provider *p)
{
    static const char *const keys[] = {"name", "summary", "fields"};
    yaml_node_t *v[3];
    if (collect(r, node, "provider", keys, 3, v) < 0)
        return r->err;
    if (!v[0] || !v[2])
        return reader_fail(r, node, "a provider needs name and fields");
    if (read_text(r, v[0], "name", &p->name) < 0 ||
        (v[1] && read_text(r, v[1], "summary", &p->summary) < 0))
        return r->err;
    return read_fields(r, v[2], &p->fields, &p->n_fields);
}

static int read_catalog(struct reader *r, yaml_node_t *root, struct dsh_catalog *cat)
{
    static const char *const keys[] = {"providers"};
    yaml_node_t *seq;
    if (collect(r, root, "the catalog", keys, 1, &seq) < 0)
        return r->err;
    if (!seq || seq->type != YAML_SEQUENCE_NODE)
        return reader_fail(r, seq ? seq : root, "providers must be a sequence");
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    cat->providers = calloc(n ? n : 1, sizeof(*cat->providers));
    if (!cat->providers)
        return oom(r);
    cat->n_providers = n;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = yaml_document_get_node(r->doc, seq->data.sequence.items.start[i]);
        if (read_provider(r, item, &cat->providers[i]) < 0)
            return r->err;
        for (size_t j = 0; j < i; j++)
            if (strcmp(cat->providers[j].name, cat->providers[i].name) == 0)
                return reader_fail(r, item, "duplicate provider %s",
                                        cat->providers[i].name);
    }
    return 0;
}

int dsh_catalog_open_text(const char *text, size_t len, struct dsh_catalog **ret_catalog,
                          char *errbuf, size_t errlen)
{
    struct dsh_diagnostics diags;
    yaml_document_t doc;
    *ret_catalog = NULL;
    if (errbuf && errlen > 0)
        errbuf[0] = '\0';

    int err = dsh_yaml_load(text, len, &doc, &diags);
    if (err < 0) {
        if (errbuf && diags.count > 0)
            snprintf(errbuf, errlen, "catalog.yaml:%zu:%zu: %s", diags.items[0].line,
                     diags.items[0].column, diags.items[0].problem);
        dsh_diagnostics_release(&diags);
        return err;
    }
    struct dsh_catalog *cat = calloc(1, sizeof(*cat));
    struct reader r = {.doc = &doc, .errbuf = errbuf, .errlen = errlen};
    if (!cat)
        err = oom(&r);
    else if (!yaml_document_get_root_node(&doc))
        err = reader_fail(&r, NULL, "the catalog is empty");
    else
        err = read_catalog(&r, yaml_document_get_root_node(&doc), cat);
    yaml_document_delete(&doc);
    if (err < 0) {
        dsh_catalog_close(cat);
        return err;
    }
    *ret_catalog = cat;
    return 0;
}

int dsh_catalog_open(struct dsh_catalog **ret_catalog, char *errbuf, size_t errlen)
{
    size_t len;
    const char *text = dsh_catalog_embedded_text(&len);
    return dsh_catalog_open_text(text, len, ret_catalog, errbuf, errlen);
}

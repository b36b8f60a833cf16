/* Catalog lookups, cross-field checks of the catalog itself, and freeing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_internal.h"

const char *dsh_field_type_name(enum dsh_field_type type)
{
    switch (type) {
    case DSH_FIELD_ENUM: return "enum";
    case DSH_FIELD_BOOLEAN: return "boolean";
    case DSH_FIELD_INTEGER: return "integer";
    case DSH_FIELD_STRING: return "string";
    case DSH_FIELD_PATH: return "path";
    case DSH_FIELD_LIST: return "list";
    case DSH_FIELD_OBJECT: return "object";
    }
    return "?";
}

const struct dsh_catalog_field *dsh_catalog_field_lookup(const struct dsh_catalog_field *fields,
                                                         size_t n_fields, const char *key,
                                                         size_t key_len)
{
    for (size_t i = 0; i < n_fields; i++)
        if (strlen(fields[i].key) == key_len && memcmp(fields[i].key, key, key_len) == 0)
            return &fields[i];
    return NULL;
}

const struct dsh_catalog_provider *dsh_catalog_find(const struct dsh_catalog *catalog,
                                                    const char *provider_name)
{
    for (size_t i = 0; catalog && provider_name && i < catalog->n_providers; i++)
        if (strcmp(catalog->providers[i].name, provider_name) == 0)
            return &catalog->providers[i];
    return NULL;
}

const struct dsh_catalog_field *dsh_catalog_field_find(const struct dsh_catalog_provider *provider,
                                                       const char *path)
{
    if (!provider || !path)
        return NULL;
    const struct dsh_catalog_field *fields = provider->fields, *f = NULL;
    size_t n = provider->n_fields;
    for (const char *seg = path;;) {
        const char *dot = strchr(seg, '.');
        size_t len = dot ? (size_t)(dot - seg) : strlen(seg);
        f = dsh_catalog_field_lookup(fields, n, seg, len);
        if (!f || !dot)
            return f;
        fields = f->fields;
        n = f->n_fields;
        seg = dot + 1;
    }
}

static bool is_scalar_type(enum dsh_field_type t)
{
    return t != DSH_FIELD_LIST && t != DSH_FIELD_OBJECT;
}

/* A text this field can hold (for `when`/`equals`/`if.equals`). */
static bool text_fits(const struct dsh_catalog_field *f, const char *text)
{
    if (f->type == DSH_FIELD_ENUM)
        return dsh_strv_contains(f->values, text);
    if (f->type == DSH_FIELD_BOOLEAN)
        return strcmp(text, "true") == 0 || strcmp(text, "false") == 0;
    return true;
}

static const struct dsh_catalog_field *sibling(const struct dsh_catalog_field *fields, size_t n,
                                               const struct dsh_catalog_field *self,
                                               const char *key)
{
    const struct dsh_catalog_field *s = dsh_catalog_field_lookup(fields, n, key, strlen(key));
    return s == self || (s && !is_scalar_type(s->type)) ? NULL : s;
}

int dsh_catalog_check_siblings(struct dsh_catalog_reader *r, yaml_node_t *seq,
                               const struct dsh_catalog_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct dsh_catalog_field *f = &fields[i], *s;
        yaml_node_t *node = yaml_document_get_node(r->doc, seq->data.sequence.items.start[i]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(fields[j].key, f->key) == 0)
                return dsh_catalog_fail(r, node, "duplicate field %s", f->key);

        for (size_t k = 0; k < f->n_requires; k++) {
            const struct dsh_catalog_requirement *q = &f->requires[k];
            s = sibling(fields, n, f, q->field);
            if (!s || !text_fits(s, q->equals))
                return dsh_catalog_fail(r, node, "%s: requires names no scalar "
                                        "sibling %s holding %s", f->key, q->field,
                                        q->equals);
            if (strcmp(q->when, "present") != 0 && !text_fits(f, q->when))
                return dsh_catalog_fail(r, node, "%s: requires.when %s is no value of "
                                        "the field", f->key, q->when);
        }

        if (f->at_most) {
            s = sibling(fields, n, f, f->at_most);
            if (!s || s->type != DSH_FIELD_INTEGER || f->type != DSH_FIELD_INTEGER)
                return dsh_catalog_fail(r, node, "%s: atMost needs two integer "
                                        "siblings", f->key);
            if (f->def.kind == DSH_DEFAULT_VALUE && s->def.kind == DSH_DEFAULT_VALUE &&
                f->def.value.integer > s->def.value.integer)
                return dsh_catalog_fail(r, node, "%s: default exceeds the default "
                                        "of %s", f->key, s->key);
        }

        if (f->def.kind == DSH_DEFAULT_CONDITIONAL) {
            s = sibling(fields, n, f, f->def.if_field);
            /* No chains: a condition reads a sibling with a plain default. */
            if (!s || s->def.kind == DSH_DEFAULT_CONDITIONAL ||
                !text_fits(s, f->def.if_equals))
                return dsh_catalog_fail(r, node, "%s: default if names no plain "
                                        "sibling %s holding %s", f->key,
                                        f->def.if_field, f->def.if_equals);
        }
    }
    return 0;
}

static void value_free(struct dsh_catalog_value *v)
{
    free(v->text);
    dsh_strv_free(v->items);
}

static void fields_free(struct dsh_catalog_field *fields, size_t n)
{
    for (size_t i = 0; fields && i < n; i++) {
        struct dsh_catalog_field *f = &fields[i];
        free(f->key);
        free(f->meaning);
        free(f->unit);
        dsh_strv_free(f->values);
        value_free(&f->def.value);
        value_free(&f->def.otherwise);
        free(f->def.if_field);
        free(f->def.if_equals);
        free(f->def.text);
        for (size_t k = 0; k < f->n_requires; k++) {
            free(f->requires[k].when);
            free(f->requires[k].field);
            free(f->requires[k].equals);
        }
        free(f->requires);
        free(f->at_most);
        fields_free(f->fields, f->n_fields);
    }
    free(fields);
}

void dsh_catalog_close(struct dsh_catalog *catalog)
{
    if (!catalog)
        return;
    for (size_t i = 0; i < catalog->n_providers; i++) {
        free(catalog->providers[i].name);
        free(catalog->providers[i].summary);
        fields_free(catalog->providers[i].fields, catalog->providers[i].n_fields);
    }
    free(catalog->providers);
    free(catalog);
}

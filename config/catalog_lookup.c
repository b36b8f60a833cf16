/* Lookups in a parsed catalog, and freeing it. See dsh_catalog_lookup.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_catalog_lookup.h"
#include "dsh_strv.h"

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
    case DSH_FIELD_MAP: return "map";
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

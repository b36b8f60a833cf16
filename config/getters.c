/* Effective values of a validated config: the given value, else the catalog's
 * default, so consumers never repeat a default in code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_catalog_lookup.h"
#include "dsh_getters.h"
#include "dsh_strv.h"
#include "scalar.h"

struct lookup {
    const struct dsh_catalog_field *field;
    const struct dsh_catalog_field *siblings; /* the field list that holds field */
    size_t n_siblings;
    yaml_node_t *map;  /* the mapping that would hold it; NULL when absent */
    yaml_node_t *node; /* its value; NULL when absent */
};

static int resolve(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                   yaml_node_t *config, const char *path, struct lookup *ret)
{
    if (!provider || !path)
        return -EINVAL;
    const struct dsh_catalog_field *fields = provider->fields;
    size_t n = provider->n_fields;
    yaml_node_t *map = config && config->type == YAML_MAPPING_NODE ? config : NULL;
    for (const char *seg = path;;) {
        const char *dot = strchr(seg, '.');
        size_t len = dot ? (size_t)(dot - seg) : strlen(seg);
        const struct dsh_catalog_field *f = dsh_catalog_field_lookup(fields, n, seg, len);
        if (!f)
            return -EINVAL;
        yaml_node_t *node = dsh_mapping_get(doc, map, f->key);
        if (!dot) {
            *ret = (struct lookup){f, fields, n, map, node};
            return 0;
        }
        if (f->type != DSH_FIELD_OBJECT)
            return -EINVAL;
        fields = f->fields;
        n = f->n_fields;
        map = node && node->type == YAML_MAPPING_NODE ? node : NULL;
        seg = dot + 1;
    }
}

int dsh_config_effective_text(yaml_document_t *doc, const struct dsh_catalog_field *fields,
                              size_t n_fields, yaml_node_t *map,
                              const struct dsh_catalog_field *field, const char **ret_text)
{
    if (field->type == DSH_FIELD_LIST || field->type == DSH_FIELD_OBJECT ||
        field->type == DSH_FIELD_MAP)
        return -EINVAL;
    yaml_node_t *node = dsh_mapping_get(doc, map, field->key);
    if (node) {
        if (node->type != YAML_SCALAR_NODE)
            return -EINVAL;
        *ret_text = dsh_node_text(node);
        return 0;
    }
    switch (field->def.kind) {
    case DSH_DEFAULT_VALUE:
        *ret_text = field->def.value.text;
        return 0;
    case DSH_DEFAULT_CONDITIONAL: {
        /* The catalog forbids chains, so this recursion is one level deep. */
        const struct dsh_catalog_field *s = dsh_catalog_field_lookup(
            fields, n_fields, field->def.if_field, strlen(field->def.if_field));
        const char *have;
        bool match = s && s->def.kind != DSH_DEFAULT_CONDITIONAL &&
                     dsh_config_effective_text(doc, fields, n_fields, map, s, &have) == 0 &&
                     strcmp(have, field->def.if_equals) == 0;
        *ret_text = match ? field->def.value.text : field->def.otherwise.text;
        return 0;
    }
    case DSH_DEFAULT_NONE:
        break;
    }
    return -ENOENT;
}

static int scalar(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                  yaml_node_t *config, const char *path, enum dsh_field_type want,
                  enum dsh_scalar_kind want_kind, const char **ret_text)
{
    struct lookup l;
    int err = resolve(provider, doc, config, path, &l);
    if (err < 0)
        return err;
    bool textual = want == DSH_FIELD_STRING;
    if (textual ? l.field->type != DSH_FIELD_STRING && l.field->type != DSH_FIELD_PATH &&
                          l.field->type != DSH_FIELD_ENUM
                : l.field->type != want)
        return -EINVAL;
    if (l.node && (l.node->type != YAML_SCALAR_NODE || dsh_scalar_kind(l.node) != want_kind))
        return -EINVAL;
    return dsh_config_effective_text(doc, l.siblings, l.n_siblings, l.map, l.field, ret_text);
}

bool dsh_config_is_set(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                       yaml_node_t *config, const char *path)
{
    struct lookup l;
    return resolve(provider, doc, config, path, &l) == 0 && l.node != NULL;
}

int dsh_config_get_bool(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                        yaml_node_t *config, const char *path, bool *ret_value)
{
    const char *text;
    int err = scalar(provider, doc, config, path, DSH_FIELD_BOOLEAN, DSH_SCALAR_BOOL, &text);
    if (err < 0)
        return err;
    *ret_value = strcmp(text, "true") == 0;
    return 0;
}

int dsh_config_get_int(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                       yaml_node_t *config, const char *path, int64_t *ret_value)
{
    const char *text;
    char *end;
    int err = scalar(provider, doc, config, path, DSH_FIELD_INTEGER, DSH_SCALAR_INT, &text);
    if (err < 0)
        return err;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno == ERANGE || end == text || *end != '\0')
        return -EINVAL;
    *ret_value = (int64_t)v;
    return 0;
}

int dsh_config_get_str(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                       yaml_node_t *config, const char *path, char **ret_value)
{
    const char *text;
    int err = scalar(provider, doc, config, path, DSH_FIELD_STRING, DSH_SCALAR_STRING, &text);
    if (err < 0)
        return err;
    *ret_value = strdup(text);
    return *ret_value ? 0 : -ENOMEM;
}

int dsh_config_get_list(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                        yaml_node_t *config, const char *path, char ***ret_items,
                        size_t *ret_count)
{
    struct lookup l;
    int err = resolve(provider, doc, config, path, &l);
    if (err < 0)
        return err;
    if (l.field->type != DSH_FIELD_LIST)
        return -EINVAL;
    if (!l.node && l.field->def.kind != DSH_DEFAULT_VALUE)
        return -ENOENT;
    if (l.node && l.node->type != YAML_SEQUENCE_NODE)
        return -EINVAL;

    size_t n = l.node ? (size_t)(l.node->data.sequence.items.top -
                                 l.node->data.sequence.items.start)
                      : l.field->def.value.n_items;
    char **items = calloc(n + 1, sizeof(*items));
    if (!items)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *text;
        if (l.node) {
            yaml_node_t *item =
                yaml_document_get_node(doc, l.node->data.sequence.items.start[i]);
            if (item->type != YAML_SCALAR_NODE) {
                dsh_strv_free(items);
                return -EINVAL;
            }
            text = dsh_node_text(item);
        } else {
            text = l.field->def.value.items[i];
        }
        if (!(items[i] = strdup(text))) {
            dsh_strv_free(items);
            return -ENOMEM;
        }
    }
    *ret_items = items;
    *ret_count = n;
    return 0;
}

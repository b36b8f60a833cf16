/* Profile composition: a base list of rows, then patch layers applied in order.
 *
 * Row:   {id, name, config?, disabled?, path?}
 * Patch: a list whose entries are either a row patch {id, name?, config?, disabled?, path?} --
 *        config replaces the row's whole config, the other keys replace that field -- or
 *        `insert: [rows]`, which appends complete rows. Later layers win.
 */
#include "dshh_profile.h"

#include "dshh_names.h"
#include "dshh_yaml.h"

#include "dsh_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void report(FILE *err, const struct dshh_layer *layer, const yaml_node_t *node,
                   const char *fmt, const char *arg)
{
    if (node)
        fprintf(err, "%s:%zu:%zu: ", layer->path, node->start_mark.line + 1,
                node->start_mark.column + 1);
    else
        fprintf(err, "%s: ", layer->path);
    fprintf(err, fmt, arg);
    fputc('\n', err);
}

static int get_string(FILE *err, const struct dshh_layer *layer, yaml_node_t *node,
                      const char *field, char **ret)
{
    const char *s = dshh__yaml_scalar(node);
    if (!s || dshh__yaml_is_null(node) || !*s) {
        report(err, layer, node, "%s must be a non-empty string", field);
        return -1;
    }
    char *copy = strdup(s);
    if (!copy)
        return -1;
    free(*ret);
    *ret = copy;
    return 0;
}

static int get_bool(FILE *err, const struct dshh_layer *layer, yaml_node_t *node, bool *ret)
{
    const char *s = dshh__yaml_scalar(node);
    if (s && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        if (!strcmp(s, "true")) {
            *ret = true;
            return 0;
        }
        if (!strcmp(s, "false")) {
            *ret = false;
            return 0;
        }
    }
    report(err, layer, node, "%s must be true or false", "disabled");
    return -1;
}

static bool is_row_key(const char *key)
{
    static const char *const known[] = {"id", "name", "config", "disabled", "path", NULL};
    for (size_t i = 0; key && known[i]; i++)
        if (!strcmp(key, known[i]))
            return true;
    return false;
}

/* Every key of a row or row patch is a row key, given once. */
static int check_keys(FILE *err, const struct dshh_layer *layer, yaml_node_t *map)
{
    yaml_document_t *doc = (yaml_document_t *)&layer->doc;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        const char *key = dshh__yaml_scalar(k);
        if (!is_row_key(key)) {
            report(err, layer, k, "unknown row key '%s' (expected id, name, config, disabled, path)",
                   key ? key : "?");
            return -1;
        }
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *first = yaml_document_get_node(doc, q->key);
            if (!strcmp(dshh__yaml_scalar(first), key)) {
                char what[256];
                snprintf(what, sizeof what, "%s' (first given at line %zu:%zu)", key,
                         first->start_mark.line + 1, first->start_mark.column + 1);
                report(err, layer, k, "duplicate row key '%s", what);
                return -1;
            }
        }
    }
    return 0;
}

/* Applies the fields present in map onto row (a new row or a patched one). */
static int apply_fields(FILE *err, const struct dshh_layer *layer, yaml_node_t *map,
                        struct dshh_row *row)
{
    yaml_document_t *doc = (yaml_document_t *)&layer->doc;
    yaml_node_t *n;
    if ((n = dsh_mapping_get_cstr(doc, map, "name")) && get_string(err, layer, n, "name", &row->name))
        return -1;
    if ((n = dsh_mapping_get_cstr(doc, map, "disabled")) && get_bool(err, layer, n, &row->disabled))
        return -1;
    if ((n = dsh_mapping_get_cstr(doc, map, "path"))) {
        if (get_string(err, layer, n, "path", &row->path))
            return -1;
        if (row->path[0] != '/') {
            report(err, layer, n, "path must be absolute, got '%s'", row->path);
            return -1;
        }
    }
    if ((n = dsh_mapping_get_cstr(doc, map, "config"))) {
        if (!dshh__yaml_is_null(n) && n->type != YAML_MAPPING_NODE) {
            report(err, layer, n, "%s must be a mapping", "config");
            return -1;
        }
        /* Replaces the whole config: earlier layers' keys do not survive a patch. */
        row->config = dshh__yaml_is_empty(n) ? NULL : n;
        row->config_layer = row->config ? layer : NULL;
    }
    row->layer = layer;
    return 0;
}

int dshh__row_check(FILE *err, const struct dshh_layer *layer, yaml_node_t *map)
{
    if (check_keys(err, layer, map))
        return -1;
    struct dshh_row scratch = {0};
    int rc = apply_fields(err, layer, map, &scratch);
    free(scratch.name);
    free(scratch.path);
    return rc;
}

static struct dshh_row *find_row(struct dshh_profile *profile, const char *id)
{
    for (size_t i = 0; i < profile->nrows; i++)
        if (!strcmp(profile->rows[i].id, id))
            return &profile->rows[i];
    return NULL;
}

const struct dshh_row *dshh__profile_find(const struct dshh_profile *profile, const char *id)
{
    return find_row((struct dshh_profile *)profile, id);
}

static int add_row(FILE *err, struct dshh_profile *profile, const struct dshh_layer *layer,
                   yaml_node_t *map)
{
    yaml_document_t *doc = (yaml_document_t *)&layer->doc;
    if (map->type != YAML_MAPPING_NODE) {
        report(err, layer, map, "a row must be a mapping {id, name, config, disabled}%s", "");
        return -1;
    }
    if (check_keys(err, layer, map))
        return -1;
    yaml_node_t *idn = dsh_mapping_get_cstr(doc, map, "id");
    if (!idn) {
        report(err, layer, map, "row has no %s", "id");
        return -1;
    }
    if (!dsh_mapping_get_cstr(doc, map, "name")) {
        report(err, layer, map, "row has no %s", "name");
        return -1;
    }
    struct dshh_row row = {.origin = layer};
    if (get_string(err, layer, idn, "id", &row.id))
        return -1;
    if (find_row(profile, row.id)) {
        report(err, layer, idn, "duplicate row id '%s'", row.id);
        free(row.id);
        return -1;
    }
    struct dshh_row *rows = realloc(profile->rows, (profile->nrows + 1) * sizeof(*rows));
    if (!rows) {
        free(row.id);
        return -1;
    }
    profile->rows = rows;
    rows[profile->nrows] = row;
    /* Counted before the fields so that a failing field still frees the row. */
    struct dshh_row *r = &rows[profile->nrows++];
    return apply_fields(err, layer, map, r);
}

static int apply_patch_entry(FILE *err, struct dshh_profile *profile,
                             const struct dshh_layer *layer, yaml_node_t *entry)
{
    yaml_document_t *doc = (yaml_document_t *)&layer->doc;
    if (entry->type != YAML_MAPPING_NODE) {
        report(err, layer, entry, "a patch entry must be a mapping (a row patch or insert)%s", "");
        return -1;
    }
    yaml_node_t *ins = dsh_mapping_get_cstr(doc, entry, "insert");
    if (ins) {
        if (entry->data.mapping.pairs.top - entry->data.mapping.pairs.start != 1) {
            report(err, layer, entry, "an insert entry has only the key %s", "'insert'");
            return -1;
        }
        if (ins->type != YAML_SEQUENCE_NODE) {
            report(err, layer, ins, "insert must be a list of rows%s", "");
            return -1;
        }
        for (yaml_node_item_t *it = ins->data.sequence.items.start;
             it < ins->data.sequence.items.top; it++)
            if (add_row(err, profile, layer, yaml_document_get_node(doc, *it)))
                return -1;
        return 0;
    }
    if (check_keys(err, layer, entry))
        return -1;
    yaml_node_t *idn = dsh_mapping_get_cstr(doc, entry, "id");
    const char *id = dshh__yaml_scalar(idn);
    if (!id) {
        report(err, layer, entry, "a row patch needs an id (use `- insert: [rows]` to add rows)%s",
               "");
        return -1;
    }
    struct dshh_row *row = find_row(profile, id);
    if (!row) {
        report(err, layer, idn, "no row with id '%s' to patch (use `- insert: [rows]` to add one)",
               id);
        return -1;
    }
    return apply_fields(err, layer, entry, row);
}

static struct dshh_layer *load_layer(struct dshh_profile *profile, const char *path, FILE *err)
{
    struct dshh_layer **layers =
        realloc(profile->layers, (profile->nlayers + 1) * sizeof(*layers));
    if (!layers)
        return NULL;
    profile->layers = layers;
    struct dshh_layer *layer = calloc(1, sizeof(*layer));
    if (!layer)
        return NULL;
    layers[profile->nlayers++] = layer;
    layer->path = strdup(path);
    if (!layer->path || dshh__yaml_load_file(path, &layer->doc, err))
        return NULL;
    layer->loaded = true;
    return layer;
}

/* Root of a layer: a list, or (an empty profile) nothing. An empty patch is refused: it is
 * more often a file not yet written or truncated than a wish to change nothing (`[]` says that). */
static int layer_items(FILE *err, struct dshh_layer *layer, bool patch, yaml_node_item_t **start,
                       yaml_node_item_t **top)
{
    yaml_node_t *root = yaml_document_get_root_node(&layer->doc);
    *start = *top = NULL;
    if (patch && (!root || dshh__yaml_is_null(root))) {
        fprintf(err, "dsh: %s: the patch is empty (a patch is a YAML list of rows; `[]` changes nothing)\n",
                layer->path);
        return -1;
    }
    if (!root || dshh__yaml_is_null(root))
        return 0;
    if (root->type != YAML_SEQUENCE_NODE) {
        report(err, layer, root, "a profile or patch is a YAML list of rows%s", "");
        return -1;
    }
    *start = root->data.sequence.items.start;
    *top = root->data.sequence.items.top;
    return 0;
}

int dshh__profile_compose(struct dshh_profile *profile, const char *base,
                          const char *const *patches, size_t npatches, FILE *err)
{
    memset(profile, 0, sizeof(*profile));
    yaml_node_item_t *it, *top;
    struct dshh_layer *layer = load_layer(profile, base, err);
    if (!layer || layer_items(err, layer, false, &it, &top))
        return -1;
    for (; it < top; it++)
        if (add_row(err, profile, layer, yaml_document_get_node(&layer->doc, *it)))
            return -1;
    for (size_t i = 0; i < npatches; i++) {
        layer = load_layer(profile, patches[i], err);
        if (!layer || layer_items(err, layer, true, &it, &top))
            return -1;
        for (; it < top; it++)
            if (apply_patch_entry(err, profile, layer, yaml_document_get_node(&layer->doc, *it)))
                return -1;
    }
    return 0;
}

/* The row's config as a document of its own (emitted and loaded again), or "{}" when empty. */
static int copy_config(const struct dshh_row *row, yaml_document_t *doc)
{
    char *text = NULL;
    size_t len = 0;
    if (row->config) {
        yaml_document_t *from = (yaml_document_t *)&row->config_layer->doc;
        int rc = dsh_yaml_node_emit(from, row->config, &text, &len);
        if (rc < 0)
            return rc;
    }
    struct dsh_diagnostics diags;
    int rc = dsh_yaml_load(text ? text : "{}", text ? len : 2, doc, &diags);
    dsh_diagnostics_release(&diags);
    free(text);
    return rc;
}

int dshh__profile_set_policy(struct dshh_profile *profile, const char *option, const char *key,
                             const char *value, FILE *err)
{
    int rc = dshh__profile_set_field(profile, option, DSHH_NAME_POLICY, key, value, true, err);
    if (rc == 1)
        fprintf(err, "dsh: %s needs an enabled %s row in the composition\n", option, DSHH_NAME_POLICY);
    return rc == 0 ? 0 : -1;
}

int dshh__profile_set_field(struct dshh_profile *profile, const char *option, const char *row_name,
                            const char *key, const char *value, bool string, FILE *err)
{
    struct dshh_row *row = NULL;
    for (size_t i = 0; i < profile->nrows && !row; i++)
        if (!profile->rows[i].disabled && !strcmp(profile->rows[i].name, row_name))
            row = &profile->rows[i];
    if (!row)
        return 1;
    struct dshh_layer **layers = realloc(profile->layers, (profile->nlayers + 1) * sizeof(*layers));
    if (!layers)
        return -1;
    profile->layers = layers;
    struct dshh_layer *layer = calloc(1, sizeof(*layer));
    if (!layer)
        return -1;
    layers[profile->nlayers++] = layer;
    size_t path_len = strlen("dsh ") + strlen(option) + 1;
    if (!(layer->path = malloc(path_len)))
        return -1;
    snprintf(layer->path, path_len, "dsh %s", option);
    layer->from_option = true;
    int rc = copy_config(row, &layer->doc);
    if (rc < 0) {
        fprintf(err, "dsh: %s: cannot copy row '%s': %s\n", option, row->id, strerror(-rc));
        return -1;
    }
    layer->loaded = true;
    yaml_document_t *doc = &layer->doc;
    yaml_node_t *root = yaml_document_get_root_node(doc);
    int root_id = 1; /* the loader adds the root node first */
    if (!root || root->type != YAML_MAPPING_NODE) /* a config is a mapping (validated before) */
        return -1;
    int value_id = yaml_document_add_scalar(
        doc, NULL, (yaml_char_t *)value, (int)strlen(value),
        string ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE);
    if (value_id == 0) {
        fprintf(err, "dsh: %s: out of memory\n", option);
        return -1;
    }
    root = yaml_document_get_root_node(doc); /* adding a node may move the node array */
    yaml_node_t *old = dsh_mapping_get_cstr(doc, root, key);
    bool replaced = false;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; old && p < root->data.mapping.pairs.top; p++)
        if (yaml_document_get_node(doc, p->value) == old) {
            p->value = value_id;
            replaced = true;
        }
    if (!replaced) {
        int key_id = yaml_document_add_scalar(doc, NULL, (yaml_char_t *)key, (int)strlen(key),
                                              YAML_PLAIN_SCALAR_STYLE);
        if (key_id == 0 || !yaml_document_append_mapping_pair(doc, root_id, key_id, value_id))
            return -1;
    }
    row->config = yaml_document_get_root_node(doc);
    row->config_layer = layer;
    row->layer = layer;
    return 0;
}

void dshh__profile_free(struct dshh_profile *profile)
{
    for (size_t i = 0; i < profile->nrows; i++) {
        free(profile->rows[i].id);
        free(profile->rows[i].name);
        free(profile->rows[i].path);
    }
    free(profile->rows);
    for (size_t i = 0; i < profile->nlayers; i++) {
        if (profile->layers[i]->loaded)
            yaml_document_delete(&profile->layers[i]->doc);
        free(profile->layers[i]->path);
        free(profile->layers[i]);
    }
    free(profile->layers);
    memset(profile, 0, sizeof(*profile));
}

const struct dshh_row *dshh__profile_enabled_row(const struct dshh_profile *profile, const char *row_name)
{
    for (size_t i = 0; i < profile->nrows; i++)
        if (!profile->rows[i].disabled && !strcmp(profile->rows[i].name, row_name))
            return &profile->rows[i];
    return NULL;
}

bool dshh__profile_value(const struct dshh_profile *profile, const char *row_name, const char *key,
                         bool is_bool, void *slot)
{
    const struct dshh_row *row = dshh__profile_enabled_row(profile, row_name);
    struct dsh_catalog *cat;
    if (dsh_catalog_open(&cat, NULL, 0) < 0)
        return false;
    const struct dsh_catalog_provider *p = dsh_catalog_find(cat, row_name);
    /* Without the row: the catalog's default, read from an empty config. */
    yaml_document_t *doc =
        row ? (yaml_document_t *)&(row->config_layer ? row->config_layer : row->layer)->doc : NULL;
    int rc = !p ? -1
             : is_bool ? dsh_config_get_bool(p, doc, row ? row->config : NULL, key, slot)
                       : dsh_config_get_int(p, doc, row ? row->config : NULL, key, slot);
    dsh_catalog_close(cat);
    return rc >= 0;
}

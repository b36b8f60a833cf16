/* Validates a row's config mapping against the catalog, collecting every
 * error with its field path and line:column. Cross-field rules (requires,
 * atMost) compare effective values: given, or the catalog default. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dsh_catalog_lookup.h"
#include "dsh_diagnostics.h"
#include "dsh_getters.h"
#include "dsh_strv.h"
#include "dsh_validate.h"
#include "scalar.h"

struct ctx {
    yaml_document_t *doc;
    struct dsh_diagnostics *diags;
    int err; /* sticky -ENOMEM */
};

/* One catalog field's occurrence in the mapping being validated. */
struct slot {
    yaml_node_t *key;
    yaml_node_t *value;
    bool valid; /* the value passed its own field's checks */
};

static void report(struct ctx *c, const char *path, yaml_mark_t mark, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void report(struct ctx *c, const char *path, yaml_mark_t mark, const char *fmt, ...)
{
    char problem[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof(problem), fmt, ap);
    va_end(ap);
    if (dsh_diagnostics_add_at(c->diags, path, mark, problem) < 0)
        c->err = -ENOMEM;
}

static void join_values(char *const *values, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; values[i] && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", values[i]);
}

/* "expected ..., got ..." for a node of the wrong kind. */
static void wrong_type(struct ctx *c, const char *path, const struct dsh_catalog_field *f,
                       enum dsh_field_type type, yaml_node_t *node)
{
    char got[256], values[256];
    const char *desc = dsh_node_describe(node, got, sizeof(got));
    switch (type) {
    case DSH_FIELD_ENUM:
        join_values(f->values, values, sizeof(values));
        report(c, path, node->start_mark, "expected one of %s, got %s", values, desc);
        return;
    case DSH_FIELD_BOOLEAN:
        report(c, path, node->start_mark, "expected a boolean (true or false), got %s", desc);
        return;
    case DSH_FIELD_INTEGER:
        report(c, path, node->start_mark, "expected %s in plain decimal digits, got %s",
               f->has_min && f->min >= 1 ? "a positive integer" : "an integer", desc);
        return;
    case DSH_FIELD_STRING:
        report(c, path, node->start_mark, "expected a string, got %s", desc);
        return;
    case DSH_FIELD_PATH:
        report(c, path, node->start_mark, "expected an absolute path string, got %s", desc);
        return;
    case DSH_FIELD_LIST:
        report(c, path, node->start_mark, "expected a sequence, got %s", desc);
        return;
    case DSH_FIELD_OBJECT:
    case DSH_FIELD_MAP:
        report(c, path, node->start_mark, "expected a mapping, got %s", desc);
        return;
    }
}

static bool check_scalar(struct ctx *c, const char *path, const struct dsh_catalog_field *f,
                         enum dsh_field_type type, yaml_node_t *node)
{
    if (node->type != YAML_SCALAR_NODE) {
        wrong_type(c, path, f, type, node);
        return false;
    }
    enum dsh_scalar_kind kind = dsh_scalar_kind(node);
    const char *text = dsh_node_text(node);
    char values[256];
    int64_t v;

    switch (type) {
    case DSH_FIELD_BOOLEAN:
        if (kind == DSH_SCALAR_BOOL)
            return true;
        break;
    case DSH_FIELD_INTEGER:
        if (kind != DSH_SCALAR_INT)
            break;
        if (dsh_scalar_int(node, &v) < 0) {
            report(c, path, node->start_mark, "%.40s is out of range", text);
            return false;
        }
        if (f->has_min && v < f->min) {
            report(c, path, node->start_mark, "%lld is below the minimum %lld",
                   (long long)v, (long long)f->min);
            return false;
        }
        if (f->has_max && v > f->max) {
            report(c, path, node->start_mark, "%lld exceeds the maximum %lld",
                   (long long)v, (long long)f->max);
            return false;
        }
        return true;
    case DSH_FIELD_ENUM:
        if (kind != DSH_SCALAR_STRING)
            break;
        if (!dsh_strv_contains(f->values, text)) {
            join_values(f->values, values, sizeof(values));
            char got[256];
            report(c, path, node->start_mark, "%s is not one of %s",
                   dsh_node_describe(node, got, sizeof(got)), values);
            return false;
        }
        return true;
    case DSH_FIELD_STRING:
    case DSH_FIELD_PATH:
        if (kind != DSH_SCALAR_STRING)
            break;
        if (strlen(text) != node->data.scalar.length) {
            report(c, path, node->start_mark, "must not contain NUL characters");
            return false;
        }
        if ((f->non_empty || type == DSH_FIELD_PATH) && text[0] == '\0') {
            report(c, path, node->start_mark, "must not be empty");
            return false;
        }
        if (type == DSH_FIELD_PATH && text[0] != '/') {
            report(c, path, node->start_mark, "must be an absolute path, got \"%.200s\"",
                   text);
            return false;
        }
        return true;
    default:
        break;
    }
    wrong_type(c, path, f, type, node);
    return false;
}

static void validate_mapping(struct ctx *c, const struct dsh_catalog_field *fields, size_t n,
                             yaml_node_t *map, const char *prefix);

/* A map: names the author chooses (non-empty strings, each once) to objects of f's fields. */
static bool validate_map(struct ctx *c, const char *path, const struct dsh_catalog_field *f,
                         yaml_node_t *node)
{
    if (node->type != YAML_MAPPING_NODE) {
        wrong_type(c, path, f, f->type, node);
        return false;
    }
    bool ok = true;
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *value = yaml_document_get_node(c->doc, p->value);
        char entry_path[512 + 256], got[256];
        if (key->type != YAML_SCALAR_NODE || dsh_scalar_kind(key) != DSH_SCALAR_STRING ||
            key->data.scalar.length == 0 || strlen(dsh_node_text(key)) != key->data.scalar.length) {
            report(c, path, key->start_mark, "keys must be non-empty names, got %s",
                   dsh_node_describe(key, got, sizeof(got)));
            ok = false;
            continue;
        }
        for (yaml_node_pair_t *q = node->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *earlier = yaml_document_get_node(c->doc, q->key);
            if (earlier->type == YAML_SCALAR_NODE &&
                strcmp(dsh_node_text(earlier), dsh_node_text(key)) == 0) {
                report(c, path, key->start_mark,
                       "duplicate name %.200s (first given at line %zu:%zu)",
                       dsh_node_text(key), earlier->start_mark.line + 1,
                       earlier->start_mark.column + 1);
                ok = false;
                break;
            }
        }
        snprintf(entry_path, sizeof(entry_path), "%s.%s", path, dsh_node_text(key));
        if (value->type != YAML_MAPPING_NODE) {
            wrong_type(c, entry_path, f, DSH_FIELD_OBJECT, value);
            ok = false;
        } else {
            validate_mapping(c, f->fields, f->n_fields, value, entry_path);
        }
    }
    return ok;
}

static bool validate_value(struct ctx *c, const char *path, const struct dsh_catalog_field *f,
                           yaml_node_t *node)
{
    if (f->type == DSH_FIELD_MAP)
        return validate_map(c, path, f, node);
    if (f->type == DSH_FIELD_OBJECT) {
        if (node->type != YAML_MAPPING_NODE) {
            wrong_type(c, path, f, f->type, node);
            return false;
        }
        validate_mapping(c, f->fields, f->n_fields, node, path);
        return true;
    }
    if (f->type != DSH_FIELD_LIST)
        return check_scalar(c, path, f, f->type, node);

    if (node->type != YAML_SEQUENCE_NODE) {
        wrong_type(c, path, f, f->type, node);
        return false;
    }
    bool ok = true;
    size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    for (size_t i = 0; i < n; i++) {
        char item_path[512 + 24]; /* paths are at most 511 bytes + "[index]" */
        snprintf(item_path, sizeof(item_path), "%s[%zu]", path, i);
        yaml_node_t *item = yaml_document_get_node(c->doc, node->data.sequence.items.start[i]);
        if (f->item_type != DSH_FIELD_OBJECT) {
            ok = check_scalar(c, item_path, f, f->item_type, item) && ok;
        } else if (item->type != YAML_MAPPING_NODE) {
            wrong_type(c, item_path, f, f->item_type, item);
            ok = false;
        } else {
            validate_mapping(c, f->fields, f->n_fields, item, item_path);
        }
    }
    return ok;
}

static void field_path(char *buf, size_t size, const char *prefix, const char *key)
{
    int len = snprintf(buf, size, "%s%s%s", prefix, prefix[0] ? "." : "", key);
    (void)len; /* a cut path still names the field */
}

static void unknown_key(struct ctx *c, const struct dsh_catalog_field *fields, size_t n,
                        yaml_node_t *key, const char *prefix)
{
    char path[512];
    field_path(path, sizeof(path), prefix, dsh_node_text(key));
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(fields[i].key, dsh_node_text(key)) == 0) {
            report(c, path, key->start_mark, "unknown field; did you mean %s?",
                   fields[i].key);
            return;
        }
    report(c, path, key->start_mark, "unknown field");
}

/* requires: when this field is given (and holds `when`), a sibling must hold `equals`. */
static void check_requires(struct ctx *c, const struct dsh_catalog_field *fields, size_t n,
                           yaml_node_t *map, const struct slot *slots, size_t i,
                           const char *prefix)
{
    const struct dsh_catalog_field *f = &fields[i];
    for (size_t k = 0; k < f->n_requires; k++) {
        const struct dsh_catalog_requirement *q = &f->requires[k];
        if (strcmp(q->when, "present") != 0 &&
            strcmp(q->when, dsh_node_text(slots[i].value)) != 0)
            continue;
        const struct dsh_catalog_field *s = dsh_catalog_field_lookup(fields, n, q->field,
                                                                     strlen(q->field));
        const struct slot *ss = &slots[s - fields];
        const char *have;
        if (ss->key && !ss->valid)
            continue; /* the sibling's own error says enough */
        if (dsh_config_effective_text(c->doc, fields, n, map, s, &have) < 0) {
            if (s->required)
                continue; /* reported as missing */
            have = NULL;
        }
        if (have && strcmp(have, q->equals) == 0)
            continue;
        char path[512], spath[512];
        field_path(path, sizeof(path), prefix, f->key);
        field_path(spath, sizeof(spath), prefix, s->key);
        if (strcmp(q->when, "present") == 0)
            report(c, path, slots[i].value->start_mark, "requires %s: %s (%s is %s)",
                   spath, q->equals, spath, have ? have : "not set");
        else
            report(c, path, slots[i].value->start_mark, "%s requires %s: %s (%s is %s)",
                   q->when, spath, q->equals, spath, have ? have : "not set");
    }
}

/* atMost: this field's effective value must not exceed a sibling's. */
static void check_at_most(struct ctx *c, const struct dsh_catalog_field *fields, size_t n,
                          yaml_node_t *map, const struct slot *slots, size_t i,
                          const char *prefix)
{
    const struct dsh_catalog_field *f = &fields[i];
    const struct dsh_catalog_field *s =
        dsh_catalog_field_lookup(fields, n, f->at_most, strlen(f->at_most));
    const struct slot *ss = &slots[s - fields];
    const char *mine, *limit;
    if ((slots[i].key && !slots[i].valid) || (ss->key && !ss->valid) ||
        (!slots[i].key && !ss->key))
        return;
    if (dsh_config_effective_text(c->doc, fields, n, map, f, &mine) < 0 ||
        dsh_config_effective_text(c->doc, fields, n, map, s, &limit) < 0)
        return;
    long long a = strtoll(mine, NULL, 10), b = strtoll(limit, NULL, 10);
    if (a <= b)
        return;
    char path[512], spath[512];
    field_path(path, sizeof(path), prefix, f->key);
    field_path(spath, sizeof(spath), prefix, s->key);
    /* Blame the field the author wrote; with both given, the constrained one. */
    if (slots[i].key)
        report(c, path, slots[i].value->start_mark, "%lld exceeds %s %lld%s", a, spath, b,
               ss->key ? "" : " (default)");
    else
        report(c, spath, ss->value->start_mark, "%lld is below %s %lld (default)", b, path,
               a);
}

static void validate_mapping(struct ctx *c, const struct dsh_catalog_field *fields, size_t n,
                             yaml_node_t *map, const char *prefix)
{
    struct slot *slots = calloc(n ? n : 1, sizeof(*slots));
    if (!slots) {
        c->err = -ENOMEM;
        return;
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *key = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *value = yaml_document_get_node(c->doc, p->value);
        char path[512], got[256];
        if (key->type != YAML_SCALAR_NODE || dsh_scalar_kind(key) == DSH_SCALAR_NULL) {
            report(c, prefix[0] ? prefix : "config", key->start_mark,
                   "keys must be field names, got %s",
                   dsh_node_describe(key, got, sizeof(got)));
            continue;
        }
        const struct dsh_catalog_field *f =
            dsh_catalog_field_lookup(fields, n, dsh_node_text(key), key->data.scalar.length);
        if (!f) {
            unknown_key(c, fields, n, key, prefix);
            continue;
        }
        struct slot *s = &slots[f - fields];
        field_path(path, sizeof(path), prefix, f->key);
        if (s->key) {
            report(c, path, key->start_mark, "duplicate key (first given at line %zu:%zu)",
                   s->key->start_mark.line + 1, s->key->start_mark.column + 1);
            continue;
        }
        *s = (struct slot){.key = key, .value = value};
        s->valid = validate_value(c, path, f, value);
    }

    for (size_t i = 0; i < n; i++) {
        char path[512];
        field_path(path, sizeof(path), prefix, fields[i].key);
        if (fields[i].required && !slots[i].key)
            report(c, path, map->start_mark, "required field missing");
        if (slots[i].key && slots[i].valid)
            check_requires(c, fields, n, map, slots, i, prefix);
        if (fields[i].at_most)
            check_at_most(c, fields, n, map, slots, i, prefix);
    }
    free(slots);
}

int dsh_config_validate_node(const struct dsh_catalog *cat, const char *provider_name,
                             yaml_document_t *doc, yaml_node_t *config_node,
                             struct dsh_diagnostics *ret_diags)
{
    struct dsh_diagnostics local;
    struct ctx c = {.doc = doc, .diags = ret_diags ? ret_diags : &local};
    dsh_diagnostics_init(c.diags);

    const struct dsh_catalog_provider *provider = dsh_catalog_find(cat, provider_name);
    yaml_mark_t at = config_node ? config_node->start_mark : (yaml_mark_t){0};
    if (!provider)
        report(&c, "name", at, "unknown provider \"%.200s\"",
               provider_name ? provider_name : "(null)");
    else if (!config_node || dsh_node_is_null(config_node))
        ; /* no config: every field takes its default */
    else if (config_node->type != YAML_MAPPING_NODE)
        wrong_type(&c, "config", NULL, DSH_FIELD_OBJECT, config_node);
    else
        validate_mapping(&c, provider->fields, provider->n_fields, config_node, "");

    int err = c.err ? c.err : c.diags->count > 0 ? -EINVAL : 0;
    if (!ret_diags)
        dsh_diagnostics_release(&local);
    return err;
}

/* Cross-file internals of config/ (not installed, not for the plugin). */
#ifndef DSH_CONFIG_INTERNAL_H
#define DSH_CONFIG_INTERNAL_H

#include "dsh_config.h"

/* What a scalar node means under the strict YAML 1.2 core subset we accept. */
enum dsh_scalar_kind {
    DSH_SCALAR_NULL,   /* plain "", "~", "null", "Null", "NULL" */
    DSH_SCALAR_BOOL,   /* plain "true" / "false" only */
    DSH_SCALAR_INT,    /* plain [-+]?(0|[1-9][0-9]*) */
    DSH_SCALAR_NUMBER, /* any other number: 1.5, 1e3, .inf, 0x10, 0o7, 010 */
    DSH_SCALAR_STRING, /* quoted, block, or any other plain text */
    DSH_SCALAR_TAGGED, /* an explicit tag we do not interpret (e.g. !custom) */
};

enum dsh_scalar_kind dsh_scalar_kind(const yaml_node_t *node);
/* DSH_SCALAR_INT text to int64: -ERANGE when it does not fit. */
int dsh_scalar_int(const yaml_node_t *node, int64_t *ret_value);
/* libyaml keeps scalar values NUL-terminated. */
static inline const char *dsh_node_text(const yaml_node_t *node)
{
    return (const char *)node->data.scalar.value;
}
/* "null", "a mapping", "string \"abc\"", "integer 5"... into buf. */
const char *dsh_node_describe(const yaml_node_t *node, char *buf, size_t size);
/* First value of key in a mapping node; NULL when absent or map is no mapping. */
yaml_node_t *dsh_mapping_get(yaml_document_t *doc, yaml_node_t *map, const char *key);
bool dsh_node_is_null(const yaml_node_t *node);

/* Appends one diagnostic; line/column are 1-based (0 = unknown). */
int dsh_diagnostics_add(struct dsh_diagnostics *diags, const char *path, size_t line,
                        size_t column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static inline int dsh_diagnostics_add_at(struct dsh_diagnostics *diags, const char *path,
                                         yaml_mark_t mark, const char *problem)
{
    return dsh_diagnostics_add(diags, path, mark.line + 1, mark.column + 1, "%s", problem);
}

/* Effective scalar text of field (a member of fields[0..n) for mapping map):
 * the given node's text, else its (conditional) default. -ENOENT when absent
 * without a default; -EINVAL for non-scalar fields. (transfer none) */
int dsh_config_effective_text(yaml_document_t *doc, const struct dsh_catalog_field *fields,
                              size_t n_fields, yaml_node_t *map,
                              const struct dsh_catalog_field *field, const char **ret_text);

/* A loaded, validated row of one provider. */
struct dsh_row {
    struct dsh_catalog *catalog;
    const struct dsh_catalog_provider *provider;
    yaml_document_t doc;
    yaml_node_t *root; /* NULL = empty config */
};
int dsh_row_load(const char *provider_name, const char *text, size_t len, struct dsh_row *ret_row,
                 struct dsh_diagnostics *ret_diags);
void dsh_row_release(struct dsh_row *row); /* NULL ok */

#endif

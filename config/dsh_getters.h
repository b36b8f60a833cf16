/* Effective values of a validated config (getters.c): the given value, else the catalog default. */
#ifndef DSH_GETTERS_H
#define DSH_GETTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "dsh_catalog.h"

/* Effective scalar text of field (a member of fields[0..n) for mapping map):
 * the given node's text, else its (conditional) default. -ENOENT when absent
 * without a default; -EINVAL for non-scalar fields. (transfer none) */
int dsh_config_effective_text(yaml_document_t *doc, const struct dsh_catalog_field *fields,
                              size_t n_fields, yaml_node_t *map,
                              const struct dsh_catalog_field *field, const char **ret_text);

/* path is dotted ("launch.kind"). Absent fields yield the catalog default
 * (conditional defaults resolved against siblings) or -ENOENT when the catalog
 * has none. -EINVAL: unknown path, wrong getter for the field's type, or a
 * node that does not hold a valid value. config may be NULL (all absent). */

bool dsh_config_is_set(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                       yaml_node_t *config, const char *path);
int dsh_config_get_bool(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                        yaml_node_t *config, const char *path, bool *ret_value);
int dsh_config_get_int(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                       yaml_node_t *config, const char *path, int64_t *ret_value);
/* enum, string and path fields (transfer full). */
int dsh_config_get_str(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                       yaml_node_t *config, const char *path, char **ret_value);
/* list fields: NULL-terminated strv of item texts (transfer full, dsh_strv_free from dsh_strv.h). */
int dsh_config_get_list(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                        yaml_node_t *config, const char *path, char ***ret_items,
                        size_t *ret_count);

#endif

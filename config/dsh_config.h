/* Provider-row configuration: YAML (libyaml) validated against catalog.yaml.
 *
 * Errors are negative errno: -EINVAL (invalid input, details in diagnostics),
 * -ENOMEM, -ENOENT (getters: no value and no static default). */
#ifndef DSH_CONFIG_H
#define DSH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "dsh_catalog.h"
#include "dsh_strv.h"

/* ---- diagnostics ---------------------------------------------------- */

struct dsh_diagnostic {
    char *path;    /* field path: "timeoutMs", "launch.executable", "extraWritableRoots[1]",
                      "config" (the mapping itself), "yaml" (syntax), "name" (provider) */
    size_t line;   /* 1-based; 0 when no position is known */
    size_t column; /* 1-based */
    char *problem; /* the message without path and position */
    char *text;    /* "<path>: <problem> (line L:C)" */
};

struct dsh_diagnostics {
    struct dsh_diagnostic *items;
    size_t count;
    size_t capacity;
};

void dsh_diagnostics_init(struct dsh_diagnostics *diags);
/* Frees all items and re-initializes; NULL ok. */
void dsh_diagnostics_release(struct dsh_diagnostics *diags);
/* All texts joined by '\n' (transfer full; "" when none). */
int dsh_diagnostics_join(const struct dsh_diagnostics *diags, char **ret_text);

/* ---- YAML text in and out ------------------------------------------- */

/* Loads exactly one YAML document. Empty text gives a document without a root
 * node (= an empty config). On -EINVAL ret_diags names the syntax error. Every
 * ret_diags below is initialized by the call (may be NULL); release it with
 * dsh_diagnostics_release. *ret_doc must be yaml_document_delete()d on success
 * and is zeroed (deleting it is harmless) on failure. */
int dsh_yaml_load(const char *text, size_t len, yaml_document_t *ret_doc,
                  struct dsh_diagnostics *ret_diags);

/* Re-emits node's subtree as a standalone YAML document (transfer full,
 * NUL-terminated). Scalar styles are kept, so "5" stays a string. */
int dsh_yaml_node_emit(yaml_document_t *doc, yaml_node_t *node, char **ret_text, size_t *ret_len);

/* ---- validation ----------------------------------------------------- */

/* Validates one row's config mapping (NULL, an empty document root or a YAML
 * null means "all defaults") against the catalog entry of provider_name,
 * collecting every error. Returns 0 when valid, -EINVAL with diagnostics when
 * not, -ENOMEM. */
int dsh_config_validate_node(const struct dsh_catalog *cat, const char *provider_name,
                             yaml_document_t *doc, yaml_node_t *config_node,
                             struct dsh_diagnostics *ret_diags);

/* Convenience: dsh_yaml_load + dsh_catalog_open + validate. */
int dsh_config_validate_text(const char *provider_name, const char *text, size_t len,
                             struct dsh_diagnostics *ret_diags);

/* ---- effective values of a validated config ------------------------- */
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

#include "dsh_typed_config.h"

#endif

/* A row's config against its catalog entry (validate.c). */
#ifndef DSH_VALIDATE_H
#define DSH_VALIDATE_H

#include <yaml.h>

#include "dsh_catalog.h"
#include "dsh_diagnostics.h"

/* Validates one row's config mapping (NULL, an empty document root or a YAML
 * null means "all defaults") against the catalog entry of provider_name,
 * collecting every error. Returns 0 when valid, -EINVAL with diagnostics when
 * not, -ENOMEM. */
int dsh_config_validate_node(const struct dsh_catalog *cat, const char *provider_name,
                             yaml_document_t *doc, yaml_node_t *config_node,
                             struct dsh_diagnostics *ret_diags);

#endif

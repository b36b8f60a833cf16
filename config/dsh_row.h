/* One provider row's YAML text loaded and validated against the embedded catalog (row.c). */
#ifndef DSH_ROW_H
#define DSH_ROW_H

#include <stddef.h>
#include <yaml.h>

#include "dsh_catalog.h"
#include "dsh_diagnostics.h"

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

/* dsh_row_load without keeping the row. */
int dsh_config_validate_text(const char *provider_name, const char *text, size_t len,
                             struct dsh_diagnostics *ret_diags);

#endif

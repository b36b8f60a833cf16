/* A provider row: its YAML loaded, the embedded catalog opened, the config validated. See
 * dsh_row.h. */
#include <string.h>

#include "dsh_catalog_lookup.h"
#include "dsh_row.h"
#include "dsh_validate.h"
#include "dsh_yaml_load.h"

void dsh_row_release(struct dsh_row *row)
{
    if (!row)
        return;
    yaml_document_delete(&row->doc);
    dsh_catalog_close(row->catalog);
    memset(row, 0, sizeof(*row));
}

int dsh_row_load(const char *provider_name, const char *text, size_t len, struct dsh_row *ret_row,
                 struct dsh_diagnostics *ret_diags)
{
    char errbuf[256];
    memset(ret_row, 0, sizeof(*ret_row));
    int err = dsh_yaml_load(text, len, &ret_row->doc, ret_diags);
    if (err < 0)
        return err;
    ret_row->root = yaml_document_get_root_node(&ret_row->doc);

    err = dsh_catalog_open(&ret_row->catalog, errbuf, sizeof(errbuf));
    if (err < 0) {
        /* Only a broken build gets here; still say why. */
        int e = dsh_diagnostics_add(ret_diags, "catalog", 0, 0, "%s", errbuf);
        dsh_row_release(ret_row);
        return e < 0 ? e : err;
    }
    err = dsh_config_validate_node(ret_row->catalog, provider_name, &ret_row->doc,
                                   ret_row->root, ret_diags);
    if (err < 0) {
        dsh_row_release(ret_row);
        return err;
    }
    ret_row->provider = dsh_catalog_find(ret_row->catalog, provider_name);
    return 0;
}

int dsh_config_validate_text(const char *provider_name, const char *text, size_t len,
                             struct dsh_diagnostics *ret_diags)
{
    struct dsh_row row;
    int err = dsh_row_load(provider_name, text, len, &row, ret_diags);
    dsh_row_release(&row);
    return err;
}

/* Internals shared by the catalog reader files. */
#ifndef DSH_CATALOG_INTERNAL_H
#define DSH_CATALOG_INTERNAL_H

#include "config_internal.h"

struct dsh_catalog_reader {
    yaml_document_t *doc;
    char *errbuf;
    size_t errlen;
    int err; /* first error; later failures keep it */
};

/* Records "catalog.yaml:L:C: ..." (first error wins); returns the error. */
int dsh_catalog_fail(struct dsh_catalog_reader *r, const yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int dsh_catalog_read_fields(struct dsh_catalog_reader *r, yaml_node_t *seq,
                            struct dsh_catalog_field **ret_fields, size_t *ret_n);
/* Cross-field references of one field list: unique keys, requires/atMost/if
 * naming existing siblings with matching types and values. */
int dsh_catalog_check_siblings(struct dsh_catalog_reader *r, yaml_node_t *seq,
                               const struct dsh_catalog_field *fields, size_t n);

#endif

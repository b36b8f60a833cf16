/* Lookups in a parsed catalog, and freeing it (catalog_lookup.c). */
#ifndef DSH_CATALOG_LOOKUP_H
#define DSH_CATALOG_LOOKUP_H

#include <stddef.h>

#include "dsh_catalog.h"

void dsh_catalog_close(struct dsh_catalog *catalog); /* NULL ok */

/* (transfer none) NULL when unknown. */
const struct dsh_catalog_provider *dsh_catalog_find(const struct dsh_catalog *catalog,
                                                    const char *provider_name);
/* Field by dotted path ("launch.kind"); NULL when unknown. (transfer none) */
const struct dsh_catalog_field *dsh_catalog_field_find(const struct dsh_catalog_provider *provider,
                                                       const char *path);
/* Among fields[0..n); key need not be NUL-terminated. */
const struct dsh_catalog_field *dsh_catalog_field_lookup(const struct dsh_catalog_field *fields,
                                                         size_t n_fields, const char *key,
                                                         size_t key_len);
const char *dsh_field_type_name(enum dsh_field_type type);

#endif

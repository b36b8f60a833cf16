/* Cross-field references within one field list of the catalog (catalog_check.c); not installed. */
#ifndef DSH_CATALOG_CHECK_H
#define DSH_CATALOG_CHECK_H

#include <stddef.h>

#include "dsh_catalog.h"

/* Unique keys, and requires/atMost/if naming existing siblings with matching types and values.
 * 0, or -EINVAL with *ret_index the offending field and problem[0..size) the reason. */
int dsh_catalog_check_siblings(const struct dsh_catalog_field *fields, size_t n, size_t *ret_index,
                               char *problem, size_t size);

#endif

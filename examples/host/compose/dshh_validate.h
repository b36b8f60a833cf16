/* Catalog validation of rows and `dsh config` (dshh_validate.c). */
#ifndef DSHH_VALIDATE_H
#define DSHH_VALIDATE_H

#include "dshh_profile.h"

/* Validates the rows of the composition (all, or only the enabled ones); prints diagnostics to
 * err. Returns the number of invalid rows, or -1 when the catalog cannot be read. */
int dshh__validate_profile(const struct dshh_profile *profile, bool enabled_only, FILE *err);
/* `dsh config validate [FILE]` / `dsh config persistent-patch` of the composition base +
 * patches; argv: the words after "config" (main.c checked them); format: --format or NULL. */
int dshh__cmd_config(const char *base, const char *const *patches, size_t npatches, const char *format,
                     int argc, char **argv);

#endif

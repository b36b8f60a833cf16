/* `dsh config persistent-patch` (dshh_persistent_patch.c). */
#ifndef DSHH_PERSISTENT_PATCH_H
#define DSHH_PERSISTENT_PATCH_H

#include "dshh_profile.h"

/* format NULL = the row's effective format. */
int dshh__cmd_persistent_patch(const struct dshh_profile *profile, const char *format, FILE *out, FILE *err);

#endif

/* --dump-config (dshh_dump.c). */
#ifndef DSHH_DUMP_H
#define DSHH_DUMP_H

#include "dshh_profile.h"

/* Prints the composed rows, each after a "# layer:" comment (config/emit.c emits their configs). */
int dshh__dump_profile(const struct dshh_profile *profile, FILE *out);

#endif

/* `dsh doctor` (dshh_doctor.c). */
#ifndef DSHH_DOCTOR_H
#define DSHH_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

/* Reports what this machine gives the sandbox under the composition base + patches. */
int dshh__cmd_doctor(const char *base, const char *const *patches, size_t npatches, bool verbose);

#endif

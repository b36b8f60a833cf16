/* dlopen of a provider's shared object and its ABI checks (dshh_provider_loader.c). */
#ifndef DSHH_PROVIDER_LOADER_H
#define DSHH_PROVIDER_LOADER_H

#include "dsh_provider.h"

#include <stdio.h>

int dshh__provider_open(const char *path, const char *row_name, void **ret_dl,
                        const struct dsh_provider **ret_provider, FILE *err);

#endif

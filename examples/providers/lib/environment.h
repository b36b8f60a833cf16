/* The environment of spawned ranges (environment.c). */
#ifndef DSHX_ENVIRONMENT_H
#define DSHX_ENVIRONMENT_H

#include "dsh_abi.h"

int dshx__build_env(const char *const *additions, const char *cwd, char ***ret_env,
                    struct dsh_error *ret_error);

#endif /* DSHX_ENVIRONMENT_H */

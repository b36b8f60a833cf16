/* The argv that starts the bootstrap: the pinned Node or an explicit `launch` configuration. */
#ifndef PTC_LAUNCH_H
#define PTC_LAUNCH_H

#include "host.h"

/* Builds the argv (transfer full, NULL-terminated; free with dsh_strv_free) and the env
 * additions the launch needs. */
int ptc__launch_argv(struct ptc_host *host, char ***ret_argv, char ***ret_env, struct dsh_error *err);

#endif

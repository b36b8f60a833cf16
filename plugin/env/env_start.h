/* Starting an environment (env_start.c): launch argv, confinement, spawn. */
#ifndef PTC_ENV_START_H
#define PTC_ENV_START_H

#include "env.h"

/* Creates an environment confined by policy ({mode, workspaceRoot, sessionId}) and starts
 * confining it (completion continues on the loop): CONFINING, then STARTING once spawned. NULL
 * when out of memory. */
struct ptc_env *ptc__env_create(struct ptc_envs *set, json_object *policy, const char *owner, const char *format,
                                bool retain);

#endif

/* The argv that starts the bootstrap: the pinned Node or an explicit `launch` configuration. */
#ifndef PTC_LAUNCH_H
#define PTC_LAUNCH_H

#include "ptc_host.h"

/* Builds the argv (transfer full, NULL-terminated; free with dsh_strv_free) and the env
 * additions the launch needs. */
int ptc__launch_argv(struct ptc_host *host, char ***ret_argv, char ***ret_env, struct dsh_error *err);
/* The argv of the type stripper (bootstrap/stripper.js, or launch.stripperPath, run by the
 * launch's Node) and, into ret_dir, the directory of its script (the stripper's confinement root).
 * DSH_E_UNSUPPORTED for an embedded carrier, which strips in its own process. */
int ptc__launch_stripper_argv(struct ptc_host *host, char ***ret_argv, char *ret_dir, size_t dir_len,
                              struct dsh_error *err);
/* host_path as the execution world names it (fs.map_host_path), into buf. */
int ptc__launch_map_path(struct ptc_host *host, const char *host_path, char *buf, size_t len, struct dsh_error *err);
/* An executable: an absolute subprocess-world path as is, or a bare name found on the host's PATH
 * and mapped into the execution world. field names the config field in messages. */
int ptc__launch_resolve_executable(struct ptc_host *host, const char *field, const char *name, char *buf,
                                   size_t len, struct dsh_error *err);
/* A NULL-terminated copy of n strings (transfer full; free with dsh_strv_free). */
char **ptc__argv_dup(const char *const *argv, size_t n);

#endif

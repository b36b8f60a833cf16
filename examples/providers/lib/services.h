/* The four services of an instance, as the composition root (dsh_linux_services.c) makes and
 * ends them. A shared header (README.md says why): fs_service.c, sandbox_service.c,
 * subprocess_service.c and policy_service.c define these functions and include nothing else of
 * each other. */
#ifndef DSHX_SERVICES_H
#define DSHX_SERVICES_H

#include "services_config.h"

struct dshx__fs;         /* fs_service.c: a host path maps to itself when the execution world
                          * (shared/world.c) shows it, else it is DSH_E_NOT_MAPPED */
struct dshx__sandbox;    /* sandbox_service.c: confine (the launcher's argv and the report),
                          * cancel_confine, is_denial, release_confinement */
struct dshx__subprocess; /* subprocess_service.c: spawn, terminate, poll_quiescent, release,
                          * freeze, usage over managed ranges (range_spawn.h starts them) */
struct dshx__policy;     /* policy_service.c: the standing policy of each session and its
                          * mode-change events */

/* Each create fills vt with the service's table (the one the host gets through dsh_linux_fs()
 * and the others) and keeps cfg, which must outlive the service: 0 or -ENOMEM, and for the
 * sandbox the -errno of this instance's directory in the temp root (tempdir.h), which it opens
 * after loading the id range of a root host (program_identity.h). The subprocess service makes
 * its session group at the first spawn. */
int dshx__fs_create(const struct dshx__config *cfg, struct dsh_fs_service *vt,
                    struct dshx__fs **ret_fs);
int dshx__sandbox_create(const struct dshx__config *cfg, struct dsh_sandbox_service *vt,
                         struct dshx__sandbox **ret_sandbox);
int dshx__subprocess_create(const struct dshx__config *cfg, struct dsh_subprocess_service *vt,
                            struct dshx__subprocess **ret_subprocess);
int dshx__policy_create(const struct dshx__config *cfg, struct dsh_sandbox_policy_service *vt,
                        struct dshx__policy **ret_policy);

/* Each destroy takes NULL. The sandbox's removes its temp directory (a confinement still pending
 * is freed by its own deferred call, which then no longer touches the service); the subprocess
 * service's removes the session group, empty since every range was released (host-abi/ABI.md). */
void dshx__fs_destroy(struct dshx__fs *fs);
void dshx__sandbox_destroy(struct dshx__sandbox *sandbox);
void dshx__subprocess_destroy(struct dshx__subprocess *subprocess);
void dshx__policy_destroy(struct dshx__policy *policy);

/* dsh_linux_policy_set_mode: one session's standing mode; subscribers hear of a change after the
 * commit, and only of a real one. */
int dshx__policy_set_mode(struct dshx__policy *policy, const char *session_id, const char *mode,
                          struct dsh_error *ret_error);

#endif /* DSHX_SERVICES_H */

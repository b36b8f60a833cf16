/* The policy service (policy_service.c): standing policy per session, mode-change events. */
#ifndef DSHX_POLICY_SERVICE_H
#define DSHX_POLICY_SERVICE_H

#include "services_config.h"

struct dshx__policy;

int dshx__policy_create(const struct dshx__config *cfg, struct dsh_sandbox_policy_service *vt,
                        struct dshx__policy **ret_policy);
void dshx__policy_destroy(struct dshx__policy *policy);
int dshx__policy_set_mode(struct dshx__policy *policy, const char *session_id, const char *mode,
                          struct dsh_error *ret_error);

#endif /* DSHX_POLICY_SERVICE_H */

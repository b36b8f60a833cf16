/* The sandbox service (sandbox_service.c): confine, is_denial and release_confinement. */
#ifndef DSHX_SANDBOX_SERVICE_H
#define DSHX_SANDBOX_SERVICE_H

#include "services_config.h"

struct dshx__sandbox;

int dshx__sandbox_create(const struct dshx__config *cfg, struct dsh_sandbox_service *vt,
                         struct dshx__sandbox **ret_sandbox);
void dshx__sandbox_destroy(struct dshx__sandbox *sandbox);

#endif /* DSHX_SANDBOX_SERVICE_H */

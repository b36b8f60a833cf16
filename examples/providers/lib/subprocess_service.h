/* The subprocess service (subprocess_service.c): spawn, terminate, poll_quiescent, release,
 * freeze, usage over managed ranges (range_spawn.c starts them). */
#ifndef DSHX_SUBPROCESS_SERVICE_H
#define DSHX_SUBPROCESS_SERVICE_H

#include "services_config.h"

struct dshx__subprocess;

int dshx__subprocess_create(const struct dshx__config *cfg, struct dsh_subprocess_service *vt,
                            struct dshx__subprocess **ret_subprocess);
void dshx__subprocess_destroy(struct dshx__subprocess *subprocess);

#endif /* DSHX_SUBPROCESS_SERVICE_H */

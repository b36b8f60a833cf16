/* The fs service (fs_service.c): host path mapping. */
#ifndef DSHX_FS_SERVICE_H
#define DSHX_FS_SERVICE_H

#include "services_config.h"

struct dshx__fs;

int dshx__fs_create(const struct dshx__config *cfg, struct dsh_fs_service *vt,
                    struct dshx__fs **ret_fs);
void dshx__fs_destroy(struct dshx__fs *fs);

#endif /* DSHX_FS_SERVICE_H */

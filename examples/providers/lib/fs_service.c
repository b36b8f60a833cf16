/* The fs service: host path -> execution-world path. The execution world is the local
 * filesystem seen through the sandbox's read set, so a visible path maps to itself and anything
 * else (secrets, the host's temp, other users' homes, missing files) is not mapped. */
#include "services.h"
#include "world.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dshx__fs {
    const struct dshx__config *cfg;
};

static bool within_list(const char *path, char *const *roots)
{
    for (char *const *r = roots; r && *r; r++)
        if (dshx__path_within(path, *r))
            return true;
    return false;
}

static int map_host_path(void *ctx, const char *host_path, char *buf, size_t buflen)
{
    struct dshx__fs *fs = ctx;
    const struct dshx__config *cfg = fs->cfg;
    if (!host_path || (!buf && buflen))
        return DSH_E_REQUEST_INVALID;
    char canon[PATH_MAX];
    if (host_path[0] != '/' || !realpath(host_path, canon))
        return DSH_E_NOT_MAPPED;
    bool visible = dshx__world_system_visible(canon) ||
                   (cfg->workspace_root && dshx__path_within(canon, cfg->workspace_root)) ||
                   within_list(canon, cfg->extra_readable_roots) ||
                   within_list(canon, cfg->extra_writable_roots);
    if (!visible)
        return DSH_E_NOT_MAPPED;
    int n = snprintf(buf, buflen, "%s", host_path); /* identity: the same name resolves there */
    return n < 0 ? -EINVAL : n;
}

int dshx__fs_create(const struct dshx__config *cfg, struct dsh_fs_service *vt,
                    struct dshx__fs **ret_fs)
{
    struct dshx__fs *fs = calloc(1, sizeof(*fs));
    if (!fs)
        return -ENOMEM;
    fs->cfg = cfg;
    *vt = (struct dsh_fs_service){
        .struct_size = sizeof(*vt),
        .abi_major = DSH_ABI_MAJOR,
        .abi_minor = DSH_ABI_MINOR,
        .ctx = fs,
        .map_host_path = map_host_path,
    };
    *ret_fs = fs;
    return 0;
}

void dshx__fs_destroy(struct dshx__fs *fs)
{
    free(fs);
}

/* The program's dedicated uid/gid: the range they come from and whether a run can use one (see
 * program_identity.c). Library side. */
#ifndef DSHX_PROGRAM_IDENTITY_H
#define DSHX_PROGRAM_IDENTITY_H

#include "dsh_strv.h"
#include "world.h"

#include <stdbool.h>
#include <stdint.h>

struct dshx__id_range {
    uint32_t uid_base, uid_count;
    uint32_t gid_base, gid_count;
    uint32_t next; /* the next id's offset (atomic) */
    bool unmapped; /* the range is not mapped in this user namespace (a container's): no ids */
};

/* Root's subordinate ranges from /etc/subuid and /etc/subgid, else the fixed range; unmapped
 * when /proc/self/uid_map or gid_map does not map all of it. */
void dshx__id_range_load(struct dshx__id_range *ret);
/* The next uid/gid pair of the range. */
void dshx__id_range_take(struct dshx__id_range *range, uint32_t *ret_uid, uint32_t *ret_gid);
/* owned holds the host user's roots; adds what a dedicated uid could not reach otherwise (see
 * program_identity.c). 1: a dedicated identity fits; 0: it does not (*ret_blocker names the path
 * that cannot be idmapped or examined); -1: out of memory. */
int dshx__identity_plan(const char *program, const char *const *readable, struct dsh_strv *owned,
                        const char **ret_blocker);

#endif /* DSHX_PROGRAM_IDENTITY_H */

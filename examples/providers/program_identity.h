/* The program's dedicated uid/gid: the range they come from and whether a run can use one (see
 * program_identity.c). Library side; includes only world.h. */
#ifndef DSHX_PROGRAM_IDENTITY_H
#define DSHX_PROGRAM_IDENTITY_H

#include "world.h"

#include <stdbool.h>
#include <stdint.h>

struct dshx__id_range {
    uint32_t uid_base, uid_count;
    uint32_t gid_base, gid_count;
    uint32_t next; /* the next id's offset (atomic) */
};

/* Root's subordinate ranges from /etc/subuid and /etc/subgid, else the fixed range. */
void dshx__id_range_load(struct dshx__id_range *ret);
/* The next uid/gid pair of the range. */
void dshx__id_range_take(struct dshx__id_range *range, uint32_t *ret_uid, uint32_t *ret_gid);
/* True when a program running as a dedicated uid can reach the program binary and every root,
 * and the owned roots (which are idmapped) sit on filesystems that support it; otherwise
 * *ret_blocker names the first path that does not fit. */
bool dshx__identity_fits(const char *program, const char *const *readable,
                         const char *const *owned, const char **ret_blocker);

#endif /* DSHX_PROGRAM_IDENTITY_H */

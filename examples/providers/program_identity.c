/* The program's dedicated identity, library side (the launcher applies it: identity.c).
 *
 * Only a root host has ids to give away. The range is root's subordinate range in /etc/subuid
 * and /etc/subgid (the first "root:" or "0:" line) when the host has one, else the fixed range
 * DSHX_FIXED_ID_BASE + [0, DSHX_FIXED_ID_COUNT), which no distribution or systemd allocates.
 * Each confinement takes the next id of the range, started at a per-process offset, so
 * concurrent runs (of one host or several) get distinct ids: one run's per-uid kernel counts do
 * not starve another's. An id is used only when an unprivileged uid can reach every root (each
 * directory above a root searchable by "other", the program binary and each readable root itself
 * readable by "other") and the host-owned roots sit on a filesystem that supports idmapped
 * mounts; otherwise the program keeps the host's uid and the report says identity: partial. */
#include "program_identity.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define DSHX_FIXED_ID_BASE 1879048192u /* 0x70000000 */
#define DSHX_FIXED_ID_COUNT 65536u

/* "root:START:COUNT" (or "0:...") from a subordinate-id file; false when there is none. */
static bool subordinate_range(const char *file, uint32_t *ret_base, uint32_t *ret_count)
{
    FILE *f = fopen(file, "re");
    if (!f)
        return false;
    char line[256];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        char name[64];
        unsigned long long start, count;
        if (sscanf(line, "%63[^:]:%llu:%llu", name, &start, &count) == 3 &&
            (strcmp(name, "root") == 0 || strcmp(name, "0") == 0) && start > 0 && count > 0 &&
            start + count <= 0xfffffffeULL) {
            *ret_base = (uint32_t)start;
            *ret_count = (uint32_t)count;
            found = true;
        }
    }
    fclose(f);
    return found;
}

void dshx__id_range_load(struct dshx__id_range *ret)
{
    ret->next = (uint32_t)getpid() * 2654435761u; /* spread hosts over the range */
    if (!subordinate_range("/etc/subuid", &ret->uid_base, &ret->uid_count) ||
        !subordinate_range("/etc/subgid", &ret->gid_base, &ret->gid_count)) {
        ret->uid_base = ret->gid_base = DSHX_FIXED_ID_BASE;
        ret->uid_count = ret->gid_count = DSHX_FIXED_ID_COUNT;
    }
}

void dshx__id_range_take(struct dshx__id_range *range, uint32_t *ret_uid, uint32_t *ret_gid)
{
    uint32_t k = __atomic_fetch_add(&range->next, 1, __ATOMIC_RELAXED);
    *ret_uid = range->uid_base + k % range->uid_count;
    *ret_gid = range->gid_base + k % range->gid_count;
}

/* Every directory strictly above path lets "other" search it, except those inside an owned
 * root (the program acts as their owner there). */
static bool ancestors_searchable(const char *path, const char *const *owned)
{
    char dir[PATH_MAX];
    if (strlen(path) >= sizeof(dir))
        return false;
    strcpy(dir, path);
    for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
        if (slash == dir)
            slash[1] = '\0'; /* "/" itself */
        else
            *slash = '\0';
        bool inside_owned = false;
        for (const char *const *o = owned; *o && !inside_owned; o++)
            inside_owned = dshx__path_within(dir, *o);
        struct stat st;
        if (!inside_owned && (stat(dir, &st) < 0 || !(st.st_mode & S_IXOTH)))
            return false;
        if (slash == dir)
            break;
    }
    return true;
}

static bool idmap_capable(const char *path)
{
    static const long types[] = {
        0xEF53,     /* ext2/3/4 */
        0x58465342, /* xfs */
        0x9123683E, /* btrfs */
        0x01021994, /* tmpfs */
        0xF2F52010, /* f2fs */
    };
    struct statfs sf;
    if (statfs(path, &sf) < 0)
        return false;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if ((long)sf.f_type == types[i])
            return true;
    return false;
}

/* "other" may read the root itself (and list and enter it, for a directory). */
static bool readable_by_other(const char *path, mode_t extra)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return false;
    mode_t need = S_IROTH | extra | (S_ISDIR(st.st_mode) ? S_IXOTH : 0);
    return (st.st_mode & need) == need;
}

bool dshx__identity_fits(const char *program, const char *const *readable,
                         const char *const *owned, const char **ret_blocker)
{
    *ret_blocker = program;
    if (!readable_by_other(program, S_IXOTH) || !ancestors_searchable(program, owned))
        return false;
    for (const char *const *r = readable; *r; r++) {
        *ret_blocker = *r;
        if (!readable_by_other(*r, 0) || !ancestors_searchable(*r, owned))
            return false;
    }
    for (const char *const *o = owned; *o; o++) {
        *ret_blocker = *o;
        if (!ancestors_searchable(*o, owned) || !idmap_capable(*o))
            return false;
    }
    *ret_blocker = NULL;
    return true;
}

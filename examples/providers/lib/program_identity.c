/* The program's dedicated identity, library side (the launcher applies it: identity.c).
 *
 * Only a root host has ids to give away. The range is root's subordinate range in /etc/subuid
 * and /etc/subgid (the first "root:" or "0:" line) when the host has one, else the fixed range
 * DSHX_FIXED_ID_BASE + [0, DSHX_FIXED_ID_COUNT), which no distribution or systemd allocates.
 * Each confinement takes the next id of the range, started at a per-process offset, so
 * concurrent runs (of one host or several) get distinct ids: one run's per-uid kernel counts do
 * not starve another's.
 *
 * The launcher idmaps the "owned" paths (host uid <-> program uid): the host user's roots, and
 * whatever a stranger could not reach: the highest directory above a root that "other" cannot
 * search (a workspace under /root or a mkdtemp directory), a readable root that "other" cannot
 * read. There the program passes permission checks as the host's user; Landlock still grants
 * only the roots. Every owned path must sit on a filesystem with idmapped mounts, else the
 * program keeps the host's uid and the report says identity: partial. */
#include "program_identity.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define DSHX_FIXED_ID_BASE  1879048192u /* 0x70000000 */
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

/* Whether ids [base, base + count) all exist in this user namespace: in a container with a user
 * namespace (podman --userns=auto, Kubernetes hostUsers: false) only a small range is mapped, and
 * the launcher could not switch a program to an id outside it. */
static bool range_mapped(const char *map_file, uint32_t base, uint32_t count)
{
    FILE *f = fopen(map_file, "re");
    if (!f)
        return false;
    unsigned long long inside, outside, n, want = base, end = (unsigned long long)base + count;
    bool covered = false;
    /* The kernel lists at most 340 extents, unsorted: repeat until no extent extends the prefix. */
    for (bool grew = true; grew && !covered;) {
        grew = false;
        rewind(f);
        while (fscanf(f, "%llu %llu %llu", &inside, &outside, &n) == 3)
            if (inside <= want && want < inside + n) {
                want = inside + n;
                grew = true;
            }
        covered = want >= end;
    }
    fclose(f);
    return covered;
}

void dshx__id_range_load(struct dshx__id_range *ret)
{
    ret->next = (uint32_t)getpid() * 2654435761u; /* spread hosts over the range */
    if (!subordinate_range("/etc/subuid", &ret->uid_base, &ret->uid_count) ||
        !subordinate_range("/etc/subgid", &ret->gid_base, &ret->gid_count)) {
        ret->uid_base = ret->gid_base = DSHX_FIXED_ID_BASE;
        ret->uid_count = ret->gid_count = DSHX_FIXED_ID_COUNT;
    }
    ret->unmapped = !range_mapped("/proc/self/uid_map", ret->uid_base, ret->uid_count) ||
                    !range_mapped("/proc/self/gid_map", ret->gid_base, ret->gid_count);
}

void dshx__id_range_take(struct dshx__id_range *range, uint32_t *ret_uid, uint32_t *ret_gid)
{
    uint32_t k = __atomic_fetch_add(&range->next, 1, __ATOMIC_RELAXED);
    *ret_uid = range->uid_base + k % range->uid_count;
    *ret_gid = range->gid_base + k % range->gid_count;
}

static bool within_any(const char *path, const struct dsh_strv *set)
{
    for (size_t i = 0; i < set->n; i++)
        if (dshx__path_within(path, set->v[i]))
            return true;
    return false;
}

/* Adds to owned what keeps a stranger from path: the highest directory above it that "other"
 * cannot search, else path itself when "other" lacks the rights in need (a directory is also
 * listed and entered). Nothing inside an owned path needs checking. */
static int add_blockers(const char *path, mode_t need, struct dsh_strv *owned,
                        const char **ret_blocker)
{
    char dir[PATH_MAX];
    size_t len = strlen(path);
    *ret_blocker = path; /* the path that could not be examined, on failure */
    if (len >= sizeof(dir))
        return -ENAMETOOLONG;
    for (size_t end = 1; end < len; end++) {
        if (path[end] != '/')
            continue;
        memcpy(dir, path, end);
        dir[end] = '\0';
        struct stat st;
        if (within_any(dir, owned))
            return 0;
        if (stat(dir, &st) < 0)
            return -errno;
        if (!(st.st_mode & S_IXOTH))
            return dsh_strv_push(owned, dir);
    }
    struct stat st;
    if (within_any(path, owned))
        return 0;
    if (stat(path, &st) < 0)
        return -errno;
    if (S_ISDIR(st.st_mode))
        need |= S_IROTH | S_IXOTH;
    return (st.st_mode & need) == need ? 0 : dsh_strv_push(owned, path);
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

int dshx__identity_plan(const char *program, const char *const *readable, struct dsh_strv *owned,
                        const char **ret_blocker)
{
    size_t host_roots = owned->n;
    int rc = add_blockers(program, S_IXOTH, owned, ret_blocker);
    for (const char *const *r = readable; rc == 0 && *r; r++)
        rc = add_blockers(*r, S_IROTH, owned, ret_blocker);
    for (size_t i = 0; rc == 0 && i < host_roots; i++)
        rc = add_blockers(owned->v[i], 0, owned, ret_blocker);
    if (rc == -ENOMEM)
        return -1;
    if (rc < 0)
        return 0; /* *ret_blocker could not be examined */
    for (size_t i = 0; i < owned->n; i++) {
        if (!idmap_capable(owned->v[i])) {
            *ret_blocker = owned->v[i];
            return 0;
        }
    }
    *ret_blocker = NULL;
    return 1;
}

/* One cgroup per managed process range: created before the spawn, joined at clone, frozen to stop
 * the whole range at once, killed, removed (range_cgroup.c). */
#ifndef DSHX_RANGE_CGROUP_H
#define DSHX_RANGE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

/* Which hierarchy holds a range's cgroup. */
#define DSHX_CGROUP_KIND_TABLE(X)                                                              \
    X(V2, "cgroup2: cgroup.freeze, cgroup.events, cgroup.kill")                                \
    X(V1_FREEZER, "cgroup v1 freezer: freezer.state")

enum dshx_cgroup_kind {
#define DSHX_CGROUP_KIND_ENUM(name, text) DSHX_CGROUP_##name,
    DSHX_CGROUP_KIND_TABLE(DSHX_CGROUP_KIND_ENUM)
#undef DSHX_CGROUP_KIND_ENUM
};

struct dshx__range_cgroup;

/* Creates `<parent>/<name>` in a hierarchy of `kind` (parent: an existing cgroup directory, e.g.
 * the host's own cgroup). Resource limits of a later change belong here as well: they are files
 * of the same directory, written before the range is cloned into it. Returns 0 or -errno. */
int dshx__range_cgroup_create(enum dshx_cgroup_kind kind, const char *parent, const char *name,
                              struct dshx__range_cgroup **ret);

/* Whether the group has the files freeze and kill need (cgroup2 before Linux 5.14 lacks
 * cgroup.kill; a v1 hierarchy without the freezer lacks freezer.state). */
bool dshx__range_cgroup_usable(const struct dshx__range_cgroup *cg);

/* The directory fd clone3(CLONE_INTO_CGROUP) takes (v2), or -1 (v1: see join_fd). */
int dshx__range_cgroup_clone_fd(const struct dshx__range_cgroup *cg);

/* v1 only: an open fd of `cgroup.procs` a cloned child writes "0" into before it execs (the
 * write moves the writer; it is one syscall on memory prepared before clone). -1 for v2. */
int dshx__range_cgroup_join_fd(const struct dshx__range_cgroup *cg);

/* Asks the kernel to freeze every process of the range (and any it starts later). */
int dshx__range_cgroup_freeze(struct dshx__range_cgroup *cg);

/* 1 once every process of the range is frozen, 0 while freezing, or -errno. */
int dshx__range_cgroup_frozen(const struct dshx__range_cgroup *cg);

/* 1 when the range has no process left, 0 while it has, or -errno. */
int dshx__range_cgroup_empty(const struct dshx__range_cgroup *cg);

/* SIGKILLs every process of the range (v2 cgroup.kill; v1: each pid of the frozen group, then
 * thaw so the kills are delivered). A frozen range stays frozen until it dies. On a v2 kernel
 * without cgroup.kill (before Linux 5.14) returns -ENOENT: the caller kills through the range's
 * supervisor as without a cgroup. */
int dshx__range_cgroup_kill(struct dshx__range_cgroup *cg);

/* Removes the directory (fails with -EBUSY while a process remains) and frees cg on success. */
int dshx__range_cgroup_remove(struct dshx__range_cgroup *cg);

/* Removes the empty `<prefix><pid>-*` groups under parent whose pid is no longer alive: what a
 * host that died without releasing its ranges left behind. Returns how many it removed. */
int dshx__range_cgroup_sweep(const char *parent, const char *prefix);

/* The directory of the hierarchy of `kind` holding this process, written to buf (0 or -errno). */
int dshx__cgroup_own_dir(enum dshx_cgroup_kind kind, char *buf, size_t size);

/* The same from a /proc/<pid>/cgroup file and a cgroup mount root (tests use fake ones). */
int dshx__cgroup_dir_in(enum dshx_cgroup_kind kind, const char *proc_cgroup, const char *mount_root,
                        char *buf, size_t size);

#endif

/* One cgroup per managed process range: created before the spawn, joined at clone, frozen to stop
 * the whole range at once, limited (memory, processes, cpu), accounted, killed, removed; all ranges
 * of one services instance under one session group holding their totals (range_cgroup.c). */
#ifndef DSHX_RANGE_CGROUP_H
#define DSHX_RANGE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which hierarchy holds a range's cgroup. */
#define DSHX_CGROUP_KIND_TABLE(X)                                                              \
    X(V2, "cgroup2: cgroup.freeze, cgroup.events, cgroup.kill")                                \
    X(V1_FREEZER, "cgroup v1 freezer: freezer.state")

enum dshx_cgroup_kind {
#define DSHX_CGROUP_KIND_ENUM(name, text) DSHX_CGROUP_##name,
    DSHX_CGROUP_KIND_TABLE(DSHX_CGROUP_KIND_ENUM)
#undef DSHX_CGROUP_KIND_ENUM
};

/* The controllers a range's limits and accounting use: name (also of its v1 hierarchy), and the
 * cgroup2 file a group has when its parent delegates the controller. */
#define DSHX_CGROUP_CONTROLLER_TABLE(X)                                                        \
    X(MEMORY, "memory", "memory.max")                                                          \
    X(PIDS, "pids", "pids.max")                                                                \
    X(CPU, "cpu", "cpu.max")                                                                   \
    X(CPUACCT, "cpuacct", "cpu.stat")

enum dshx_cgroup_controller {
#define DSHX_CGROUP_CONTROLLER_ENUM(name, text, v2_file) DSHX_CGROUP_CTL_##name,
    DSHX_CGROUP_CONTROLLER_TABLE(DSHX_CGROUP_CONTROLLER_ENUM)
#undef DSHX_CGROUP_CONTROLLER_ENUM
    DSHX_CGROUP_CTL_COUNT
};

/* Where the cgroup filesystem is: the host's (/proc/self/cgroup, /sys/fs/cgroup), or a fake tree
 * of the tests (the services' test knob cgroup_root). */
struct dshx__cgroup_roots {
    const char *proc_cgroup; /* this process's membership, "<id>:<controllers>:<path>" lines */
    const char *mount_root;  /* where the hierarchies are mounted */
};

/* A range's limits; 0 = no limit of that kind. */
struct dshx__range_limits {
    uint64_t memory_bytes; /* RSS + page cache (tmpfs included), no swap */
    uint32_t processes;    /* tasks: processes and their threads */
    uint32_t cpu_percent;  /* of one CPU per period (100 = one CPU) */
};

#define DSHX_CPU_PERIOD_US 100000u

/* What the range's controllers counted (0 where a controller is not in use). */
struct dshx__range_usage {
    uint64_t oom_kills;
    uint64_t memory_peak_bytes;
    uint64_t cpu_usage_usec;
    uint64_t cpu_periods;
    uint64_t cpu_throttled_periods;
    uint64_t process_limit_hits;
};

struct dshx__range_cgroup;

/* The session group: the parent of every range one services instance starts, in each hierarchy
 * they use (the cgroup2 or v1 freezer group under this process's own, and a group in each v1
 * controller hierarchy), so the totals bind all of them together. cgroup2 children get the
 * controllers the host's group delegates (the session group holds no process, so it may enable
 * them). Before making it, removes what dead hosts left (sweep of `dsh-session-` and `dsh-range-`).
 * 0 or -errno. */
int dshx__session_cgroup_create(enum dshx_cgroup_kind kind, const struct dshx__cgroup_roots *roots,
                                const char *name, struct dshx__range_cgroup **ret);

/* Writes the session's totals (limits.cpu_percent is ignored): memory without group OOM kill, so
 * the kernel kills one range at the total, not the session. 0, or -errno with *ret_what naming the
 * total ("memory", "processes"); -ENOTSUP when its controller is absent. */
int dshx__session_cgroup_set_totals(struct dshx__range_cgroup *session, const struct dshx__range_limits *totals,
                                    const char **ret_what);

/* Creates a range's group `<name>` under the session group in its hierarchy; add_controllers
 * then makes its v1 controller groups under the session's. 0 or -errno. */
int dshx__range_cgroup_create_in(const struct dshx__range_cgroup *session, const char *name,
                                 struct dshx__range_cgroup **ret);

/* RLIMIT_NOFILE of a range's processes: the largest value such that range_processes of them hold
 * at most 1/DSHX_RANGE_FILE_SHARE of fs.file-max and total_processes (the session's, 0 = none) at
 * most 1/DSHX_SESSION_FILE_SHARE, clamped to [DSHX_NOFILE_FLOOR, DSHX_NOFILE_CEILING]; the
 * ceiling when file_max is 0 (unknown). */
#define DSHX_RANGE_FILE_SHARE 8
#define DSHX_SESSION_FILE_SHARE 2
#define DSHX_NOFILE_FLOOR 64
#define DSHX_NOFILE_CEILING 4096
uint32_t dshx__range_nofile(uint64_t file_max, uint32_t range_processes, uint32_t total_processes);

/* Creates `<parent>/<name>` in a hierarchy of `kind` (parent: an existing cgroup directory, e.g.
 * the host's own cgroup); add_controllers and set_limits follow before the range is cloned into
 * it. Returns 0 or -errno. */
int dshx__range_cgroup_create(enum dshx_cgroup_kind kind, const char *parent, const char *name,
                              struct dshx__range_cgroup **ret);

/* Adds the controllers to the range: each comes from the group itself where it is cgroup2 and its
 * parent delegates the controller, else from a `<name>` group made in that controller's v1
 * hierarchy (joined like the v1 freezer, see join_fds): under the session's group there for a
 * group made by create_in, else under this process's own. A controller neither offers stays absent.
 * Returns the bit set (1 << controller) of the controllers now in use. */
unsigned dshx__range_cgroup_add_controllers(struct dshx__range_cgroup *cg,
                                            const struct dshx__cgroup_roots *roots, const char *name);

/* The bit set of controllers the host could give a new range (what add_controllers would find;
 * none where no range group can be made), for the enforcement report. */
unsigned dshx__cgroup_controllers_available(const struct dshx__cgroup_roots *roots);

/* Writes the limits before the range runs. 0, or -errno with *ret_what naming the limit that
 * could not be set ("memory", "processes", "cpu"); -ENOTSUP when its controller is absent. */
int dshx__range_cgroup_set_limits(struct dshx__range_cgroup *cg, const struct dshx__range_limits *limits,
                                  const char **ret_what);

/* Reads the counters of every controller in use. */
void dshx__range_cgroup_usage(const struct dshx__range_cgroup *cg, struct dshx__range_usage *ret_usage);

/* Whether the group has the files freeze and kill need (cgroup2 before Linux 5.14 lacks
 * cgroup.kill; a v1 hierarchy without the freezer lacks freezer.state). */
bool dshx__range_cgroup_usable(const struct dshx__range_cgroup *cg);

/* The directory fd clone3(CLONE_INTO_CGROUP) takes (v2), or -1 (v1: see join_fd). */
int dshx__range_cgroup_clone_fd(const struct dshx__range_cgroup *cg);

/* v1 only: an open fd of the group's `tasks` file a cloned child writes "0" into before it execs
 * (the write moves the writer; it is one syscall on memory prepared before clone). `tasks` moves
 * one thread, which is the whole process here: a child just cloned has one thread. Moving a single
 * thread that is the writer itself lets the kernel skip its global threadgroup lock, whose first
 * writer waits out an RCU grace period; `cgroup.procs` takes it (measured 7-12 ms per spawn on
 * Linux 6.18, against 0.02 ms). -1 for v2. */
int dshx__range_cgroup_join_fd(const struct dshx__range_cgroup *cg);

/* Every such fd of the range (the v1 freezer's and each v1 controller group's) into fds (room
 * for max); returns how many. */
size_t dshx__range_cgroup_join_fds(const struct dshx__range_cgroup *cg, int *fds, size_t max);

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

/* Removes the directories (fails with -EBUSY while a process remains) and frees cg on success. */
int dshx__range_cgroup_remove(struct dshx__range_cgroup *cg);

/* Removes the empty `<prefix><pid>-*` groups under parent whose pid is no longer alive: what a
 * host that died without releasing its ranges left behind. Returns how many it removed. */
int dshx__range_cgroup_sweep(const char *parent, const char *prefix);

/* The same sweep in this process's group of each v1 controller hierarchy (memory, pids, ...). */
void dshx__cgroup_sweep_controllers(const struct dshx__cgroup_roots *roots, const char *prefix);

/* The directory of the hierarchy of `kind` holding this process, written to buf (0 or -errno). */
int dshx__cgroup_own_dir(enum dshx_cgroup_kind kind, char *buf, size_t size);

/* The same from a /proc/<pid>/cgroup file and a cgroup mount root (tests use fake ones). */
int dshx__cgroup_dir_in(enum dshx_cgroup_kind kind, const char *proc_cgroup, const char *mount_root,
                        char *buf, size_t size);

/* The directory holding this process in the v1 hierarchy of `controller` ("memory", "freezer";
 * a co-mounted "cpu,cpuacct" hierarchy matches either name): 0 or -errno. */
int dshx__cgroup_v1_dir_in(const char *controller, const char *proc_cgroup, const char *mount_root,
                           char *buf, size_t size);

#endif

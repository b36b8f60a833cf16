/* A managed range in a cgroup of its own lets the host stop the whole range in one step (freeze),
 * deliver the run's result while nothing of it can run, and kill it afterwards without waiting
 * for each process to die first. cgroup v2 is preferred (CLONE_INTO_CGROUP puts the supervisor in
 * the group before it runs a single instruction; cgroup.kill kills the group atomically); the v1
 * freezer serves kernels mounted v1-only, where the cloned child joins by writing the group's tasks file.
 * Freezing uses only core files, so no controller has to be enabled for it. The limits use the
 * memory, pids and cpu controllers: from the same cgroup2 group where the host's cgroup delegates
 * them, else from groups of the same name in the v1 hierarchies (a hybrid host has a controller-
 * less cgroup2 mount next to v1 controllers), which the child joins like the v1 freezer. All of
 * it is written before the range's first instruction runs. Every range of one services instance
 * is made under one session group per hierarchy, whose memory and pids limits are the totals of
 * all of them together (README, "Limits"). */
#include "range_cgroup.h"
#include "proc_write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One cgroup directory of the range. */
struct group {
    int dir_fd;  /* -1: not made */
    int join_fd; /* v1: tasks, opened for the child's write; -1 for v2 */
    char path[PATH_MAX];
};

struct dshx__range_cgroup {
    enum dshx_cgroup_kind kind;
    bool session; /* the session group: joins nothing, no group OOM kill */
    const struct dshx__range_cgroup *parent; /* the session group a range was made in, or NULL */
    struct group main; /* cgroup2, or the v1 freezer */
    struct group v1[DSHX_CGROUP_CTL_COUNT];  /* groups made in v1 controller hierarchies */
    const struct group *ctl[DSHX_CGROUP_CTL_COUNT]; /* where each controller is; NULL = absent */
};

static const struct {
    const char *name, *v2_file;
} controllers[] = {
#define DSHX_CGROUP_CONTROLLER_ROW(id, text, v2) {text, v2},
    DSHX_CGROUP_CONTROLLER_TABLE(DSHX_CGROUP_CONTROLLER_ROW)
#undef DSHX_CGROUP_CONTROLLER_ROW
};

/* Reads a small cgroup file of g into buf (NUL-terminated); 0 or -errno. */
static int read_group_file(const struct group *g, const char *name, char *buf, size_t size)
{
    int fd = openat(g->dir_fd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, size - 1);
    int err = n < 0 ? -errno : 0;
    close(fd);
    if (err)
        return err;
    buf[n] = '\0';
    return 0;
}

static int write_group_file(const struct group *g, const char *name, const char *text)
{
    char path[PATH_MAX + 32];
    if (snprintf(path, sizeof(path), "%s/%s", g->path, name) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    return dshx__proc_write(path, text);
}

static int read_file(const struct dshx__range_cgroup *cg, const char *name, char *buf, size_t size)
{
    return read_group_file(&cg->main, name, buf, size);
}

static int write_file(const struct dshx__range_cgroup *cg, const char *name, const char *text)
{
    return write_group_file(&cg->main, name, text);
}

/* mkdir parent/name (never adopting an existing one) and open it; with join, its `tasks`. */
static int group_make(struct group *g, const char *parent, const char *name, bool join)
{
    g->dir_fd = g->join_fd = -1;
    int rc = 0;
    if (snprintf(g->path, sizeof(g->path), "%s/%s", parent, name) >= (int)sizeof(g->path))
        rc = -ENAMETOOLONG;
    else if (mkdir(g->path, 0700) < 0) /* EEXIST included: never adopt a group we did not make */
        rc = -errno;
    else if ((g->dir_fd = open(g->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = -errno;
    else if (join && (g->join_fd = openat(g->dir_fd, "tasks", O_WRONLY | O_CLOEXEC)) < 0)
        rc = -errno;
    if (rc < 0 && g->dir_fd >= 0) {
        close(g->dir_fd);
        rmdir(g->path);
        g->dir_fd = -1;
    }
    return rc;
}

/* rmdir and close; 0 or -errno (the group stays open on failure). */
static int group_remove(struct group *g)
{
    if (g->dir_fd < 0)
        return 0;
    if (rmdir(g->path) < 0)
        return -errno;
    close(g->dir_fd);
    if (g->join_fd >= 0)
        close(g->join_fd);
    g->dir_fd = g->join_fd = -1;
    return 0;
}

/* A range's group (joined through the v1 freezer's tasks) or a session's (joined by nothing). */
static int make(enum dshx_cgroup_kind kind, const char *parent, const char *name, bool session,
                struct dshx__range_cgroup **ret)
{
    if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return -EINVAL;
    struct dshx__range_cgroup *cg = calloc(1, sizeof(*cg));
    if (!cg)
        return -ENOMEM;
    cg->kind = kind;
    cg->session = session;
    for (size_t i = 0; i < DSHX_CGROUP_CTL_COUNT; i++)
        cg->v1[i].dir_fd = cg->v1[i].join_fd = -1;
    int rc = group_make(&cg->main, parent, name, !session && kind == DSHX_CGROUP_V1_FREEZER);
    if (rc < 0) {
        free(cg);
        return rc;
    }
    *ret = cg;
    return 0;
}

int dshx__range_cgroup_create(enum dshx_cgroup_kind kind, const char *parent, const char *name,
                              struct dshx__range_cgroup **ret)
{
    return make(kind, parent, name, false, ret);
}

int dshx__range_cgroup_create_in(const struct dshx__range_cgroup *session, const char *name,
                                 struct dshx__range_cgroup **ret)
{
    int rc = dshx__range_cgroup_create(session->kind, session->main.path, name, ret);
    if (rc == 0)
        (*ret)->parent = session;
    return rc;
}

/* Whether this process is in a v1 hierarchy of controller c (its membership names it) whose
 * group can take a child: the parent directory into buf. */
static bool v1_parent(enum dshx_cgroup_controller c, const struct dshx__cgroup_roots *roots, char *buf,
                      size_t size)
{
    return dshx__cgroup_v1_dir_in(controllers[c].name, roots->proc_cgroup, roots->mount_root, buf, size) == 0 &&
           access(buf, W_OK) == 0;
}

/* Whether cgroup2 children of this process's group get controller c (its cgroup.subtree_control
 * names it and the group is writable). cpuacct's counters are cgroup2 core (cpu.stat). */
static bool v2_delegates(enum dshx_cgroup_controller c, const struct dshx__cgroup_roots *roots)
{
    char dir[PATH_MAX], path[PATH_MAX + 32], text[512];
    if (dshx__cgroup_dir_in(DSHX_CGROUP_V2, roots->proc_cgroup, roots->mount_root, dir, sizeof(dir)) < 0 ||
        access(dir, W_OK) != 0)
        return false;
    if (c == DSHX_CGROUP_CTL_CPUACCT)
        return true;
    snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    for (char *save = NULL, *w = strtok_r(text, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
        if (!strcmp(w, controllers[c].name))
            return true;
    return false;
}

unsigned dshx__cgroup_controllers_available(const struct dshx__cgroup_roots *roots)
{
    unsigned set = 0;
    char parent[PATH_MAX];
    /* The controllers hang off the range's own group: without a writable cgroup2 or v1 freezer
     * hierarchy to make it in, there is none. */
    bool v2 = dshx__cgroup_dir_in(DSHX_CGROUP_V2, roots->proc_cgroup, roots->mount_root, parent,
                                  sizeof(parent)) == 0 && access(parent, W_OK) == 0;
    bool freezer = dshx__cgroup_dir_in(DSHX_CGROUP_V1_FREEZER, roots->proc_cgroup, roots->mount_root,
                                       parent, sizeof(parent)) == 0 && access(parent, W_OK) == 0;
    if (!v2 && !freezer)
        return 0;
    for (int c = 0; c < DSHX_CGROUP_CTL_COUNT; c++)
        if (v2_delegates((enum dshx_cgroup_controller)c, roots) ||
            v1_parent((enum dshx_cgroup_controller)c, roots, parent, sizeof(parent)))
            set |= 1u << c;
    return set;
}

/* A range in a session takes controller c's v1 group under the session's group of that hierarchy
 * (the session's cgroup2 group gave it the controller already, or it is absent). */
static void add_v1_in_session(struct dshx__range_cgroup *cg, enum dshx_cgroup_controller c, const char *name)
{
    const struct group *in = cg->parent->ctl[c];
    if (!in || in == &cg->parent->main)
        return;
    for (int o = 0; o < (int)c && !cg->ctl[c]; o++) /* co-mounted: the session shares one group too */
        if (cg->parent->ctl[o] == in)
            cg->ctl[c] = cg->ctl[o];
    if (!cg->ctl[c] && group_make(&cg->v1[c], in->path, name, true) == 0)
        cg->ctl[c] = &cg->v1[c];
}

unsigned dshx__range_cgroup_add_controllers(struct dshx__range_cgroup *cg,
                                            const struct dshx__cgroup_roots *roots, const char *name)
{
    unsigned set = 0;
    struct stat made[DSHX_CGROUP_CTL_COUNT];
    for (int c = 0; c < DSHX_CGROUP_CTL_COUNT; c++) {
        char parent[PATH_MAX], file[PATH_MAX + 64];
        snprintf(file, sizeof(file), "%s/%s", cg->main.path, controllers[c].v2_file);
        if (cg->kind == DSHX_CGROUP_V2 && access(file, F_OK) == 0) {
            cg->ctl[c] = &cg->main;
        } else if (cg->parent) {
            add_v1_in_session(cg, (enum dshx_cgroup_controller)c, name);
        } else if (v1_parent((enum dshx_cgroup_controller)c, roots, parent, sizeof(parent))) {
            /* Co-mounted controllers (cpu,cpuacct) share one hierarchy and so one group. */
            struct stat st;
            if (stat(parent, &st) < 0)
                continue;
            for (int o = 0; o < c && !cg->ctl[c]; o++)
                if (cg->v1[o].dir_fd >= 0 && made[o].st_dev == st.st_dev && made[o].st_ino == st.st_ino)
                    cg->ctl[c] = &cg->v1[o];
            if (!cg->ctl[c] && group_make(&cg->v1[c], parent, name, !cg->session) == 0) {
                made[c] = st;
                cg->ctl[c] = &cg->v1[c];
            }
        }
        if (cg->ctl[c])
            set |= 1u << c;
    }
    return set;
}

static int write_u64(const struct group *g, const char *file, uint64_t value)
{
    char text[32];
    snprintf(text, sizeof(text), "%llu", (unsigned long long)value);
    return write_group_file(g, file, text);
}

/* memory: the limit, and no swap beyond it (the swap file exists only with swap accounting). */
static int set_memory(const struct dshx__range_cgroup *cg, const struct group *g, uint64_t bytes)
{
    if (g == &cg->main) {
        int rc = write_u64(g, "memory.max", bytes);
        if (rc == 0 && faccessat(g->dir_fd, "memory.swap.max", F_OK, 0) == 0)
            rc = write_u64(g, "memory.swap.max", 0);
        /* An OOM kill takes the whole range, not one process of it (at the session's total: the
         * range the victim is in, not the session). */
        if (rc == 0 && !cg->session && faccessat(g->dir_fd, "memory.oom.group", F_OK, 0) == 0)
            rc = write_u64(g, "memory.oom.group", 1);
        return rc;
    }
    int rc = write_u64(g, "memory.limit_in_bytes", bytes);
    if (rc == 0 && faccessat(g->dir_fd, "memory.memsw.limit_in_bytes", F_OK, 0) == 0)
        rc = write_u64(g, "memory.memsw.limit_in_bytes", bytes);
    return rc;
}

static int set_cpu(const struct dshx__range_cgroup *cg, const struct group *g, uint32_t percent)
{
    uint64_t quota = (uint64_t)percent * DSHX_CPU_PERIOD_US / 100;
    if (g == &cg->main) {
        char text[64];
        snprintf(text, sizeof(text), "%llu %u", (unsigned long long)quota, DSHX_CPU_PERIOD_US);
        return write_group_file(g, "cpu.max", text);
    }
    int rc = write_u64(g, "cpu.cfs_period_us", DSHX_CPU_PERIOD_US);
    return rc < 0 ? rc : write_u64(g, "cpu.cfs_quota_us", quota);
}

int dshx__range_cgroup_set_limits(struct dshx__range_cgroup *cg, const struct dshx__range_limits *l,
                                  const char **ret_what)
{
    const struct group *mem = cg->ctl[DSHX_CGROUP_CTL_MEMORY], *pids = cg->ctl[DSHX_CGROUP_CTL_PIDS],
                       *cpu = cg->ctl[DSHX_CGROUP_CTL_CPU];
    int rc = 0;
    if (l->memory_bytes) {
        *ret_what = "memory";
        if ((rc = mem ? set_memory(cg, mem, l->memory_bytes) : -ENOTSUP) < 0)
            return rc;
    }
    if (l->processes) {
        *ret_what = "processes";
        if ((rc = pids ? write_u64(pids, "pids.max", l->processes) : -ENOTSUP) < 0)
            return rc;
    }
    if (l->cpu_percent) {
        *ret_what = "cpu";
        if ((rc = cpu ? set_cpu(cg, cpu, l->cpu_percent) : -ENOTSUP) < 0)
            return rc;
    }
    return 0;
}

/* cgroup2: the session group passes the controllers it got on to the ranges made in it (one write:
 * the kernel takes the whole list or none of it). */
static int enable_for_children(const struct dshx__range_cgroup *cg)
{
    static const enum dshx_cgroup_controller limited[] = {DSHX_CGROUP_CTL_MEMORY, DSHX_CGROUP_CTL_PIDS,
                                                          DSHX_CGROUP_CTL_CPU};
    char text[64] = "";
    for (size_t i = 0; i < sizeof(limited) / sizeof(limited[0]); i++)
        if (cg->ctl[limited[i]] == &cg->main)
            snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s+%s", text[0] ? " " : "",
                     controllers[limited[i]].name);
    return text[0] ? write_group_file(&cg->main, "cgroup.subtree_control", text) : 0;
}

int dshx__session_cgroup_create(enum dshx_cgroup_kind kind, const struct dshx__cgroup_roots *roots,
                                const char *name, struct dshx__range_cgroup **ret)
{
    char parent[PATH_MAX];
    int rc = dshx__cgroup_dir_in(kind, roots->proc_cgroup, roots->mount_root, parent, sizeof(parent));
    if (rc < 0)
        return rc;
    static const char *const left_by_dead_hosts[] = {"dsh-session-", "dsh-range-"};
    for (size_t i = 0; i < 2; i++) {
        (void)dshx__range_cgroup_sweep(parent, left_by_dead_hosts[i]);
        dshx__cgroup_sweep_controllers(roots, left_by_dead_hosts[i]);
    }
    struct dshx__range_cgroup *cg;
    if ((rc = make(kind, parent, name, true, &cg)) < 0)
        return rc;
    (void)dshx__range_cgroup_add_controllers(cg, roots, name);
    if ((rc = enable_for_children(cg)) < 0) {
        (void)dshx__range_cgroup_remove(cg);
        return rc;
    }
    *ret = cg;
    return 0;
}

int dshx__session_cgroup_set_totals(struct dshx__range_cgroup *session, const struct dshx__range_limits *totals,
                                    const char **ret_what)
{
    struct dshx__range_limits l = *totals;
    l.cpu_percent = 0;
    return dshx__range_cgroup_set_limits(session, &l, ret_what);
}

uint32_t dshx__range_nofile(uint64_t file_max, uint32_t range_processes, uint32_t total_processes)
{
    uint64_t n = DSHX_NOFILE_CEILING;
    if (total_processes && range_processes > total_processes)
        range_processes = total_processes; /* the range cannot have more than the session */
    if (file_max && range_processes && file_max / ((uint64_t)DSHX_RANGE_FILE_SHARE * range_processes) < n)
        n = file_max / ((uint64_t)DSHX_RANGE_FILE_SHARE * range_processes);
    if (file_max && total_processes && file_max / ((uint64_t)DSHX_SESSION_FILE_SHARE * total_processes) < n)
        n = file_max / ((uint64_t)DSHX_SESSION_FILE_SHARE * total_processes);
    return n < DSHX_NOFILE_FLOOR ? DSHX_NOFILE_FLOOR : (uint32_t)n;
}

/* The value after `key ` on a line of a flat-keyed file; false when absent. */
static bool keyed_value(const char *text, const char *key, uint64_t *ret_value)
{
    size_t n = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (!strncmp(line, key, n) && line[n] == ' ') {
            *ret_value = strtoull(line + n + 1, NULL, 10);
            return true;
        }
    return false;
}

/* A counter of g: a number file (key NULL) or one key of a flat-keyed file; 0 when absent. */
static uint64_t counter(const struct group *g, const char *file, const char *key)
{
    char text[2048];
    uint64_t v = 0;
    if (!g || read_group_file(g, file, text, sizeof(text)) < 0)
        return 0;
    if (!key)
        return strtoull(text, NULL, 10);
    return keyed_value(text, key, &v) ? v : 0;
}

void dshx__range_cgroup_usage(const struct dshx__range_cgroup *cg, struct dshx__range_usage *u)
{
    const struct group *mem = cg->ctl[DSHX_CGROUP_CTL_MEMORY], *pids = cg->ctl[DSHX_CGROUP_CTL_PIDS],
                       *cpu = cg->ctl[DSHX_CGROUP_CTL_CPU], *acct = cg->ctl[DSHX_CGROUP_CTL_CPUACCT];
    bool v2_mem = mem == &cg->main;
    *u = (struct dshx__range_usage){
        .oom_kills = counter(mem, v2_mem ? "memory.events" : "memory.oom_control", "oom_kill"),
        .memory_peak_bytes = counter(mem, v2_mem ? "memory.peak" : "memory.max_usage_in_bytes", NULL),
        .cpu_periods = counter(cpu, "cpu.stat", "nr_periods"),
        .cpu_throttled_periods = counter(cpu, "cpu.stat", "nr_throttled"),
        .process_limit_hits = counter(pids, "pids.events", "max"),
    };
    if (acct == &cg->main) /* cgroup2 core */
        u->cpu_usage_usec = counter(acct, "cpu.stat", "usage_usec");
    else
        u->cpu_usage_usec = counter(acct, "cpuacct.usage", NULL) / 1000; /* ns */
}

bool dshx__range_cgroup_usable(const struct dshx__range_cgroup *cg)
{
    if (cg->kind == DSHX_CGROUP_V1_FREEZER)
        return faccessat(cg->main.dir_fd, "freezer.state", W_OK, 0) == 0;
    return faccessat(cg->main.dir_fd, "cgroup.freeze", W_OK, 0) == 0 &&
           faccessat(cg->main.dir_fd, "cgroup.kill", W_OK, 0) == 0;
}

int dshx__range_cgroup_clone_fd(const struct dshx__range_cgroup *cg)
{
    return cg->kind == DSHX_CGROUP_V2 ? cg->main.dir_fd : -1;
}

int dshx__range_cgroup_join_fd(const struct dshx__range_cgroup *cg)
{
    return cg->main.join_fd;
}

size_t dshx__range_cgroup_join_fds(const struct dshx__range_cgroup *cg, int *fds, size_t max)
{
    size_t n = 0;
    if (cg->main.join_fd >= 0 && n < max)
        fds[n++] = cg->main.join_fd;
    for (size_t i = 0; i < DSHX_CGROUP_CTL_COUNT; i++)
        if (cg->v1[i].join_fd >= 0 && n < max)
            fds[n++] = cg->v1[i].join_fd;
    return n;
}

int dshx__range_cgroup_freeze(struct dshx__range_cgroup *cg)
{
    return cg->kind == DSHX_CGROUP_V2 ? write_file(cg, "cgroup.freeze", "1")
                                      : write_file(cg, "freezer.state", "FROZEN");
}

/* Whether `key` is followed by " 1" on a line of a flat-keyed file (cgroup.events). */
static bool keyed_one(const char *text, const char *key)
{
    uint64_t v;
    return keyed_value(text, key, &v) && v == 1;
}

int dshx__range_cgroup_frozen(const struct dshx__range_cgroup *cg)
{
    char buf[256];
    int rc = read_file(cg, cg->kind == DSHX_CGROUP_V2 ? "cgroup.events" : "freezer.state", buf, sizeof(buf));
    if (rc < 0)
        return rc;
    return cg->kind == DSHX_CGROUP_V2 ? keyed_one(buf, "frozen") : !strncmp(buf, "FROZEN", 6);
}

int dshx__range_cgroup_empty(const struct dshx__range_cgroup *cg)
{
    char buf[64];
    if (cg->kind == DSHX_CGROUP_V2) {
        char events[256];
        int rc = read_file(cg, "cgroup.events", events, sizeof(events));
        return rc < 0 ? rc : !keyed_one(events, "populated");
    }
    int rc = read_file(cg, "cgroup.procs", buf, sizeof(buf));
    return rc < 0 ? rc : buf[0] == '\0';
}

/* v1 has no cgroup.kill: signal each process of the frozen group (it can neither fork nor exit
 * meanwhile), then thaw so the pending SIGKILLs take effect. */
static int kill_v1(struct dshx__range_cgroup *cg)
{
    int fd = openat(cg->main.dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    FILE *procs = fdopen(fd, "r");
    if (!procs) {
        close(fd);
        return -ENOMEM;
    }
    int rc = 0;
    long pid;
    while (fscanf(procs, "%ld", &pid) == 1)
        if (kill((pid_t)pid, SIGKILL) < 0 && errno != ESRCH)
            rc = -errno;
    fclose(procs);
    int thaw = write_file(cg, "freezer.state", "THAWED");
    return rc < 0 ? rc : thaw;
}

int dshx__range_cgroup_kill(struct dshx__range_cgroup *cg)
{
    if (cg->kind == DSHX_CGROUP_V2)
        return write_file(cg, "cgroup.kill", "1");
    int rc = dshx__range_cgroup_freeze(cg);
    for (int spins = 0; rc == 0 && spins < 1000 && dshx__range_cgroup_frozen(cg) == 0; spins++)
        usleep(1000); /* v1 freezing is asynchronous; a pid read before it could still fork */
    return rc < 0 ? rc : kill_v1(cg);
}

int dshx__range_cgroup_remove(struct dshx__range_cgroup *cg)
{
    for (size_t i = 0; i < DSHX_CGROUP_CTL_COUNT; i++) {
        int rc = group_remove(&cg->v1[i]);
        if (rc < 0)
            return rc;
    }
    int rc = group_remove(&cg->main);
    if (rc < 0)
        return rc;
    free(cg);
    return 0;
}

/* A dead host's session group still holds its ranges' (empty) groups: those go first. */
static int remove_children(const char *path)
{
    DIR *dir = opendir(path);
    if (!dir)
        return -errno;
    int rc = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        char child[PATH_MAX];
        if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >= (int)sizeof(child) || rmdir(child) < 0)
            rc = -EBUSY;
    }
    closedir(dir);
    return rc;
}

int dshx__range_cgroup_sweep(const char *parent, const char *prefix)
{
    DIR *dir = opendir(parent);
    if (!dir)
        return 0;
    int removed = 0;
    size_t n = strlen(prefix);
    for (struct dirent *e; (e = readdir(dir));) {
        char *end;
        if (strncmp(e->d_name, prefix, n) != 0)
            continue;
        long pid = strtol(e->d_name + n, &end, 10);
        /* A pid that is alive may be the owner (or a stranger reusing it): leave it be. */
        if (end == e->d_name + n || *end != '-' || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char path[PATH_MAX];
        if (snprintf(path, sizeof(path), "%s/%s", parent, e->d_name) < (int)sizeof(path) &&
            remove_children(path) == 0 && rmdir(path) == 0)
            removed++;
    }
    closedir(dir);
    return removed;
}

void dshx__cgroup_sweep_controllers(const struct dshx__cgroup_roots *roots, const char *prefix)
{
    char parent[PATH_MAX];
    for (int c = 0; c < DSHX_CGROUP_CTL_COUNT; c++)
        if (v1_parent((enum dshx_cgroup_controller)c, roots, parent, sizeof(parent)))
            (void)dshx__range_cgroup_sweep(parent, prefix);
}

int dshx__cgroup_own_dir(enum dshx_cgroup_kind kind, char *buf, size_t size)
{
    return dshx__cgroup_dir_in(kind, "/proc/self/cgroup", "/sys/fs/cgroup", buf, size);
}

/* Whether the comma-separated list names controller. */
static bool lists(const char *list, const char *controller)
{
    size_t n = strlen(controller);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, controller, n) && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

/* This process's path in the hierarchy of controller (NULL: the cgroup2 line "0::") into own. */
static int own_path(const char *proc_cgroup, const char *controller, char *own, size_t size)
{
    FILE *f = fopen(proc_cgroup, "re");
    if (!f)
        return -errno;
    char line[PATH_MAX + 64];
    int rc = -ENOENT;
    while (rc == -ENOENT && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *colon = strchr(line, ':'), *path = colon ? strchr(colon + 1, ':') : NULL;
        if (!path)
            continue;
        *path++ = '\0';
        if (controller ? lists(colon + 1, controller) : !strcmp(colon + 1, ""))
            rc = snprintf(own, size, "%s", path) >= (int)size ? -ENAMETOOLONG : 0;
    }
    fclose(f);
    return rc;
}

int dshx__cgroup_v1_dir_in(const char *controller, const char *proc_cgroup, const char *mount_root,
                           char *buf, size_t size)
{
    char own[PATH_MAX];
    int rc = own_path(proc_cgroup, controller, own, sizeof(own));
    if (rc < 0)
        return rc;
    /* /sys/fs/cgroup/<controller> is the mount, or a symlink to a co-mounted "cpu,cpuacct". */
    if (snprintf(buf, size, "%s/%s%s", mount_root, controller, strcmp(own, "/") ? own : "") >= (int)size)
        return -ENAMETOOLONG;
    return 0;
}

int dshx__cgroup_dir_in(enum dshx_cgroup_kind kind, const char *proc_cgroup, const char *mount_root,
                        char *buf, size_t size)
{
    if (kind == DSHX_CGROUP_V1_FREEZER)
        return dshx__cgroup_v1_dir_in("freezer", proc_cgroup, mount_root, buf, size);
    char own[PATH_MAX];
    int rc = own_path(proc_cgroup, NULL, own, sizeof(own));
    if (rc < 0)
        return rc;
    /* The v2 hierarchy is the mount root itself (unified) or, on hybrid systems, its unified/. */
    char probe[PATH_MAX];
    snprintf(probe, sizeof(probe), "%s/cgroup.controllers", mount_root);
    const char *sub = access(probe, F_OK) == 0 ? "" : "/unified";
    if (snprintf(buf, size, "%s%s%s", mount_root, sub, strcmp(own, "/") ? own : "") >= (int)size)
        return -ENAMETOOLONG;
    return 0;
}

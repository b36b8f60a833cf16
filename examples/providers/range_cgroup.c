/* A managed range in a cgroup of its own lets the host stop the whole range in one step (freeze),
 * deliver the run's result while nothing of it can run, and kill it afterwards without waiting
 * for each process to die first. cgroup v2 is preferred (CLONE_INTO_CGROUP puts the supervisor in
 * the group before it runs a single instruction; cgroup.kill kills the group atomically); the v1
 * freezer serves kernels mounted v1-only, where the cloned child joins by writing cgroup.procs.
 * Only core cgroup files are used, so no controller has to be enabled; a later change that adds
 * memory/pids/cpu limits writes them into the same directory before the clone. */
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

struct dshx__range_cgroup {
    enum dshx_cgroup_kind kind;
    int dir_fd;
    int join_fd; /* v1: cgroup.procs, opened for the child's write; -1 for v2 */
    char path[PATH_MAX];
};

/* Reads a small cgroup file of cg into buf (NUL-terminated); 0 or -errno. */
static int read_file(const struct dshx__range_cgroup *cg, const char *name, char *buf, size_t size)
{
    int fd = openat(cg->dir_fd, name, O_RDONLY | O_CLOEXEC);
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

static int write_file(const struct dshx__range_cgroup *cg, const char *name, const char *text)
{
    char path[PATH_MAX + 32];
    if (snprintf(path, sizeof(path), "%s/%s", cg->path, name) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    return dshx__proc_write(path, text);
}

int dshx__range_cgroup_create(enum dshx_cgroup_kind kind, const char *parent, const char *name,
                              struct dshx__range_cgroup **ret)
{
    if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return -EINVAL;
    struct dshx__range_cgroup *cg = calloc(1, sizeof(*cg));
    if (!cg)
        return -ENOMEM;
    cg->kind = kind;
    cg->dir_fd = cg->join_fd = -1;
    int rc = 0;
    if (snprintf(cg->path, sizeof(cg->path), "%s/%s", parent, name) >= (int)sizeof(cg->path))
        rc = -ENAMETOOLONG;
    else if (mkdir(cg->path, 0700) < 0) /* EEXIST included: never adopt a group we did not make */
        rc = -errno;
    else if ((cg->dir_fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        rc = -errno;
    else if (kind == DSHX_CGROUP_V1_FREEZER &&
             (cg->join_fd = openat(cg->dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC)) < 0)
        rc = -errno;
    if (rc < 0) {
        if (cg->dir_fd >= 0) {
            close(cg->dir_fd);
            rmdir(cg->path);
        }
        free(cg);
        return rc;
    }
    *ret = cg;
    return 0;
}

bool dshx__range_cgroup_usable(const struct dshx__range_cgroup *cg)
{
    if (cg->kind == DSHX_CGROUP_V1_FREEZER)
        return faccessat(cg->dir_fd, "freezer.state", W_OK, 0) == 0;
    return faccessat(cg->dir_fd, "cgroup.freeze", W_OK, 0) == 0 &&
           faccessat(cg->dir_fd, "cgroup.kill", W_OK, 0) == 0;
}

int dshx__range_cgroup_clone_fd(const struct dshx__range_cgroup *cg)
{
    return cg->kind == DSHX_CGROUP_V2 ? cg->dir_fd : -1;
}

int dshx__range_cgroup_join_fd(const struct dshx__range_cgroup *cg)
{
    return cg->join_fd;
}

int dshx__range_cgroup_freeze(struct dshx__range_cgroup *cg)
{
    return cg->kind == DSHX_CGROUP_V2 ? write_file(cg, "cgroup.freeze", "1")
                                      : write_file(cg, "freezer.state", "FROZEN");
}

/* Whether `key` is followed by " 1" on a line of a flat-keyed file (cgroup.events). */
static bool keyed_one(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (!strncmp(line, key, n) && line[n] == ' ')
            return line[n + 1] == '1';
    return false;
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
    int fd = openat(cg->dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
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
    if (rmdir(cg->path) < 0)
        return -errno;
    close(cg->dir_fd);
    if (cg->join_fd >= 0)
        close(cg->join_fd);
    free(cg);
    return 0;
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
        if (snprintf(path, sizeof(path), "%s/%s", parent, e->d_name) < (int)sizeof(path) && rmdir(path) == 0)
            removed++;
    }
    closedir(dir);
    return removed;
}

int dshx__cgroup_own_dir(enum dshx_cgroup_kind kind, char *buf, size_t size)
{
    return dshx__cgroup_dir_in(kind, "/proc/self/cgroup", "/sys/fs/cgroup", buf, size);
}

int dshx__cgroup_dir_in(enum dshx_cgroup_kind kind, const char *proc_cgroup, const char *mount_root,
                        char *buf, size_t size)
{
    FILE *f = fopen(proc_cgroup, "re");
    if (!f)
        return -errno;
    char line[PATH_MAX + 64], *own = NULL;
    /* v2 is "0::<path>"; the v1 freezer's line names its controller. */
    while (!own && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *colon = strchr(line, ':'), *path = colon ? strchr(colon + 1, ':') : NULL;
        if (!path)
            continue;
        *path++ = '\0';
        bool v2_line = !strcmp(colon + 1, "");
        if (kind == DSHX_CGROUP_V2 ? v2_line : !strcmp(colon + 1, "freezer"))
            own = path;
    }
    fclose(f);
    if (!own)
        return -ENOENT;
    /* The v2 hierarchy is the mount root itself (unified) or, on hybrid systems, its unified/. */
    const char *sub = "/freezer";
    if (kind == DSHX_CGROUP_V2) {
        char probe[PATH_MAX];
        snprintf(probe, sizeof(probe), "%s/cgroup.controllers", mount_root);
        sub = access(probe, F_OK) == 0 ? "" : "/unified";
    }
    if (snprintf(buf, size, "%s%s%s", mount_root, sub, strcmp(own, "/") ? own : "") >= (int)size)
        return -ENAMETOOLONG;
    return 0;
}

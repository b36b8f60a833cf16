/* Per-run private temp dirs and their removal. The tree was written by hostile code: removal
 * never follows a symlink, works below PATH_MAX through directory fds, and flattens arbitrarily
 * deep nesting by moving deep directories up instead of recursing without bound.
 *
 * Layout: TEMP_ROOT/dsh-host-XXXXXX/dsh-run-XXXXXX. Each services instance owns one host
 * directory and holds an flock on it for its lifetime; the kernel drops the lock when the host
 * dies however it dies (kill -9 included), so the next instance that opens the same temp root
 * removes every host directory whose lock it can take: a killed host's leftovers never outlive
 * the next start. A lock, unlike a pid, is not reused by a stranger and works across PID
 * namespaces sharing the directory. */
#include "tempdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 64
#define MAX_PASSES 10000
#define HOST_PREFIX "dsh-host-"
#define NEW_PREFIX ".dsh-new-" /* a host directory before its lock is held: never swept by name */

struct dshx__temp_host {
    int fd; /* the host directory, flock'ed LOCK_EX for the instance's lifetime */
    char *path;
};

int dshx__temp_root_default(char *buf, size_t size)
{
    if (snprintf(buf, size, "/tmp/dsh-%u", (unsigned)geteuid()) >= (int)size)
        return -ENAMETOOLONG;
    /* 0711: runs reach their own directory by name, nobody lists the others'. */
    if (mkdir(buf, 0711) < 0 && errno != EEXIST)
        return -errno;
    struct stat st;
    if (lstat(buf, &st) < 0)
        return -errno;
    /* /tmp is shared: a directory someone else made (or a symlink) is never adopted. */
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
        return -EPERM;
    return 0;
}

/* Removes every host directory of root whose owner is gone (its lock can be taken). */
static void sweep(const char *root)
{
    DIR *dir = opendir(root);
    if (!dir)
        return;
    for (struct dirent *e; (e = readdir(dir));) {
        bool host = !strncmp(e->d_name, HOST_PREFIX, strlen(HOST_PREFIX));
        if (!host && strncmp(e->d_name, NEW_PREFIX, strlen(NEW_PREFIX)))
            continue;
        int fd = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        /* A live owner holds the lock. A NEW_PREFIX directory is locked right after mkdtemp;
         * one taken in between is removed, and its creator notices and starts over. */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            char *path = NULL;
            if (asprintf(&path, "%s/%s", root, e->d_name) >= 0)
                (void)dshx__tree_remove(path);
            free(path);
        }
        close(fd);
    }
    closedir(dir);
}

int dshx__temp_host_open(const char *root, struct dshx__temp_host **ret_host)
{
    sweep(root);
    struct dshx__temp_host *h = calloc(1, sizeof(*h));
    if (!h)
        return -ENOMEM;
    h->fd = -1;
    int rc = -EAGAIN;
    for (int attempt = 0; rc == -EAGAIN && attempt < 8; attempt++) {
        char *fresh = NULL;
        if (asprintf(&fresh, "%s/" NEW_PREFIX "XXXXXX", root) < 0) {
            free(h);
            return -ENOMEM;
        }
        rc = 0;
        if (!mkdtemp(fresh)) /* mode 0700 */
            rc = -errno;
        else if ((h->fd = open(fresh, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
                 flock(h->fd, LOCK_EX | LOCK_NB) < 0)
            rc = -EAGAIN; /* a sweeper took it first */
        else if (fchmod(h->fd, 0711) < 0) /* like the temp root: traversable, never listed */
            rc = -errno;
        else if (asprintf(&h->path, "%s/" HOST_PREFIX "%s", root,
                          fresh + strlen(root) + 1 + strlen(NEW_PREFIX)) < 0)
            rc = -ENOMEM;
        else if (rename(fresh, h->path) < 0) /* the lock stays with the open directory */
            rc = errno == ENOENT ? -EAGAIN : -errno;
        if (rc < 0) {
            if (h->fd >= 0)
                close(h->fd);
            h->fd = -1;
            free(h->path);
            h->path = NULL;
            if (rc != -EAGAIN)
                (void)rmdir(fresh);
        }
        free(fresh);
    }
    if (rc < 0) {
        free(h);
        return rc == -EAGAIN ? -EBUSY : rc;
    }
    *ret_host = h;
    return 0;
}

void dshx__temp_host_close(struct dshx__temp_host *host)
{
    if (!host)
        return;
    /* Removed while still locked, so no sweeper races the removal. */
    (void)dshx__tree_remove(host->path);
    close(host->fd);
    free(host->path);
    free(host);
}

int dshx__tempdir_create(const struct dshx__temp_host *host, char **ret_path)
{
    char *path = NULL;
    /* mkdtemp fills in the trailing Xs */
    if (asprintf(&path, "%s/dsh-run-XXXXXX", host->path) < 0)
        return -ENOMEM;
    if (!mkdtemp(path)) { /* mode 0700 */
        int e = errno;
        free(path);
        return -e;
    }
    *ret_path = path;
    return 0;
}

struct walk {
    int top_fd;
    unsigned long moved;
    bool deferred; /* something was moved up and needs another pass */
};

/* chmod 0700 of the directory name in dir, if it is one (never what a symlink points to). */
static void unlock_dir(int dir, const char *name)
{
    int fd = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    (void)chmod(proc, S_IRWXU);
    close(fd);
}

/* Empties the directory open at fd (consumed). */
static int empty_dir(struct walk *w, int fd, int depth)
{
    (void)fchmod(fd, S_IRWXU); /* a program may have locked its own dirs (chmod 0) */
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return -e;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
            continue;
        if (unlinkat(dirfd(d), n, 0) == 0)
            continue;
        if (errno != EISDIR && errno != EPERM) {
            if (errno != ENOENT)
                rc = -errno;
            continue;
        }
        if (depth >= MAX_DEPTH) {
            char name[64];
            snprintf(name, sizeof(name), ".dshx-deep-%lu", w->moved++);
            if (renameat(dirfd(d), n, w->top_fd, name) == 0)
                w->deferred = true;
            else
                rc = -errno;
            continue;
        }
        int sub = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0 && errno == EACCES && geteuid() != 0) {
            /* Unreadable, not a symlink (O_NOFOLLOW says ELOOP): ours, so unlock it. The mode is
             * changed on the directory an O_PATH|O_NOFOLLOW fd holds (through its /proc link),
             * never by name: a symlink swapped in meanwhile leads nowhere. Root never needs it. */
            unlock_dir(dirfd(d), n);
            sub = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (sub < 0) {
            rc = -errno;
            continue;
        }
        int r = empty_dir(w, sub, depth + 1);
        if (r < 0)
            rc = r;
        if (unlinkat(dirfd(d), n, AT_REMOVEDIR) < 0) {
            if (errno == ENOTEMPTY)
                w->deferred = true; /* something was moved up meanwhile: next pass */
            else if (errno != ENOENT)
                rc = -errno;
        }
    }
    closedir(d);
    return rc;
}

int dshx__tree_remove(const char *path)
{
    int top = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (top < 0)
        return errno == ENOENT ? 0 : -errno;
    struct walk w = {.top_fd = top};
    int rc = 0;
    for (int pass = 0; pass < MAX_PASSES; pass++) {
        w.deferred = false;
        /* A fresh open file description: a dup would share the finished readdir offset. */
        int fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = fd < 0 ? -errno : empty_dir(&w, fd, 0);
        if (!w.deferred)
            break;
    }
    close(top);
    if (rmdir(path) < 0 && errno != ENOENT)
        return rc < 0 ? rc : -errno;
    return rc;
}

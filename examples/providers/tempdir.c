/* Per-run private temp dirs and their removal. The tree was written by hostile code: removal
 * never follows a symlink, works below PATH_MAX through directory fds, and flattens arbitrarily
 * deep nesting by moving deep directories up instead of recursing without bound. */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 64
#define MAX_PASSES 10000

int dshx__tempdir_create(const char *root, char **ret_path)
{
    char *path = NULL;
    /* mkdtemp fills in the trailing Xs */
    if (asprintf(&path, "%s/dsh-run-XXXXXX", root) < 0)
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
            /* Unreadable, not a symlink (O_NOFOLLOW says ELOOP): ours, so unlock it. 0700 only
             * ever narrows access, should the name be swapped meanwhile; root never needs it. */
            (void)fchmodat(dirfd(d), n, S_IRWXU, 0);
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

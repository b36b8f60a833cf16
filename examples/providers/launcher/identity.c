/* The program's dedicated identity, launcher side. When the host is root the launcher switches
 * the program to an unprivileged uid/gid of its own (chosen by program_identity.c), so per-uid
 * kernel counts (inotify instances, RLIMIT_NPROC, user namespaces, ...) are not root's and owner
 * checks fail on root's files. The roots that belong to the host's user (the workspace, the
 * extra writable roots, the private temp dir) are bind-mounted through an idmapped mount whose
 * mapping is "host uid <-> program uid": there the program acts as the host's user, and what it
 * creates is owned by the host's user on disk (root's on a root host: the seccomp rules refuse
 * set-id modes and xattrs, so such a file carries no privilege; host-abi/ABI.md, "Roots"). So
 * are the directories a stranger could not reach (program_identity.c lists them), read-only
 * like the rest. */
#include "identity.h"
#include "launcher_limits.h"
#include "mount_defs.h"
#include "world.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_map(const char *pid, const char *name, unsigned inside, unsigned outside)
{
    char path[96], line[64];
    snprintf(path, sizeof(path), "/proc/%s/%s", pid, name);
    int n = snprintf(line, sizeof(line), "%u %u 1\n", inside, outside);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = write(fd, line, (size_t)n) == n ? 0 : -errno;
    close(fd);
    return rc;
}

int dshx__idmap_userns(const struct dshx__identity *id, pid_t *ret_helper, char *ret_err, size_t errlen)
{
    *ret_helper = -1;
    /* A user namespace exists only while a process is in it: a child enters one, says which
     * pid /proc knows it by (the launcher sits in a PID namespace, /proc may be the host's),
     * and waits until we hold its namespace fd (our end closing is its EOF). */
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0) {
        snprintf(ret_err, errlen, "identity: socketpair: %s", strerror(errno));
        return -errno;
    }
    pid_t pid =
        (pid_t)syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, NULL);
    if (pid == 0) {
        char self[32], c;
        close(sp[0]);
        ssize_t n = readlink("/proc/self", self, sizeof(self) - 1);
        if (n > 0 && write(sp[1], self, (size_t)n) == n)
            (void)!read(sp[1], &c, 1);
        _exit(0);
    }
    int rc = pid < 0 ? -errno : 0, fd = -1;
    close(sp[1]);
    char name[32] = "";
    ssize_t n = rc == 0 ? read(sp[0], name, sizeof(name) - 1) : -1;
    if (rc == 0 && n <= 0)
        rc = -ECHILD;
    else if (rc == 0)
        name[n] = '\0';
    /* On disk the host's ids; through the mount the program's. */
    if (rc == 0)
        rc = write_map(name, "uid_map", (unsigned)geteuid(), (unsigned)id->uid);
    if (rc == 0)
        rc = write_map(name, "gid_map", (unsigned)getegid(), (unsigned)id->gid);
    if (rc == 0) {
        char path[96];
        snprintf(path, sizeof(path), "/proc/%s/ns/user", name);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            rc = -errno;
    }
    close(sp[0]); /* the helper's EOF: it exits, and is reaped later (dshx__reap_helper) */
    if (rc < 0 && pid > 0)
        dshx__reap_helper(pid);
    else if (pid > 0)
        *ret_helper = pid;
    if (rc < 0) {
        snprintf(ret_err, errlen, "identity: idmap user namespace: %s", strerror(-rc));
        return rc;
    }
    return fd;
}

void dshx__reap_helper(pid_t pid)
{
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

static int dshx__bind_root(const char *path, int idmap_fd, char *ret_err, size_t errlen)
{
    if (idmap_fd < 0) {
        if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) == 0)
            return 0;
        snprintf(ret_err, errlen, "namespaces: bind %s: %s", path, strerror(errno));
        return -errno;
    }
    /* An idmapping can be set only on a detached copy, which then replaces the original here. */
    const char *step = "open_tree";
    int rc = 0;
    int fd = (int)syscall(__NR_open_tree, AT_FDCWD, path,
                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (fd < 0)
        rc = -errno;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)idmap_fd};
    if (rc == 0 && (step = "idmap", syscall(__NR_mount_setattr, fd, "",
                                            AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0))
        rc = -errno;
    if (rc == 0 && (step = "move_mount",
                    syscall(__NR_move_mount, fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0))
        rc = -errno;
    if (fd >= 0)
        close(fd);
    if (rc < 0)
        snprintf(ret_err, errlen, "identity: %s of %s: %s", step, path, strerror(-rc));
    return rc;
}

static int by_length(const void *a, const void *b)
{
    size_t la = strlen(*(const char *const *)a), lb = strlen(*(const char *const *)b);
    return la < lb ? -1 : la > lb;
}

int dshx__bind_roots(const char *const *rw, const char *const *owned, int idmap_fd, char *ret_err,
                     size_t errlen)
{
    /* Parents before children: an owned directory above a writable root must not cover it. */
    const char *all[2 * DSHX_MAX_ROOTS + 1];
    size_t n = 0;
    for (const char *const *p = rw; p && *p && n < 2 * DSHX_MAX_ROOTS; p++)
        all[n++] = *p;
    for (const char *const *p = owned; idmap_fd >= 0 && p && *p && n < 2 * DSHX_MAX_ROOTS; p++)
        all[n++] = *p;
    qsort(all, n, sizeof(all[0]), by_length);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        /* Beneath an idmapped path a plain bind inherits the mapping (a second one is refused). */
        bool mapped_above = false;
        for (size_t j = 0; idmap_fd >= 0 && j < i && !mapped_above; j++)
            mapped_above = dshx__path_within(all[i], all[j]);
        rc = dshx__bind_root(all[i], mapped_above ? -1 : idmap_fd, ret_err, errlen);
    }
    return rc;
}

int dshx__switch_identity(const struct dshx__identity *id, char *ret_err, size_t errlen)
{
    if (setgroups(0, NULL) < 0 || setresgid(id->gid, id->gid, id->gid) < 0 ||
        setresuid(id->uid, id->uid, id->uid) < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "identity: switch to %u:%u: %s", (unsigned)id->uid,
                 (unsigned)id->gid, strerror(e));
        return -e;
    }
    uid_t r, e, s;
    if (getresuid(&r, &e, &s) < 0 || r != id->uid || e != id->uid || s != id->uid) {
        snprintf(ret_err, errlen, "identity: uid did not change");
        return -EPERM;
    }
    return 0;
}

/* Copies the host's file src (bounded) to dst with line appended. */
static int copy_with_entry(const char *src, const char *dst, const char *line)
{
    static char buf[4 << 20];
    size_t n = 0;
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in >= 0) {
        ssize_t k;
        while (n < sizeof(buf) && (k = read(in, buf + n, sizeof(buf) - n)) > 0)
            n += (size_t)k;
        close(in);
    }
    if (n == sizeof(buf))
        return -EFBIG;
    if (n > 0 && buf[n - 1] != '\n')
        buf[n++] = '\n';
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0)
        return -errno;
    size_t len = strlen(line);
    int rc = write(out, buf, n) == (ssize_t)n && write(out, line, len) == (ssize_t)len ? 0 : -EIO;
    close(out);
    return rc;
}

int dshx__identity_names(const struct dshx__identity *id, char *ret_err, size_t errlen)
{
    static const char stage[] = "/tmp";
    const char *home = getenv("HOME");
    char pw[512], gr[128];
    snprintf(pw, sizeof(pw), "%s:x:%u:%u:dsh program:%s:/bin/sh\n", DSHX_PROGRAM_USER,
             (unsigned)id->uid, (unsigned)id->gid, home && home[0] == '/' ? home : "/");
    snprintf(gr, sizeof(gr), "%s:x:%u:\n", DSHX_PROGRAM_USER, (unsigned)id->gid);
    if (mount("dsh-names", stage, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=16m,mode=0755") <
        0) {
        snprintf(ret_err, errlen, "identity: names: tmpfs on %s: %s", stage, strerror(errno));
        return -errno;
    }
    static const char *const files[][2] = {{"/etc/passwd", "/tmp/passwd"},
                                           {"/etc/group", "/tmp/group"}};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < 2; i++) {
        if (access(files[i][0], F_OK) < 0)
            continue; /* nothing to bind over */
        rc = copy_with_entry(files[i][0], files[i][1], i == 0 ? pw : gr);
        if (rc == 0 && mount(files[i][1], files[i][0], NULL, MS_BIND, NULL) < 0)
            rc = -errno;
        if (rc == 0 &&
            mount(NULL, files[i][0], NULL,
                  MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
            rc = -errno;
        if (rc < 0)
            snprintf(ret_err, errlen, "identity: names: %s: %s", files[i][0], strerror(-rc));
    }
    /* The bound files keep the tmpfs alive; the staging mount itself goes. */
    if (umount2(stage, MNT_DETACH) < 0 && rc == 0) {
        rc = -errno;
        snprintf(ret_err, errlen, "identity: names: detach %s: %s", stage, strerror(-rc));
    }
    return rc;
}

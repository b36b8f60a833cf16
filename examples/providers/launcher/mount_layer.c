/* The read-only mount layer: a second wall under Landlock. In fresh mount, network and IPC
 * namespaces every mount becomes read-only except bind mounts of the writable roots, so metadata
 * changes Landlock does not control (chmod, utimes, xattrs) and any Landlock gap (truncate below
 * ABI 3) hit EROFS outside the writable roots. Every mount is nosuid and nodev too, /dev's devices
 * excepted. The new network namespace has no interfaces and its own abstract unix socket space;
 * the new IPC namespace hides the host's SysV/POSIX IPC. */
#include "mount_layer.h"
#include "identity.h"
#include "mount_defs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int mount_setattr_flags(const char *path, unsigned flags, uint64_t set, uint64_t clr)
{
    struct mount_attr attr = {.attr_set = set, .attr_clr = clr};
    return (int)syscall(__NR_mount_setattr, AT_FDCWD, path, flags, &attr, sizeof(attr));
}

static int mount_setattr_rec(const char *path, uint64_t set, uint64_t clr)
{
    return mount_setattr_flags(path, AT_RECURSIVE, set, clr);
}

/* True unless we provably share the PID namespace of the procfs' pid 1 (then a new /proc would
 * show the same processes and is pointless). */
static bool in_own_pid_ns(void)
{
    char self[64] = "", init[64] = "";
    ssize_t a = readlink("/proc/self/ns/pid", self, sizeof(self) - 1);
    ssize_t b = readlink("/proc/1/ns/pid", init, sizeof(init) - 1);
    return a <= 0 || b <= 0 || strcmp(self, init) != 0;
}

/* Device nodes open again under /dev only, where the world's devices are (world.c). /dev is a
 * mount of its own on every usual system (devtmpfs, a container's tmpfs); where it is a plain
 * directory of the root filesystem it is bound onto itself first, so the change stays on /dev.
 * Only /dev itself: the world has no device in a mount below it (/dev/pts, /dev/shm, /dev/mqueue
 * stay nodev), and in a user namespace of the range's own a container's nodev /dev/shm is locked
 * (clearing nodev there is EPERM). */
static int devices_under_dev(char *ret_err, size_t errlen)
{
    struct stat root, dev;
    const char *step = "stat";
    int rc = stat("/", &root) == 0 && stat("/dev", &dev) == 0 ? 0 : -errno;
    if (rc == 0 && root.st_dev == dev.st_dev &&
        (step = "bind", mount("/dev", "/dev", NULL, MS_BIND | MS_REC, NULL) < 0))
        rc = -errno;
    if (rc == 0 && (step = "allow devices", mount_setattr_flags("/dev", 0, 0, MOUNT_ATTR_NODEV) < 0))
        rc = -errno;
    if (rc < 0)
        snprintf(ret_err, errlen, "namespaces: /dev: %s: %s", step, strerror(-rc));
    return rc;
}

int dshx__mount_layer_apply(const char *const *rw, const char *const *owned, int idmap_fd,
                            char *ret_err, size_t errlen)
{
    bool private_proc = in_own_pid_ns();
    if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "namespaces: unshare: %s", strerror(e));
        return -e;
    }
    /* Nothing we do below may propagate back to the host's mounts. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "namespaces: make / private: %s", strerror(e));
        return -e;
    }
    int rc = dshx__bind_roots(rw, owned, idmap_fd, ret_err, errlen);
    if (rc < 0)
        return rc;
    /* nosuid: a set-id file honoured nowhere inside (no_new_privs already ignores it for the
     * program; this holds for the bind mounts themselves). nodev: a device node some user left
     * in a root (a copy of a disk's node in a workspace) does not open; only /dev's do. */
    if (mount_setattr_rec("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "namespaces: read-only remount: %s", strerror(e));
        return -e;
    }
    if ((rc = devices_under_dev(ret_err, errlen)) < 0)
        return rc;
    for (const char *const *p = rw; p && *p; p++) {
        if (mount_setattr_rec(*p, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, MOUNT_ATTR_RDONLY) < 0) {
            int e = errno;
            snprintf(ret_err, errlen, "namespaces: writable %s: %s", *p, strerror(e));
            return -e;
        }
    }
    /* A private /proc shows only this range's processes. Best effort: Landlock's ptrace rules
     * and the dropped capabilities already keep other processes' sensitive entries closed. */
    if (private_proc)
        (void)mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL);
    return 0;
}

int dshx__mount_private_tmpfs(const char *path, uint64_t size, uid_t owner, gid_t group, char *ret_err,
                              size_t errlen)
{
    char options[128];
    snprintf(options, sizeof(options), "size=%llu,mode=0700,uid=%u,gid=%u", (unsigned long long)size,
             (unsigned)owner, (unsigned)group);
    if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, options) < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "namespaces: tmpfs on %s: %s", path, strerror(e));
        return -e;
    }
    return 0;
}

/* Joining the egress proxy's network namespace (net_join.h). */
#include "net_join.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static struct stat original; /* the namespace the launcher started in */

int dshx__net_open(const char *path, char *ret_err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || stat("/proc/self/ns/net", &original) < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "network: open %s: %s", path, strerror(e));
        if (fd >= 0)
            close(fd);
        return -e;
    }
    return fd;
}

int dshx__net_join(int fd, char *ret_err, size_t errlen)
{
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
    } else if (st.st_dev == original.st_dev && st.st_ino == original.st_ino) {
        rc = -EPERM; /* the host's own namespace: never */
        snprintf(ret_err, errlen, "network: the namespace given is the launcher's own");
        close(fd);
        return rc;
    } else if (setns(fd, CLONE_NEWNET) < 0) {
        rc = -errno;
    }
    if (rc < 0)
        snprintf(ret_err, errlen, "network: join the range's namespace: %s", strerror(-rc));
    close(fd);
    return rc;
}

/* Writes text to staged and binds it, read-only, over target (a regular file). */
static int bind_text(const char *staged, const char *target, const char *text, char *ret_err, size_t errlen)
{
    struct stat st;
    if (stat(target, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(ret_err, errlen, "network: %s is not a regular file", target);
        return -ENOENT;
    }
    size_t len = strlen(text);
    int rc = 0, out = open(staged, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0 || write(out, text, len) != (ssize_t)len)
        rc = -(errno ? errno : EIO);
    if (out >= 0)
        close(out);
    if (rc == 0 && mount(staged, target, NULL, MS_BIND, NULL) < 0)
        rc = -errno;
    if (rc == 0 && mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                         NULL) < 0)
        rc = -errno;
    if (rc < 0)
        snprintf(ret_err, errlen, "network: %s: %s", target, strerror(-rc));
    return rc;
}

int dshx__net_resolver_conf(char *ret_err, size_t errlen)
{
    static const char stage[] = "/tmp";
    if (mount("dsh-resolver", stage, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=0755") < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "network: tmpfs on %s: %s", stage, strerror(e));
        return -e;
    }
    /* Every name goes to the range's resolver, so every one meets the policy: the host's
     * /etc/hosts (its own name, localhost) would answer addresses the proxy refuses anyway. */
    int rc = bind_text("/tmp/resolv.conf", "/etc/resolv.conf",
                       "# the range's resolver (dsh network allow-list)\n"
                       "nameserver 127.0.0.1\noptions attempts:2 timeout:2\n",
                       ret_err, errlen);
    if (rc == 0)
        rc = bind_text("/tmp/hosts", "/etc/hosts", "# names are resolved by the range's resolver (dsh network allow-list)\n",
                       ret_err, errlen);
    if (umount2(stage, MNT_DETACH) < 0 && rc == 0) {
        rc = -errno;
        snprintf(ret_err, errlen, "network: detach %s: %s", stage, strerror(-rc));
    }
    return rc;
}

/* Compiled with gcc by a program under workspace-write (tests/conformance/setid.test.js) and run in
 * its workspace: issues each call that could give a file a set-user-ID or set-group-ID bit or a
 * file capability, with raw syscalls so no C library rewrites the request, and the controls a
 * program needs. Prints one "name=RESULT" line per call: OK or the errno's name. The arguments
 * name more roots whose mount flags and device node it reports as it does the workspace's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#define FCHMODAT2 452 /* Linux 6.6, x86_64; newer than the C library's headers */
#define OPENAT2   437

static void report(const char *name, long rc)
{
    printf("%s=%s\n", name, rc >= 0 ? "OK" : strerrorname_np(errno));
}

static long created(long fd)
{
    if (fd >= 0)
        close((int)fd);
    return fd;
}

int main(int argc, char **argv)
{
    int fd = open("py", O_RDONLY);
    /* The break: a copy of an interpreter made set-user-ID and set-group-ID. */
    report("chmod 6755", syscall(SYS_chmod, "py", 06755));
    report("chmod 4755", syscall(SYS_chmod, "py", 04755));
    report("chmod 2755", syscall(SYS_chmod, "py", 02755));
    report("fchmod 4755", syscall(SYS_fchmod, fd, 04755));
    report("fchmodat 2755", syscall(SYS_fchmodat, AT_FDCWD, "py", 02755, 0));
    report("fchmodat2 4755", syscall(FCHMODAT2, AT_FDCWD, "py", 04755, 0));
    report("open creat 4755", created(syscall(SYS_open, "made-open", O_CREAT | O_WRONLY, 04755)));
    report("openat creat 2755",
           created(syscall(SYS_openat, AT_FDCWD, "made-openat", O_CREAT | O_WRONLY, 02755)));
    report("creat 4755", created(syscall(SYS_creat, "made-creat", 04755)));
    report("open tmpfile 4755", created(syscall(SYS_open, ".", O_TMPFILE | O_WRONLY, 04755)));
    struct {
        unsigned long long flags, mode, resolve;
    } how = {O_CREAT | O_WRONLY, 0644, 0};
    report("openat2", created(syscall(OPENAT2, AT_FDCWD, "made-openat2", &how, sizeof(how))));
    report("mkdir 2755", syscall(SYS_mkdir, "made-dir", 02755));
    report("mkdirat 4755", syscall(SYS_mkdirat, AT_FDCWD, "made-dirat", 04755));
    report("mknod reg 4755", syscall(SYS_mknod, "made-node", S_IFREG | 04755, 0));
    report("mknodat reg 2755", syscall(SYS_mknodat, AT_FDCWD, "made-nodeat", S_IFREG | 02755, 0));
    /* A file capability (v2, cap_setuid permitted), then xattrs of other namespaces. */
    unsigned int cap[5] = {0x02000000 | 1, 1u << 7, 0, 0, 0};
    report("setxattr security.capability",
           syscall(SYS_setxattr, "py", "security.capability", cap, sizeof(cap), 0));
    report("lsetxattr security.capability",
           syscall(SYS_lsetxattr, "py", "security.capability", cap, sizeof(cap), 0));
    report("fsetxattr security.capability",
           syscall(SYS_fsetxattr, fd, "security.capability", cap, sizeof(cap), 0));
    report("setxattr user.note", syscall(SYS_setxattr, "py", "user.note", "x", 1, 0));
    report("removexattr user.note", syscall(SYS_removexattr, "py", "user.note"));
    /* The workspace mount inside and the roots named on the command line, each with the device
     * node the host placed there (a copy of its /dev/null). */
    for (int i = 0; i < argc; i++) {
        const char *dir = i == 0 ? "." : argv[i];
        char name[64], node[4096];
        struct statvfs vfs;
        if (statvfs(dir, &vfs) == 0) {
            printf("nosuid %d=%s\n", i, vfs.f_flag & ST_NOSUID ? "yes" : "no");
            printf("nodev %d=%s\n", i, vfs.f_flag & ST_NODEV ? "yes" : "no");
        }
        snprintf(node, sizeof(node), "%s/host-null", dir);
        snprintf(name, sizeof(name), "open host device %d", i);
        if (access(node, F_OK) == 0)
            report(name, created(syscall(SYS_open, node, O_RDONLY)));
    }
    /* Controls: ordinary modes, the sticky bit, a fifo, and a mode argument the kernel ignores
     * (no O_CREAT). */
    report("chmod 0755", syscall(SYS_chmod, "py", 0755));
    report("fchmod 0755", syscall(SYS_fchmod, fd, 0755));
    report("open creat 0644", created(syscall(SYS_open, "plain", O_CREAT | O_WRONLY, 0644)));
    report("chmod 0644", syscall(SYS_chmod, "plain", 0644));
    report("open read 4755", created(syscall(SYS_openat, AT_FDCWD, "plain", O_RDONLY, 04755)));
    report("mkdir 0755", syscall(SYS_mkdir, "dir", 0755));
    report("chmod 1777", syscall(SYS_chmod, "dir", 01777));
    report("mknod fifo 0644", syscall(SYS_mknod, "fifo", S_IFIFO | 0644, 0));
    return 0;
}

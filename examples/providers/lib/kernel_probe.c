/* Probes, once per services instance, which confinement mechanisms this kernel offers. The
 * namespace probe runs in a throw-away child made with raw clone3 (fork-like, no allocation), so
 * a multithreaded host is safe.
 *
 * Root without CAP_SYS_ADMIN (a container's root under the engine's default capabilities) cannot
 * make PID or mount namespaces in its own user namespace; like a non-root host, its ranges then
 * get a user namespace of their own first (as unprivileged bubblewrap does), which gives the
 * supervisor and the launcher every capability there and none outside. */
#include "kernel_probe.h"
#include "landlock_probe.h"
#include "mount_defs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

enum { PROBE_OK = 0, PROBE_NO_MOUNT_NS = 3 };

static _Noreturn void probe_child(void)
{
    int rc = PROBE_OK;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (syscall(SYS_unshare, CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) < 0 ||
        syscall(SYS_mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        syscall(__NR_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &attr, sizeof(attr)) < 0)
        rc = PROBE_NO_MOUNT_NS;
    syscall(SYS_exit_group, rc);
    __builtin_unreachable();
}

/* Runs the probe child with extra clone flags: -errno when clone3 refuses, else its exit code. */
static int run_probe(uint64_t flags)
{
    struct clone_args args = {.flags = flags, .exit_signal = 0};
    long pid = syscall(SYS_clone3, &args, sizeof(args));
    if (pid < 0)
        return -errno;
    if (pid == 0)
        probe_child();
    siginfo_t si = {0};
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | __WALL) < 0) {
        if (errno != EINTR)
            return -errno;
    }
    return si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
}

struct ns_probe {
    bool pid_ns, namespaces;
};

/* What a range gets with these user namespace flags (0 or CLONE_NEWUSER). */
static struct ns_probe probe_namespaces(uint64_t userns)
{
    int rc = run_probe(CLONE_NEWPID | userns);
    struct ns_probe p = {.pid_ns = rc >= 0};
    if (!p.pid_ns)
        rc = run_probe(userns); /* no PID namespace: maybe still mount namespaces */
    p.namespaces = rc == PROBE_OK;
    return p;
}

/* A container mounts /proc/sys read-only: no capability inside lets the supervisor write its
 * namespace's pid_max there (EROFS). */
static bool proc_sys_writable(void)
{
    struct statvfs sv;
    return statvfs("/proc/sys/kernel", &sv) == 0 && !(sv.f_flag & ST_RDONLY);
}

static bool kernel_at_least(int major, int minor)
{
    struct utsname u;
    int ma = 0, mi = 0;
    if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
        return false;
    return ma > major || (ma == major && mi >= minor);
}

int dshx__kernel_probe(struct dshx__kernel *ret_kernel)
{
    struct dshx__kernel k = {0};
    k.landlock_abi = dshx__landlock_probe_abi();
    unsigned action = SECCOMP_RET_ERRNO;
    k.seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
                syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
#if !defined(__x86_64__)
    k.seccomp = false; /* the launcher's syscall allow table is reviewed for x86_64 only */
#endif
    k.root = geteuid() == 0;
    struct ns_probe p = probe_namespaces(k.root ? 0 : CLONE_NEWUSER);
    k.userns = !k.root;
    if (k.root && !(p.pid_ns && p.namespaces)) {
        /* Root without CAP_SYS_ADMIN: maybe in a user namespace of the range's own. */
        struct ns_probe own = probe_namespaces(CLONE_NEWUSER);
        if (own.pid_ns + own.namespaces > p.pid_ns + p.namespaces) {
            p = own;
            k.userns = true;
        }
    }
    k.pid_ns = p.pid_ns;
    k.namespaces = p.namespaces;
    /* Linux 6.14 made pid_max per PID namespace; before, writing it would change the host's. */
    k.pid_max_per_ns = k.pid_ns && kernel_at_least(6, 14) && proc_sys_writable();
    FILE *f = fopen("/proc/sys/fs/file-max", "re");
    unsigned long long file_max = 0;
    if (f && fscanf(f, "%llu", &file_max) == 1)
        k.file_max = file_max;
    if (f)
        fclose(f);
    *ret_kernel = k;
    return 0;
}

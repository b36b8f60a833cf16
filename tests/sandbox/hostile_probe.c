/* dsh-hostile-probe: raw syscalls a hostile program reaches by dropping an ELF into the
 * workspace and running it from Node. Prints one word: OK, an errno name (EPERM), or nothing when
 * the kernel killed it (the Node side then reports SIG:<name>).
 *
 *   probe ptrace-child | ptrace-pid PID | vm-read-child | io-uring | socket FAMILY TYPE
 *   probe unshare user|net|mount | clone-newns | mount DIR | bpf | perf | keyctl | userfaultfd
 *   probe tiocsti | int80-socket | kill PID SIG | pidfd-proc PID | setns-net PID
 *   probe daemon FILE | forkbomb
 *   probe inotify N      opens up to N inotify instances, prints "OPENED:<count>:<first error or
 *                        OK>" and "HELD", then waits to be killed
 *   probe lsm-list | cachestat   syscalls newer than the seccomp allow table's review
 *   probe memfd-exec     memfd_create + execveat of a copy of this probe (fileless native code)
 *   probe raw NR         syscall NR with no arguments
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int result(long rc)
{
    if (rc < 0)
        printf("%s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
    else
        printf("OK\n");
    fflush(stdout);
    return 0;
}

static pid_t sleeper(void)
{
    pid_t p = fork();
    if (p == 0) {
        for (;;)
            pause();
    }
    return p;
}

static int ptrace_child(void)
{
    pid_t c = sleeper();
    long rc = ptrace(PTRACE_ATTACH, c, NULL, NULL);
    int e = errno;
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    errno = e;
    return result(rc);
}

static int ptrace_pid(pid_t pid)
{
    long rc = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
    int e = errno;
    if (rc == 0) {
        waitpid(pid, NULL, __WALL);
        ptrace(PTRACE_DETACH, pid, NULL, NULL);
    }
    errno = e;
    return result(rc);
}

static int vm_read_child(void)
{
    static char secret[16] = "child-secret";
    pid_t c = sleeper();
    char buf[16];
    struct iovec local = {buf, sizeof(buf)}, remote = {secret, sizeof(secret)};
    long rc = syscall(SYS_process_vm_readv, c, &local, 1, &remote, 1, 0);
    int e = errno;
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    errno = e;
    return result(rc);
}

static int socket_probe(const char *fam, const char *type)
{
    int f = strcmp(fam, "inet") == 0      ? AF_INET
            : strcmp(fam, "inet6") == 0   ? AF_INET6
            : strcmp(fam, "unix") == 0    ? AF_UNIX
            : strcmp(fam, "netlink") == 0 ? AF_NETLINK
            : strcmp(fam, "packet") == 0  ? AF_PACKET
                                          : AF_UNSPEC;
    int t = strcmp(type, "stream") == 0  ? SOCK_STREAM
            : strcmp(type, "dgram") == 0 ? SOCK_DGRAM
                                         : SOCK_RAW;
    return result(socket(f, t, 0));
}

static int unshare_probe(const char *what)
{
    int flag = strcmp(what, "user") == 0  ? CLONE_NEWUSER
               : strcmp(what, "net") == 0 ? CLONE_NEWNET
                                          : CLONE_NEWNS;
    return result(unshare(flag));
}

static int clone_newns(void)
{
    long rc = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, NULL);
    if (rc == 0)
        _exit(0);
    if (rc > 0)
        waitpid((pid_t)rc, NULL, 0);
    return result(rc);
}

static int mount_probe(const char *dir)
{
    /* Only ever mounts in a mount namespace of its own: never on the host's. */
    if (unshare(CLONE_NEWNS) == 0)
        (void)mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    return result(mount("dsh-probe", dir, "tmpfs", 0, NULL));
}

static int bpf_probe(void)
{
    union bpf_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.map_type = BPF_MAP_TYPE_ARRAY;
    attr.key_size = 4;
    attr.value_size = 4;
    attr.max_entries = 1;
    return result(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)));
}

static int perf_probe(void)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.type = PERF_TYPE_SOFTWARE;
    attr.size = sizeof(attr);
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.disabled = 1;
    return result(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

static int keyctl_probe(void)
{
    return result(syscall(SYS_add_key, "user", "dsh-probe", "x", 1, -2 /* process keyring */));
}

static int tiocsti_probe(void)
{
    int p[2];
    if (pipe(p) < 0)
        return result(-1);
    char c = 'x';
    return result(ioctl(p[1], TIOCSTI, &c)); /* ENOTTY when the call reaches the kernel */
}

/* socket(AF_INET, SOCK_STREAM) through the i386 entry point: a filter that only knows x86_64
 * numbers would miss it. */
static int int80_socket(void)
{
    long ret;
    __asm__ volatile("int $0x80"
                     : "=a"(ret)
                     : "a"(359), "b"(AF_INET), "c"(SOCK_STREAM), "d"(0)
                     : "memory");
    if (ret < 0) {
        errno = (int)-ret;
        return result(-1);
    }
    return result(0);
}

static int pidfd_proc(const char *pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%s", pid);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return result(-1);
    return result(syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0));
}

static int setns_net(const char *pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%s/ns/net", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return result(-1);
    return result(setns(fd, CLONE_NEWNET));
}

/* Double fork, setsid, new process group, ignore SIGTERM, keep appending to FILE. */
static int daemonize(const char *file)
{
    pid_t p = fork();
    if (p < 0)
        return result(-1);
    if (p > 0) {
        waitpid(p, NULL, 0);
        return result(0);
    }
    setsid();
    if (fork() != 0)
        _exit(0);
    setpgid(0, 0);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    for (int fd = 0; fd < 3; fd++)
        close(fd);
    for (;;) {
        int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) {
            (void)!write(fd, "tick\n", 5);
            close(fd);
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static _Noreturn void inotify_hold(int n)
{
    int opened = 0, err = 0;
    while (opened < n) {
        if (syscall(SYS_inotify_init1, IN_CLOEXEC) < 0) {
            err = errno;
            break;
        }
        opened++;
    }
    printf("OPENED:%d:%s\nHELD\n", opened, err ? strerrorname_np(err) : "OK");
    fflush(stdout);
    for (;;)
        pause();
}

static int memfd_exec(void)
{
    int fd = (int)syscall(SYS_memfd_create, "probe", 0U);
    if (fd < 0)
        return result(fd);
    int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    char buf[65536];
    ssize_t n;
    while (self >= 0 && (n = read(self, buf, sizeof(buf))) > 0)
        if (write(fd, buf, (size_t)n) != n)
            return result(-1);
    char *args[] = {"probe", "raw", "39" /* getpid: always OK */, NULL}, *env[] = {NULL};
    pid_t c = fork();
    if (c == 0) {
        syscall(SYS_execveat, fd, "", args, env, AT_EMPTY_PATH);
        printf("%s\n", strerrorname_np(errno));
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    return 0; /* the child printed OK (it ran) or the execveat errno */
}

int main(int argc, char **argv)
{
    const char *a = argc > 1 ? argv[1] : "";
    const char *b = argc > 2 ? argv[2] : "";
    const char *c = argc > 3 ? argv[3] : "";
    if (!strcmp(a, "ptrace-child"))
        return ptrace_child();
    if (!strcmp(a, "ptrace-pid"))
        return ptrace_pid(atoi(b));
    if (!strcmp(a, "vm-read-child"))
        return vm_read_child();
    if (!strcmp(a, "io-uring")) {
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        return result(syscall(SYS_io_uring_setup, 4, &p));
    }
    if (!strcmp(a, "socket"))
        return socket_probe(b, c);
    if (!strcmp(a, "unshare"))
        return unshare_probe(b);
    if (!strcmp(a, "clone-newns"))
        return clone_newns();
    if (!strcmp(a, "mount"))
        return mount_probe(b);
    if (!strcmp(a, "bpf"))
        return bpf_probe();
    if (!strcmp(a, "perf"))
        return perf_probe();
    if (!strcmp(a, "keyctl"))
        return keyctl_probe();
    if (!strcmp(a, "userfaultfd"))
        return result(syscall(SYS_userfaultfd, O_CLOEXEC));
    if (!strcmp(a, "tiocsti"))
        return tiocsti_probe();
    if (!strcmp(a, "int80-socket"))
        return int80_socket();
    if (!strcmp(a, "kill"))
        return result(kill(atoi(b), atoi(c)));
    if (!strcmp(a, "pidfd-proc"))
        return pidfd_proc(b);
    if (!strcmp(a, "setns-net"))
        return setns_net(b);
    if (!strcmp(a, "daemon"))
        return daemonize(b);
    if (!strcmp(a, "inotify"))
        inotify_hold(atoi(b));
    if (!strcmp(a, "lsm-list")) {
        unsigned long long ids[64];
        unsigned size = sizeof(ids);
        return result(syscall(461 /* lsm_list_modules, Linux 6.8 */, ids, &size, 0U));
    }
    if (!strcmp(a, "cachestat")) {
        struct {
            unsigned long long off, len;
        } range = {0, 0};
        unsigned long long cs[8];
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        return result(syscall(451 /* cachestat, Linux 6.5 */, fd, &range, cs, 0U));
    }
    if (!strcmp(a, "memfd-exec"))
        return memfd_exec();
    if (!strcmp(a, "raw"))
        return result(syscall(atol(b)));
    fprintf(stderr, "unknown probe %s\n", a);
    return 2;
}

/* Starting a managed process range: clone3 a child (into a new PID namespace when the kernel
 * allows) that places its fds and execs dsh-range-supervisor, which then runs the program.
 * Between clone and exec the child touches only syscalls and memory prepared beforehand, so a
 * multithreaded host cannot deadlock it. The child has no exit signal (exit_signal 0): a host's
 * waitpid(-1) without __WALL cannot steal its status from our pidfd. */
#include "internal.h"
#include "supervisor_protocol.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif

#define START_TIMEOUT_MS 15000

struct plan {
    int src[5];  /* become fds 0..4 of the supervisor */
    int sync_fd; /* read end the child waits on until its user namespace maps exist; -1 = none */
    const char *path;
    char **argv;
    char **envp;
};

static _Noreturn void child_main(const struct plan *p)
{
    int hi[5];
    /* Move every source out of 0..4 first so no dup2 clobbers a later source. */
    for (int i = 0; i < 5; i++)
        if ((hi[i] = fcntl(p->src[i], F_DUPFD_CLOEXEC, 16)) < 0)
            _exit(127);
    for (int i = 0; i < 5; i++)
        if (dup2(hi[i], i) < 0)
            _exit(127);
    /* Dies with the host thread that spawned it; the supervisor re-checks for a host that died
     * before this line. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        _exit(127);
    if (p->sync_fd >= 0) {
        char c;
        if (read(p->sync_fd, &c, 1) != 1)
            _exit(127);
    }
    syscall(__NR_close_range, 5U, ~0U, 0U); /* host fds without O_CLOEXEC must not leak */
    execve(p->path, p->argv, p->envp);
    _exit(127);
}

static int write_file(pid_t pid, const char *name, const char *text)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    return n < 0 ? -e : 0;
}

/* Maps the host's uid/gid to root of the new user namespace, so the supervisor keeps the
 * capabilities it needs there (pid_max, mounts in the launcher). */
static int map_user_ns(pid_t pid)
{
    char map[64];
    int rc = write_file(pid, "setgroups", "deny");
    snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)geteuid());
    if (rc == 0)
        rc = write_file(pid, "uid_map", map);
    snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)getegid());
    if (rc == 0)
        rc = write_file(pid, "gid_map", map);
    return rc;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void reap(int pidfd)
{
    siginfo_t si;
    while (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | __WALL) < 0 && errno == EINTR) {
    }
}

/* Waits for the supervisor's first word: the program started, or why it did not. */
static int await_start(int cmd_fd, int pidfd, const char *program, struct dsh_error *ret_error)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = cmd_fd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
        int r = poll(p, 2, START_TIMEOUT_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return dshx__fail(ret_error, DSH_E_SPAWN_FAILED, "supervisor did not start in time");
        struct dshx__sup_msg m;
        ssize_t n = recv(cmd_fd, &m, sizeof(m), MSG_DONTWAIT);
        if (n == (ssize_t)sizeof(m) && m.type == DSHX_SUP_STARTED)
            return 0;
        if (n == (ssize_t)sizeof(m) && m.type == DSHX_SUP_EXEC_FAILED)
            return dshx__fail(ret_error, DSH_E_SPAWN_FAILED, "cannot start %s: %s", program,
                              strerror(m.a));
        if (n <= 0 && !(n < 0 && errno == EAGAIN))
            return dshx__fail(ret_error, DSH_E_SPAWN_FAILED,
                              "the range supervisor could not be started");
    }
}

static int supervisor_argv(const struct dshx__config *cfg, const struct dsh_spawn_request *req,
                           bool pid_ns, char ***ret_argv)
{
    struct dshx__strv sv = {0};
    int rc = dshx__strv_push(&sv, cfg->supervisor_path);
    if (rc == 0)
        rc = dshx__strv_push(&sv, "--cwd");
    if (rc == 0)
        rc = dshx__strv_push(&sv, req->cwd);
    if (rc == 0 && pid_ns)
        rc = dshx__strv_push(&sv, "--pid-ns");
    if (rc == 0 && pid_ns && cfg->kernel.pid_max_per_ns) {
        /* The kernel refuses pid_max below 301; the bound is approximate anyway. */
        unsigned max = cfg->max_processes < 301 ? 301 : cfg->max_processes;
        rc = dshx__strv_pushf(&sv, "--pid-max=%u", max) < 0
                 ? -ENOMEM
                 : (dshx__strv_clear(&sv), 0); /* replaced below */
    }
    if (rc < 0) {
        dshx__strv_clear(&sv);
        return rc;
    }
    return 0;
    (void)ret_argv;
}

int dshx__range_spawn(const struct dshx__config *cfg, const struct dsh_spawn_request *request,
                      struct dshx__range **ret_range, struct dsh_error *ret_error);

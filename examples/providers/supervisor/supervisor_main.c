/* dsh-range-supervisor: owns one managed process range.
 *
 *   dsh-range-supervisor [--pid-ns] [--pid-max N] [--nofile N] --cwd DIR -- PROGRAM [ARG]...
 *
 * Started by the subprocess service with fd 0 = /dev/null, 1/2 = output pipes, 3 = the program's
 * control socket, 4 = a seqpacket to the host (supervisor_protocol.h). With --pid-ns it is pid 1
 * of a fresh PID namespace: every descendant, however it forks or setsids, lives in that
 * namespace, and the kernel kills all of them when we exit. Without it we are a child subreaper
 * and find the range by walking /proc. Either way we exit only once no descendant is left, so
 * our exit (the host's pidfd) is the quiescence signal, and we report the program's own exit
 * status first. PDEATHSIG (set by the host before exec) and the host end of fd 4 tie the range to
 * the host's life. */
#include "proc_write.h"
#include "supervisor_protocol.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KILL_RESCAN_MS 20

extern char **environ;

struct state {
    bool pid_ns;
    pid_t main_pid;
    bool main_done;
    struct dshx__sup_msg exit_msg;
    bool killing;       /* SIGKILL phase: repeat until nothing is left */
    long long deadline; /* ms, CLOCK_MONOTONIC; 0 = none */
    bool terminating;
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void send_msg(uint32_t type, int32_t a, int32_t b, int32_t c)
{
    struct dshx__sup_msg m = {.type = type, .a = a, .b = b, .c = c};
    (void)send(DSHX_SUP_FD_CMD, &m, sizeof(m), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* The program could not be started: the host learns it from the report (the range's exit status,
 * 127) and why from the range's stderr, where a provider shows it (the host does not wait for
 * the exec: examples/providers/README.md, "Starting a range"). */
static void exec_failed(const char *program, int e)
{
    dprintf(2, "dsh-range-supervisor: cannot start %s: %s\n", program, strerror(e));
    send_msg(DSHX_SUP_EXEC_FAILED, e, 0, 0);
}

/* A step before the program's fork failed: says which, not that the program could not start. */
static void setup_failed(const char *step, int e)
{
    dprintf(2, "dsh-range-supervisor: %s: %s\n", step, strerror(e));
    send_msg(DSHX_SUP_EXEC_FAILED, e, 0, 0);
}

/* Parent pid from /proc/<pid>/stat; the command name may hold spaces and parentheses. */
static pid_t parent_of(const char *pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    char state;
    int ppid;
    if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2 || state == 'Z')
        return -1;
    return ppid;
}

/* Subreaper fallback: signal every descendant found in /proc. Orphans are re-parented to us, so
 * every process of the range has an ancestor chain that ends here. */
static void signal_descendants(int sig)
{
    size_t cap = 1024, n = 0;
    pid_t *pid = malloc(cap * sizeof(*pid)), *ppid = malloc(cap * sizeof(*ppid));
    bool *mine = NULL;
    DIR *d = opendir("/proc");
    if (!pid || !ppid || !d)
        goto out;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t pp = parent_of(e->d_name);
        if (pp < 0)
            continue;
        if (n == cap) {
            cap *= 2;
            pid_t *a = realloc(pid, cap * sizeof(*pid));
            if (a)
                pid = a;
            pid_t *b = realloc(ppid, cap * sizeof(*ppid));
            if (b)
                ppid = b;
            if (!a || !b)
                goto out;
        }
        pid[n] = (pid_t)atoi(e->d_name);
        ppid[n++] = pp;
    }
    mine = calloc(n ? n : 1, sizeof(*mine));
    if (!mine)
        goto out;
    pid_t self = getpid();
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < n; i++) {
            if (mine[i])
                continue;
            bool hit = ppid[i] == self;
            for (size_t j = 0; !hit && j < n; j++)
                hit = mine[j] && pid[j] == ppid[i];
            if (hit)
                mine[i] = grew = true;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (mine[i])
            (void)kill(pid[i], sig);
out:
    if (d)
        closedir(d);
    free(mine);
    free(pid);
    free(ppid);
}

static void signal_range(struct state *s, int sig)
{
    if (s->pid_ns)
        (void)kill(-1, sig); /* as pid 1: every process of the namespace but us */
    else
        signal_descendants(sig);
}

/* Reaps what has exited. Returns true once no child is left. */
static bool reap(struct state *s)
{
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, WNOHANG | __WALL);
        if (w > 0) {
            if (w == s->main_pid && !s->main_done) {
                s->main_done = true;
                s->exit_msg = (struct dshx__sup_msg){
                    .type = DSHX_SUP_EXITED,
                    .a = WIFEXITED(st) ? 1 : 0,
                    .b = WIFEXITED(st) ? WEXITSTATUS(st) : 0,
                    .c = WIFSIGNALED(st) ? WTERMSIG(st) : 0,
                };
            }
            continue;
        }
        return w < 0 && errno == ECHILD;
    }
}

static void start_kill(struct state *s)
{
    s->killing = true;
    s->deadline = 0;
    signal_range(s, SIGKILL);
}

static void on_command(struct state *s, int *cmd_fd)
{
    struct dshx__sup_msg m;
    ssize_t n = recv(*cmd_fd, &m, sizeof(m), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) { /* the host is gone or let go of the range: nothing may outlive it */
        *cmd_fd = -1;
        start_kill(s);
        return;
    }
    if (n != (ssize_t)sizeof(m) || m.type != DSHX_SUP_TERMINATE)
        return;
    if (m.a <= 0) {
        start_kill(s);
        return;
    }
    long long at = now_ms() + m.a;
    if (!s->terminating) {
        s->terminating = true;
        signal_range(s, SIGTERM);
        s->deadline = at;
    } else if (!s->killing && at < s->deadline) {
        s->deadline = at;
    }
}

/* The kernel's OOM killer picks the range before anything of the host (the supervisor keeps the
 * host's score, so it survives to report the kill). Raising the score needs no privilege. */
#define RANGE_OOM_SCORE_ADJ "1000"

/* RLIMIT_NOFILE of the program and all it starts, only ever lowered (the launcher's own cap never
 * raises a limit either). */
static int limit_open_files(rlim_t nofile)
{
    struct rlimit cur;
    if (!nofile || getrlimit(RLIMIT_NOFILE, &cur) < 0)
        return nofile ? errno : 0;
    if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < nofile)
        nofile = cur.rlim_max;
    struct rlimit rl = {.rlim_cur = nofile, .rlim_max = nofile};
    return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? errno : 0;
}

static void exec_program(char **program, rlim_t nofile, int report_fd)
{
    int e = -dshx__proc_write("/proc/self/oom_score_adj", RANGE_OOM_SCORE_ADJ);
    if (!e)
        e = limit_open_files(nofile);
    if (e) {
        (void)!write(report_fd, &e, sizeof(e));
        _exit(127);
    }
    sigset_t none;
    sigemptyset(&none);
    for (int sig = 1; sig < NSIG; sig++)
        (void)signal(sig, SIG_DFL); /* the host's ignored signals must not leak in */
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(program[0], program, environ);
    e = errno;
    (void)!write(report_fd, &e, sizeof(e));
    _exit(127);
}

static void run(struct state *s, int sfd)
{
    int cmd_fd = DSHX_SUP_FD_CMD;
    for (;;) {
        if (reap(s))
            return;
        long long timeout = -1;
        if (s->killing)
            timeout = KILL_RESCAN_MS;
        else if (s->deadline)
            timeout = s->deadline > now_ms() ? s->deadline - now_ms() : 0;
        struct pollfd p[2] = {{.fd = sfd, .events = POLLIN}, {.fd = cmd_fd, .events = POLLIN}};
        int r = poll(p, 2, (int)timeout);
        if (r < 0 && errno != EINTR)
            return;
        if (p[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
            }
        }
        if (cmd_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            on_command(s, &cmd_fd);
        if (s->killing)
            signal_range(s, SIGKILL); /* catches children forked while the last round ran */
        else if (s->deadline && now_ms() >= s->deadline)
            start_kill(s);
    }
}

int main(int argc, char **argv)
{
    struct state s = {0};
    const char *cwd = "/", *pid_max = NULL;
    unsigned long nofile = 0;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "--pid-ns") == 0) {
            s.pid_ns = true;
        } else if (strcmp(argv[i], "--pid-max") == 0 && i + 1 < argc) {
            pid_max = argv[++i];
        } else if (strcmp(argv[i], "--nofile") == 0 && i + 1 < argc) {
            char *end;
            nofile = strtoul(argv[++i], &end, 10);
            if (*end || !nofile)
                return 2;
        } else if (strcmp(argv[i], "--cwd") == 0 && i + 1 < argc) {
            cwd = argv[++i];
        } else {
            return 2;
        }
    }
    if (i >= argc || fcntl(DSHX_SUP_FD_CMD, F_SETFD, FD_CLOEXEC) < 0)
        return 2;
    /* PDEATHSIG covers a host that dies from now on; this covers one that died before. */
    struct pollfd hp = {.fd = DSHX_SUP_FD_CMD, .events = POLLIN};
    if (poll(&hp, 1, 0) > 0 && (hp.revents & (POLLHUP | POLLERR)))
        return 0;
    (void)setsid(); /* leave the host's session and controlling terminal */
    int e = 0;
    const char *step = "become a child subreaper";
    if (!s.pid_ns && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
        e = errno;
    /* The host passes --pid-max only where it is per namespace and /proc/sys is writable. */
    if (!e && s.pid_ns && pid_max && (step = "set the range's pid_max (/proc/sys/kernel/pid_max)"))
        e = -dshx__proc_write("/proc/sys/kernel/pid_max", pid_max);
    if (!e && (step = "enter the working directory") && chdir(cwd) < 0)
        e = errno;
    if (e) {
        setup_failed(step, e);
        return 1;
    }
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    int ep[2] = {-1, -1};
    if (!e && (sfd < 0 || pipe2(ep, O_CLOEXEC) < 0))
        e = errno;
    if (!e && (s.main_pid = fork()) < 0)
        e = errno;
    if (e) {
        exec_failed(argv[i], e);
        return 1;
    }
    if (s.main_pid == 0)
        exec_program(&argv[i], (rlim_t)nofile, ep[1]);
    close(ep[1]);
    int exec_errno = 0;
    ssize_t n;
    do
        n = read(ep[0], &exec_errno, sizeof(exec_errno));
    while (n < 0 && errno == EINTR);
    close(ep[0]);
    if (n == (ssize_t)sizeof(exec_errno)) {
        while (waitpid(s.main_pid, NULL, __WALL) < 0 && errno == EINTR) {
        }
        exec_failed(argv[i], exec_errno);
        return 1;
    }
    send_msg(DSHX_SUP_STARTED, (int32_t)s.main_pid, 0, 0);
    /* Drop our copies of the program's stdio and control channel: their EOF must mean the range
     * closed them. */
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd = 0; fd <= 3; fd++) {
        if (null_fd >= 0)
            dup2(null_fd, fd);
        else
            close(fd);
    }
    if (null_fd > 3)
        close(null_fd);
    run(&s, sfd);
    if (!s.main_done)
        s.exit_msg = (struct dshx__sup_msg){.type = DSHX_SUP_EXITED, .c = SIGKILL};
    send_msg(s.exit_msg.type, s.exit_msg.a, s.exit_msg.b, s.exit_msg.c);
    /* Commands left unread would make the host's next read fail (ECONNRESET) when we exit. */
    struct dshx__sup_msg unread;
    while (recv(DSHX_SUP_FD_CMD, &unread, sizeof(unread), MSG_DONTWAIT) > 0) {
    }
    return 0;
}

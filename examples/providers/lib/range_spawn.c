/* Starting a managed process range: clone3 a child (into a new PID namespace when the kernel
 * allows) that places its fds and execs dsh-range-supervisor, which then runs the program.
 * The host does not wait for the supervisor: the range starts while the host's loop goes on.
 * Between clone and exec the child touches only syscalls and memory prepared beforehand, so a
 * multithreaded host cannot deadlock it. The child has no exit signal (exit_signal 0): a host's
 * waitpid(-1) without __WALL cannot steal its status from our pidfd.
 *
 * Where the child needs nothing from the host after the clone (no user namespace to map), it
 * shares the host's memory until its exec (CLONE_VM | CLONE_VFORK, on a stack of its own, the
 * host thread suspended meanwhile), as posix_spawn does: a copy of the host's page tables, and
 * the copy-on-write faults and TLB shootdowns the host then took, cost it over 2 ms of CPU per
 * range (README, "Benchmarks", concurrent-per-call). */
#include "range_spawn.h"
#include "environment.h"
#include "proc_write.h"
#include "range_cgroup.h"
#include "supervisor_protocol.h"
#include "dsh_strv.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
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

struct plan {
    int src[5];  /* become fds 0..4 of the supervisor */
    int sync_fd; /* read end the child waits on until its user namespace maps exist; -1 = none */
    int sync_w;  /* the child's copy of the write end: closed so a dead host reads as EOF */
    int join_fd[1 + DSHX_CGROUP_CTL_COUNT]; /* v1 tasks files the child writes "0" into first */
    size_t n_join;
    const char *path;
    char **argv;
    char **envp;
    bool shared_memory; /* the child runs on the host's memory until its exec (see above) */
    sigset_t host_mask; /* the spawning thread's signal mask, for the exec */
};

static _Noreturn void child_main(const struct plan *p)
{
    if (p->shared_memory) {
        /* A host handler must not run here, on the host's memory: the host blocked every signal
         * before the clone; caught ones go back to the default (as the exec would do anyway),
         * then the host thread's own mask returns for the exec. */
        for (int sig = 1; sig < NSIG; sig++) {
            struct sigaction old;
            if (sigaction(sig, NULL, &old) == 0 && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)
                (void)signal(sig, SIG_DFL);
        }
        if (sigprocmask(SIG_SETMASK, &p->host_mask, NULL) < 0)
            _exit(127);
    }
    /* Into the range's cgroups before anything else runs (cgroup2 needs no step: clone3 did it). */
    for (size_t i = 0; i < p->n_join; i++)
        if (write(p->join_fd[i], "0", 1) != 1)
            _exit(127);
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
        close(p->sync_w);
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
    return dshx__proc_write(path, text);
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

static int supervisor_argv(const struct dshx__config *cfg, const struct dsh_spawn_request *req,
                           bool pid_ns, char ***ret_argv)
{
    unsigned bound = DSH_HAS(req, max_processes) && req->max_processes ? req->max_processes
                                                                        : cfg->max_processes;
    struct dsh_strv sv = {0};
    int rc = dsh_strv_push(&sv, cfg->supervisor_path);
    if (rc == 0)
        rc = dsh_strv_push(&sv, "--cwd");
    if (rc == 0)
        rc = dsh_strv_push(&sv, req->cwd);
    /* Open files: the range's processes times this stay within a share of the machine's table. */
    if (rc == 0)
        rc = dsh_strv_push(&sv, "--nofile");
    if (rc == 0)
        rc = dsh_strv_pushf(&sv, "%u", dshx__range_nofile(cfg->kernel.file_max, bound, cfg->max_total_processes));
    if (rc == 0 && pid_ns)
        rc = dsh_strv_push(&sv, "--pid-ns");
    if (rc == 0 && pid_ns && cfg->kernel.pid_max_per_ns) {
        /* The kernel refuses pid_max below 301; the bound is approximate anyway (pids below 300
         * are not reused after a wrap). The cgroup's pids.max, where there is one, is exact. */
        unsigned max = bound < 301 ? 301 : bound;
        rc = dsh_strv_push(&sv, "--pid-max");
        if (rc == 0)
            rc = dsh_strv_pushf(&sv, "%u", max);
    }
    if (rc == 0)
        rc = dsh_strv_push(&sv, "--");
    for (size_t i = 0; rc == 0 && req->argv[i]; i++)
        rc = dsh_strv_push(&sv, req->argv[i]);
    if (rc < 0) {
        dsh_strv_clear(&sv);
        return rc;
    }
    *ret_argv = dsh_strv_finish(&sv);
    return 0;
}

/* The shared-memory clone needs a trampoline in assembly (the child starts on its own stack and
 * must not return through the caller's frames); sanitizers' interceptors would run in the child
 * on the host's memory, so those builds copy it instead. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define SANITIZED_BUILD 1
#endif
#endif
#if defined(__x86_64__) && !defined(SANITIZED_BUILD)
#define SHARED_MEMORY_SPAWN 1
/* Many times what child_main and the libc calls it makes use (no handler runs there), kept
 * small: it lives on the spawning thread's stack, which a host may have made small. */
#define CHILD_STACK_BYTES (16 * 1024)

/* clone3 whose child calls child_main(plan) on the stack args describes and never returns. */
static long clone3_into_child_main(struct clone_args *args, const struct plan *plan)
{
    long ret;
    register const struct plan *r12 __asm__("r12") = plan;
    register void (*r13)(const struct plan *) __asm__("r13") = child_main;
    __asm__ volatile("syscall\n\t"
                     "testq %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xorl %%ebp, %%ebp\n\t"
                     "movq %%r12, %%rdi\n\t"
                     "callq *%%r13\n\t"
                     "ud2\n"
                     "1:"
                     : "=a"(ret)
                     : "0"((long)SYS_clone3), "D"(args), "S"(sizeof(*args)), "r"(r12), "r"(r13)
                     : "rcx", "r11", "memory", "cc");
    return ret;
}
#else
#define SHARED_MEMORY_SPAWN 0
#endif

/* Starts the child in child_main(plan); returns its pid (in the host), or -1 with errno. */
static pid_t clone_range(bool pid_ns, bool user_ns, int cgroup_fd, int *ret_pidfd, struct plan *plan)
{
    struct clone_args args = {
        .flags = CLONE_PIDFD | (pid_ns ? CLONE_NEWPID : 0) | (user_ns ? CLONE_NEWUSER : 0) |
                 (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
        .pidfd = (uint64_t)(uintptr_t)ret_pidfd,
        .exit_signal = 0,
        .cgroup = cgroup_fd >= 0 ? (uint64_t)cgroup_fd : 0,
    };
#if SHARED_MEMORY_SPAWN
    /* The child waits for the host to map its user namespace: the host must not be suspended. */
    if (plan->sync_fd < 0) {
        _Alignas(16) unsigned char stack[CHILD_STACK_BYTES];
        sigset_t all;
        sigfillset(&all);
        int e = pthread_sigmask(SIG_SETMASK, &all, &plan->host_mask);
        if (e != 0) {
            errno = e;
            return -1;
        }
        plan->shared_memory = true;
        args.flags |= CLONE_VM | CLONE_VFORK;
        args.stack = (uint64_t)(uintptr_t)stack;
        args.stack_size = sizeof(stack);
        long rc = clone3_into_child_main(&args, plan);
        /* Back here once the child has exec'd or exited. */
        int saved = (int)-rc;
        (void)pthread_sigmask(SIG_SETMASK, &plan->host_mask, NULL);
        if (rc < 0) {
            errno = saved;
            return -1;
        }
        return (pid_t)rc;
    }
#endif
    pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
    if (pid == 0)
        child_main(plan);
    return pid;
}

/* The range's own cgroup, in the session's group; NULL without a session (no cgroup2 or v1
 * freezer hierarchy is writable here): the range then has none, and freeze() reports
 * unsupported. Names are unique per host process (dsh-range-<pid>-<n>). */
static struct dshx__range_cgroup *create_range_cgroup(const struct dshx__range_cgroup *session, char *name,
                                                      size_t name_size)
{
    static unsigned long serial;
    snprintf(name, name_size, "dsh-range-%ld-%lu", (long)getpid(),
             __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
    struct dshx__range_cgroup *cg;
    if (!session || dshx__range_cgroup_create_in(session, name, &cg) < 0)
        return NULL;
    return cg;
}

int dshx__range_session_create(const struct dshx__config *cfg, struct dshx__range_cgroup **ret_session,
                               struct dsh_error *ret_error)
{
    static unsigned long serial;
    struct dshx__cgroup_roots roots = {cfg->cgroup_proc_file, cfg->cgroup_mount_root};
    char name[64];
    snprintf(name, sizeof(name), "dsh-session-%ld-%lu", (long)getpid(),
             __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
    static const enum dshx_cgroup_kind kinds[] = {DSHX_CGROUP_V2, DSHX_CGROUP_V1_FREEZER};
    struct dshx__range_cgroup *session = NULL;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && !session; i++) {
        struct dshx__range_cgroup *cg;
        if (dshx__session_cgroup_create(kinds[i], &roots, name, &cg) < 0)
            continue;
        if (dshx__range_cgroup_usable(cg))
            session = cg;
        else
            (void)dshx__range_cgroup_remove(cg);
    }
    *ret_session = session;
    unsigned have = cfg->kernel.cgroup_controllers;
    struct dshx__range_limits totals = {
        .memory_bytes = have & (1u << DSHX_CGROUP_CTL_MEMORY) ? cfg->max_total_memory_bytes : 0,
        .processes = have & (1u << DSHX_CGROUP_CTL_PIDS) ? cfg->max_total_processes : 0,
    };
    if (!session)
        return totals.memory_bytes || totals.processes
                   ? dshx__fail(ret_error, DSH_E_SPAWN_FAILED,
                                "the session's totals need a cgroup, and none could be created")
                   : 0;
    const char *what = "";
    int rc = dshx__session_cgroup_set_totals(session, &totals, &what);
    if (rc < 0) {
        (void)dshx__range_cgroup_remove(session);
        *ret_session = NULL;
        return dshx__fail(ret_error, DSH_E_SPAWN_FAILED, "the session's %s total could not be set: %s", what,
                          strerror(-rc));
    }
    return 0;
}

/* The request's limits, less those the report already declared unenforced (their controller is
 * not available here). */
static struct dshx__range_limits enforceable_limits(const struct dshx__config *cfg,
                                                    const struct dsh_spawn_request *request)
{
    unsigned have = cfg->kernel.cgroup_controllers;
    struct dshx__range_limits l = {.processes = cfg->max_processes};
    if (DSH_HAS(request, max_cpu_percent)) {
        l.memory_bytes = request->max_memory_bytes;
        if (request->max_processes)
            l.processes = request->max_processes;
        l.cpu_percent = request->max_cpu_percent;
    }
    if (!(have & (1u << DSHX_CGROUP_CTL_MEMORY)))
        l.memory_bytes = 0;
    if (!(have & (1u << DSHX_CGROUP_CTL_PIDS)))
        l.processes = 0;
    if (!(have & (1u << DSHX_CGROUP_CTL_CPU)))
        l.cpu_percent = 0;
    return l;
}

/* The range's cgroups with its limits written, before anything of it runs. A limit the report
 * promised that cannot be set fails the spawn: the range never runs less limited than reported. */
static int prepare_cgroup(const struct dshx__config *cfg, const struct dshx__range_cgroup *session,
                          const struct dsh_spawn_request *request, struct dshx__range_cgroup **ret_cgroup,
                          struct dsh_error *ret_error)
{
    struct dshx__cgroup_roots roots = {cfg->cgroup_proc_file, cfg->cgroup_mount_root};
    struct dshx__range_limits limits = enforceable_limits(cfg, request);
    bool limited = limits.memory_bytes || limits.processes || limits.cpu_percent;
    char name[64];
    struct dshx__range_cgroup *cg = create_range_cgroup(session, name, sizeof(name));
    *ret_cgroup = cg;
    if (!cg)
        return limited ? dshx__fail(ret_error, DSH_E_SPAWN_FAILED,
                                    "the range's limits need a cgroup, and none could be created")
                       : 0;
    (void)dshx__range_cgroup_add_controllers(cg, &roots, name);
    const char *what = "";
    int rc = dshx__range_cgroup_set_limits(cg, &limits, &what);
    if (rc < 0)
        return dshx__fail(ret_error, DSH_E_SPAWN_FAILED, "the range's %s limit could not be set: %s", what,
                          strerror(-rc));
    return 0;
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

enum {
    CTL_HOST,
    CTL_CHILD,
    OUT_R,
    OUT_W,
    ERR_R,
    ERR_W,
    CMD_HOST,
    CMD_CHILD,
    DEVNULL,
    SYNC_R,
    SYNC_W,
    NFDS
};

/* What the child may have in flight on its control socket before its writes wait for the host
 * (the kernel caps it at net.core.wmem_max). Program output crosses as frames there, and the
 * child's synchronous writes stall on a full socket; the default (~200 KiB) made a large output
 * alternate between a full socket and an idle host. */
#define CONTROL_SEND_BUFFER (4 * 1024 * 1024)

static int open_fds(int fd[NFDS], bool user_ns)
{
    int send_buffer = CONTROL_SEND_BUFFER;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, &fd[CTL_HOST]) < 0 ||
        setsockopt(fd[CTL_CHILD], SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer) < 0 ||
        pipe2(&fd[OUT_R], O_CLOEXEC) < 0 || pipe2(&fd[ERR_R], O_CLOEXEC) < 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, &fd[CMD_HOST]) < 0 ||
        (fd[DEVNULL] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 ||
        (user_ns && pipe2(&fd[SYNC_R], O_CLOEXEC) < 0))
        return -errno;
    return 0;
}

int dshx__range_spawn(const struct dshx__config *cfg, const struct dshx__range_cgroup *session,
                      const struct dsh_spawn_request *request, struct dshx__range **ret_range,
                      struct dsh_error *ret_error)
{
    if (!request || !request->argv || !request->argv[0] || request->argv[0][0] != '/' ||
        !request->cwd || request->cwd[0] != '/')
        return dshx__fail(ret_error, DSH_E_REQUEST_INVALID,
                          "spawn needs an absolute argv[0] and an absolute cwd");
    if (!cfg->supervisor_path)
        return dshx__fail(ret_error, DSH_E_SPAWN_FAILED, "no range supervisor is configured");
    /* What the host can see at once fails the spawn; what only the exec can see ends the range. */
    if (access(request->argv[0], X_OK) < 0)
        return dshx__fail(ret_error, DSH_E_SPAWN_FAILED, "cannot start %s: %s", request->argv[0],
                          strerror(errno));
    bool pid_ns = cfg->kernel.pid_ns;
    char **env = NULL, **argv = NULL;
    int fd[NFDS];
    for (int i = 0; i < NFDS; i++)
        fd[i] = -1;
    struct dshx__range_cgroup *cgroup = NULL;
    int pidfd = -1, rc = dshx__build_env(request->env, request->cwd, &env, ret_error);
    if (rc < 0)
        return rc;
    struct dshx__range *r = calloc(1, sizeof(*r));
    if (!r || supervisor_argv(cfg, request, pid_ns, &argv) < 0) {
        rc = dshx__fail(ret_error, -ENOMEM, "out of memory");
        goto out;
    }
    /* Without root (or root without CAP_SYS_ADMIN), a user namespace of the range's own gives
     * the supervisor and launcher their namespaces. */
    bool user_ns = cfg->kernel.userns && (pid_ns || cfg->kernel.namespaces);
    if ((rc = open_fds(fd, user_ns)) < 0) {
        rc = dshx__fail(ret_error, rc, "cannot create the range's channels: %s", strerror(-rc));
        goto out;
    }
    if ((rc = prepare_cgroup(cfg, session, request, &cgroup, ret_error)) < 0)
        goto out;
    struct plan plan = {
        .src = {fd[DEVNULL], fd[OUT_W], fd[ERR_W], fd[CTL_CHILD], fd[CMD_CHILD]},
        .sync_fd = fd[SYNC_R],
        .sync_w = fd[SYNC_W],
        .path = cfg->supervisor_path,
        .argv = argv,
        .envp = env,
    };
    if (cgroup)
        plan.n_join = dshx__range_cgroup_join_fds(cgroup, plan.join_fd, sizeof(plan.join_fd) / sizeof(plan.join_fd[0]));
    pid_t pid = clone_range(pid_ns, user_ns, cgroup ? dshx__range_cgroup_clone_fd(cgroup) : -1, &pidfd, &plan);
    if (pid < 0) {
        rc = -errno;
        /* Docker's default seccomp profile answers clone3 with ENOSYS (to make glibc fall back to
         * clone, which cannot start a range in its cgroup with a pidfd). */
        rc = dshx__fail(ret_error, DSH_E_SPAWN_FAILED, "clone3: %s%s", strerror(-rc),
                        rc == -ENOSYS ? ": a seccomp filter refuses it (a container's profile: run the "
                                        "container with examples/deploy/seccomp.json)"
                                      : "");
        goto out;
    }
    static const int child_side[] = {CTL_CHILD, OUT_W, ERR_W, CMD_CHILD, DEVNULL, SYNC_R};
    for (size_t i = 0; i < sizeof(child_side) / sizeof(child_side[0]); i++)
        close_fd(&fd[child_side[i]]);
    if (user_ns) {
        rc = map_user_ns(pid);
        if (rc == 0 && write(fd[SYNC_W], "x", 1) != 1)
            rc = -errno;
        close_fd(&fd[SYNC_W]);
        if (rc < 0) {
            (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
            reap(pidfd);
            rc = dshx__fail(ret_error, DSH_E_SPAWN_FAILED, "user namespace map: %s", strerror(-rc));
            goto out;
        }
    }
    /* No wait for the exec: the supervisor reports it on cmd_fd, read with the exit status
     * (a program it cannot exec ends the range as 127, the reason on its stderr). */
    if (set_nonblock(fd[CTL_HOST]) < 0 || set_nonblock(fd[OUT_R]) < 0 ||
        set_nonblock(fd[ERR_R]) < 0 || set_nonblock(fd[CMD_HOST]) < 0) {
        rc = dshx__fail(ret_error, -errno, "fcntl: %s", strerror(errno));
        (void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        reap(pidfd);
        goto out;
    }
    r->pub = (struct dsh_process){
        .struct_size = sizeof(struct dsh_process),
        .pid = pid,
        .control_fd = fd[CTL_HOST],
        .stdout_fd = fd[OUT_R],
        .stderr_fd = fd[ERR_R],
        .quiescence_fd = pidfd,
    };
    r->cmd_fd = fd[CMD_HOST];
    r->cgroup = cgroup;
    cgroup = NULL;
    r->in_pid_ns = pid_ns;
    fd[CTL_HOST] = fd[OUT_R] = fd[ERR_R] = fd[CMD_HOST] = pidfd = -1;
    *ret_range = r;
    r = NULL;
    rc = 0;
out:
    for (int i = 0; i < NFDS; i++)
        close_fd(&fd[i]);
    close_fd(&pidfd);
    if (cgroup) /* the child, if any, was killed and reaped above: the group is empty */
        (void)dshx__range_cgroup_remove(cgroup);
    free(r);
    dsh_strv_free(argv);
    dsh_strv_free(env);
    return rc;
}

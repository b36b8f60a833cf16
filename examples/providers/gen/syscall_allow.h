/* The reviewed x86_64 syscall allow table of dsh-sandbox-launch's default-deny seccomp filter.
 * Every syscall number not listed here answers ENOSYS, so an interface added by a future kernel
 * stays closed until someone reviews it and adds a row. The deny rules of seccomp_rules.c take
 * priority over this table (their errnos and argument checks win), so rows such as clone, ioctl
 * and socketpair are allowed here only in the shapes those rules leave open.
 *
 * X(name, why): the name as libseccomp spells it on x86_64, and who needs it. The set was found
 * by running the real workloads under the filter with SECCOMP_RET_LOG (Node and libuv with its
 * thread pool, worker threads, fs.watch and child_process; glibc; sh and coreutils; gcc compiling
 * and running a program; git init/add/commit/log; python3 with subprocess), then completed with
 * the sibling calls glibc or libuv pick on other paths (the *at, v and 64 variants). Not listed on
 * purpose: memfd_create and execveat (fileless native code), personality, the Linux AIO, SysV and
 * POSIX message-queue IPC, mlock*, NUMA policy, sync/syncfs (host-wide flushes), set*id/capset,
 * seccomp/landlock self-restriction, vmsplice, fanotify, and everything newer than the last
 * review (cachestat, futex_waitv, statmount/listmount, lsm_*, mseal, map_shadow_stack, fchmodat2,
 * setxattrat, ...). Denied by seccomp_rules.c instead of listed: openat2 (ENOSYS: its mode is in
 * memory seccomp cannot read) and the xattr writes (EPERM); the rows that take a mode (chmod,
 * open, mkdir, mknod and their siblings) are allowed only without S_ISUID/S_ISGID. */
#ifndef DSHX_SYSCALL_ALLOW_H
#define DSHX_SYSCALL_ALLOW_H

#define DSHX_SYSCALL_ALLOW_TABLE(X)                                                                \
    /* fd I/O: everyone */                                                                         \
    X(read, "all")                                                                                 \
    X(write, "all")                                                                                \
    X(readv, "glibc stdio, libuv fs")                                                              \
    X(writev, "glibc stdio, libuv streams")                                                        \
    X(pread64, "libuv fs, git, gcc")                                                               \
    X(pwrite64, "libuv fs, git")                                                                   \
    X(preadv, "libuv fs")                                                                          \
    X(pwritev, "libuv fs")                                                                         \
    X(preadv2, "libuv fs")                                                                         \
    X(pwritev2, "libuv fs")                                                                        \
    X(lseek, "all")                                                                                \
    X(close, "all")                                                                                \
    X(close_range, "libuv spawn, python subprocess")                                               \
    X(dup, "sh")                                                                                   \
    X(dup2, "sh, libuv spawn")                                                                     \
    X(dup3, "libuv spawn")                                                                         \
    X(fcntl, "all")                                                                                \
    X(ioctl, "all; TIOCSTI/TIOCLINUX refused by a deny rule, devices by Landlock")                 \
    X(pipe, "sh")                                                                                  \
    X(pipe2, "libuv, sh, git, gcc")                                                                \
    X(sendfile, "libuv fs.copyFile")                                                               \
    X(copy_file_range, "libuv fs.copyFile, coreutils cp")                                          \
    X(splice, "coreutils, libuv")                                                                  \
    X(tee, "coreutils tee")                                                                        \
    X(flock, "git, python")                                                                        \
    X(fsync, "git, libuv fs.fsync")                                                                \
    X(fdatasync, "libuv fs.fdatasync")                                                             \
    X(sync_file_range, "git")                                                                      \
    X(fadvise64, "coreutils, gcc")                                                                 \
    X(readahead, "glibc")                                                                          \
    X(fallocate, "libuv, git")                                                                     \
    X(ftruncate, "libuv fs.ftruncate, git")                                                        \
    X(truncate, "libuv fs.truncate")                                                               \
    /* waiting on fds and events: libuv, glibc, python */                                          \
    X(poll, "glibc, git, python")                                                                  \
    X(ppoll, "glibc")                                                                              \
    X(select, "python")                                                                            \
    X(pselect6, "sh, coreutils")                                                                   \
    X(epoll_create, "libuv fallback")                                                              \
    X(epoll_create1, "libuv")                                                                      \
    X(epoll_ctl, "libuv")                                                                          \
    X(epoll_wait, "libuv fallback")                                                                \
    X(epoll_pwait, "libuv")                                                                        \
    X(epoll_pwait2, "libuv")                                                                       \
    X(eventfd, "libuv fallback")                                                                   \
    X(eventfd2, "libuv async handles")                                                             \
    X(signalfd, "glibc")                                                                           \
    X(signalfd4, "glibc")                                                                          \
    X(timerfd_create, "libuv, python")                                                             \
    X(timerfd_settime, "libuv, python")                                                            \
    X(timerfd_gettime, "libuv, python")                                                            \
    X(inotify_init, "libuv fallback")                                                              \
    X(inotify_init1, "libuv fs.watch")                                                             \
    X(inotify_add_watch, "libuv fs.watch")                                                         \
    X(inotify_rm_watch, "libuv fs.watch")                                                          \
    /* paths: Landlock and the mount layer decide which ones */                                    \
    X(open, "glibc fallback")                                                                      \
    X(openat, "all")                                                                               \
    X(creat, "old programs")                                                                       \
    X(stat, "glibc fallback")                                                                      \
    X(fstat, "all")                                                                                \
    X(lstat, "libuv, git")                                                                         \
    X(newfstatat, "glibc stat family")                                                             \
    X(statx, "libuv fs.stat, coreutils")                                                           \
    X(statfs, "libuv fs.statfs, glibc")                                                            \
    X(fstatfs, "glibc, coreutils")                                                                 \
    X(access, "sh, gcc")                                                                           \
    X(faccessat, "glibc")                                                                          \
    X(faccessat2, "glibc access")                                                                  \
    X(readlink, "node, gcc")                                                                       \
    X(readlinkat, "glibc")                                                                         \
    X(getdents, "old programs")                                                                    \
    X(getdents64, "readdir")                                                                       \
    X(getcwd, "all")                                                                               \
    X(chdir, "sh, git, process.chdir")                                                             \
    X(fchdir, "coreutils, git")                                                                    \
    X(mkdir, "fs.mkdir, git")                                                                      \
    X(mkdirat, "coreutils")                                                                        \
    X(rmdir, "fs.rmdir")                                                                           \
    X(unlink, "fs.unlink, gcc temporaries")                                                        \
    X(unlinkat, "coreutils rm, fs.rm")                                                             \
    X(rename, "fs.rename, git")                                                                    \
    X(renameat, "coreutils")                                                                       \
    X(renameat2, "coreutils mv")                                                                   \
    X(link, "fs.link, git")                                                                        \
    X(linkat, "coreutils")                                                                         \
    X(symlink, "fs.symlink")                                                                       \
    X(symlinkat, "coreutils ln")                                                                   \
    X(mknod, "mkfifo (device nodes need CAP_MKNOD, which is dropped)")                             \
    X(mknodat, "mkfifo")                                                                           \
    X(chmod, "fs.chmod, git, gcc output")                                                          \
    X(fchmod, "libuv, git")                                                                        \
    X(fchmodat, "coreutils chmod")                                                                 \
    X(chown, "fs.chown (own ids only without capabilities)")                                       \
    X(fchown, "libuv")                                                                             \
    X(lchown, "fs.lchown")                                                                         \
    X(fchownat, "coreutils")                                                                       \
    X(utime, "old programs")                                                                       \
    X(utimes, "python os.utime")                                                                   \
    X(utimensat, "fs.utimes, touch")                                                               \
    X(futimesat, "glibc fallback")                                                                 \
    X(umask, "all")                                                                                \
    X(getxattr, "coreutils ls, cp")                                                                \
    X(lgetxattr, "coreutils ls")                                                                   \
    X(fgetxattr, "coreutils cp")                                                                   \
    X(listxattr, "coreutils cp")                                                                   \
    X(llistxattr, "coreutils cp")                                                                  \
    X(flistxattr, "coreutils cp")                                                                  \
    /* memory: glibc malloc, V8's heap and code space (pkeys guard its JIT pages) */               \
    X(brk, "glibc malloc")                                                                         \
    X(mmap, "all")                                                                                 \
    X(munmap, "all")                                                                               \
    X(mprotect, "ld.so, V8")                                                                       \
    X(mremap, "glibc realloc")                                                                     \
    X(madvise, "V8, glibc")                                                                        \
    X(msync, "git")                                                                                \
    X(mincore, "glibc")                                                                            \
    X(membarrier, "V8")                                                                            \
    X(pkey_alloc, "V8 code space")                                                                 \
    X(pkey_free, "V8 code space")                                                                  \
    X(pkey_mprotect, "V8 code space")                                                              \
    /* processes and threads; clone is refused any namespace flag by a deny rule */                \
    X(clone, "glibc fork and pthread_create (clone3 answers ENOSYS first)")                        \
    X(fork, "old programs")                                                                        \
    X(vfork, "glibc posix_spawn, libuv spawn")                                                     \
    X(execve, "child_process, sh, gcc, git")                                                       \
    X(exit, "threads")                                                                             \
    X(exit_group, "all")                                                                           \
    X(wait4, "sh, libuv, gcc, git")                                                                \
    X(waitid, "python, glibc")                                                                     \
    X(kill, "process.kill, sh (Landlock scopes signals to the range)")                             \
    X(tkill, "glibc")                                                                              \
    X(tgkill, "glibc raise, V8")                                                                   \
    X(rt_sigqueueinfo, "glibc sigqueue")                                                           \
    X(rt_tgsigqueueinfo, "glibc")                                                                  \
    X(pidfd_open, "libuv, python")                                                                 \
    X(pidfd_send_signal, "python")                                                                 \
    X(getpid, "all")                                                                               \
    X(getppid, "node, sh")                                                                         \
    X(gettid, "V8, glibc")                                                                         \
    X(getpgid, "sh")                                                                               \
    X(setpgid, "sh job control, libuv detached")                                                   \
    X(getpgrp, "sh")                                                                               \
    X(getsid, "ps-like programs")                                                                  \
    X(setsid, "libuv detached children")                                                           \
    X(getuid, "all")                                                                               \
    X(geteuid, "all")                                                                              \
    X(getgid, "all")                                                                               \
    X(getegid, "all")                                                                              \
    X(getgroups, "sh, git")                                                                        \
    X(getresuid, "python")                                                                         \
    X(getresgid, "python")                                                                         \
    X(capget, "node startup")                                                                      \
    X(prctl, "V8 thread names, glibc")                                                             \
    X(arch_prctl, "glibc TLS")                                                                     \
    X(set_tid_address, "glibc start")                                                              \
    X(set_robust_list, "glibc threads")                                                            \
    X(rseq, "glibc threads")                                                                       \
    X(futex, "all threads")                                                                        \
    X(sched_yield, "V8, libuv")                                                                    \
    X(sched_getaffinity, "libuv availableParallelism, glibc nprocs")                               \
    X(sched_setaffinity, "within the range's own cpuset")                                          \
    X(sched_getparam, "python os.sched_getparam")                                                  \
    X(sched_getscheduler, "python")                                                                \
    X(sched_get_priority_max, "glibc")                                                             \
    X(sched_get_priority_min, "glibc")                                                             \
    X(getpriority, "os.getPriority")                                                               \
    X(setpriority, "os.setPriority (raising niceness only without capabilities)")                  \
    X(getrlimit, "sh ulimit")                                                                      \
    X(setrlimit, "sh ulimit (lowering only without capabilities)")                                 \
    X(prlimit64, "node, glibc")                                                                    \
    X(getrusage, "process.resourceUsage, sh time")                                                 \
    X(times, "sh times")                                                                           \
    X(sysinfo, "os.totalmem, os.uptime")                                                           \
    X(uname, "os.release, gcc, python")                                                            \
    X(getcpu, "glibc sched_getcpu")                                                                \
    /* signals and time */                                                                         \
    X(rt_sigaction, "all")                                                                         \
    X(rt_sigprocmask, "all")                                                                       \
    X(rt_sigreturn, "all")                                                                         \
    X(rt_sigpending, "sh")                                                                         \
    X(rt_sigsuspend, "sh wait")                                                                    \
    X(rt_sigtimedwait, "python")                                                                   \
    X(sigaltstack, "V8, python")                                                                   \
    X(restart_syscall, "the kernel's restart after a signal")                                      \
    X(pause, "sh")                                                                                 \
    X(alarm, "sh, coreutils timeout")                                                              \
    X(nanosleep, "sleep")                                                                          \
    X(clock_nanosleep, "glibc sleep")                                                              \
    X(clock_gettime, "vDSO fallback")                                                              \
    X(clock_getres, "node hrtime")                                                                 \
    X(gettimeofday, "vDSO fallback")                                                               \
    X(time, "vDSO fallback")                                                                       \
    X(getitimer, "python")                                                                         \
    X(setitimer, "python signal.setitimer")                                                        \
    X(timer_create, "glibc timer_create")                                                          \
    X(timer_settime, "glibc")                                                                      \
    X(timer_gettime, "glibc")                                                                      \
    X(timer_getoverrun, "glibc")                                                                   \
    X(timer_delete, "glibc")                                                                       \
    X(getrandom, "crypto, glibc, python")                                                          \
    /* sockets: socket(2) itself is refused; these act on socketpairs and inherited channels */    \
    X(socketpair, "libuv child stdio (AF_UNIX stream/seqpacket only, by a deny rule)")             \
    X(sendmsg, "libuv IPC")                                                                        \
    X(recvmsg, "libuv IPC")                                                                        \
    X(sendmmsg, "glibc")                                                                           \
    X(recvmmsg, "glibc")                                                                           \
    X(sendto, "libuv streams")                                                                     \
    X(recvfrom, "libuv streams")                                                                   \
    X(getsockopt, "libuv")                                                                         \
    X(setsockopt, "libuv")                                                                         \
    X(getsockname, "libuv pipe_open")                                                              \
    X(getpeername, "libuv")                                                                        \
    X(shutdown, "libuv stream end")

#endif /* DSHX_SYSCALL_ALLOW_H */

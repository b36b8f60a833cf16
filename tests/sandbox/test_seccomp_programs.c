/* The seccomp programs the launcher loads (generated at build time, seccomp_gen.c) are exactly
 * what libseccomp builds now from the deny rules and the reviewed table (seccomp_rules.c,
 * syscall_allow.h): read back from a launched process with PTRACE_SECCOMP_GET_FILTER (root only),
 * at the exec of the program, once the launcher has confined itself. */
#include "landlock_defs.h"
#include "seccomp_rules.h"

#include <criterion/criterion.h>
#include <sched.h>
#include <errno.h>
#include <linux/filter.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct program {
    struct sock_filter *insns;
    size_t len;
};

static struct program libseccomp_program(enum dshx_seccomp_filter filter)
{
    char err[256] = "";
    FILE *tmp = tmpfile();
    cr_assert(tmp);
    cr_assert_eq(dshx__seccomp_rules_export(filter, fileno(tmp), err, sizeof(err)), 0, "%s", err);
    long size = lseek(fileno(tmp), 0, SEEK_END);
    cr_assert_gt(size, 0);
    struct program p = {.insns = malloc((size_t)size), .len = (size_t)size / sizeof(struct sock_filter)};
    cr_assert(p.insns);
    cr_assert_eq(pread(fileno(tmp), p.insns, (size_t)size, 0), size);
    fclose(tmp);
    return p;
}

/* The filter at index (0 = the first one loaded) of a tracee in ptrace-stop. */
static struct program loaded_program(pid_t pid, unsigned long index)
{
    long n = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *)index, NULL);
    cr_assert_gt(n, 0, "filter %lu: %s", index, strerror(errno));
    struct program p = {.insns = calloc((size_t)n, sizeof(struct sock_filter)), .len = (size_t)n};
    cr_assert(p.insns);
    cr_assert_eq(ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *)index, p.insns), n);
    return p;
}

static void wait_trap(pid_t pid)
{
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP, "not stopped at exec (status %#x)", st);
}

/* A process in a network namespace of its own, for the launcher's --netns: its pid, or -1. The
 * caller kills it. */
static pid_t netns_holder(void)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(p[0]);
        char c = unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
        (void)!write(p[1], &c, 1);
        pause();
        _exit(0);
    }
    close(p[1]);
    char c = 'n';
    cr_assert_eq(read(p[0], &c, 1), 1);
    close(p[0]);
    cr_assert_eq(c, 'y', "unshare(CLONE_NEWNET) failed in the holder");
    return pid;
}

/* Launches /bin/true under ptrace with the launcher's options and compares the filters loaded
 * at the program's exec with libseccomp's build of the set starting at first. */
static void check_set(enum dshx_seccomp_filter first, const char *const *extra)
{
    if (geteuid() != 0)
        cr_skip_test("PTRACE_SECCOMP_GET_FILTER needs root");
    int abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1)
        cr_skip_test("no Landlock: the launcher refuses to run");
    char abi_arg[16];
    snprintf(abi_arg, sizeof(abi_arg), "%d", abi);
    const char *argv[24] = {DSH_TEST_LAUNCHER, "--mode", "read-only", "--landlock-abi", abi_arg};
    size_t n = 5;
    for (; extra && *extra; extra++)
        argv[n++] = *extra;
    argv[n++] = "--";
    argv[n++] = "/bin/true";
    argv[n] = NULL;
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* Stops at the launcher's exec, then at the program's, which runs under the filters. */
        if (chdir("/") < 0)
            _exit(126);
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execv(DSH_TEST_LAUNCHER, (char **)argv);
        _exit(127);
    }
    wait_trap(pid); /* the launcher's own exec: nothing loaded yet */
    errno = 0;
    cr_assert_eq(ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *)0, NULL), -1, "a filter before the launcher ran");
    cr_assert_eq(ptrace(PTRACE_CONT, pid, NULL, NULL), 0);
    wait_trap(pid); /* the program's exec */
    for (int f = 0; f < DSHX_SECCOMP_SET_SIZE; f++) {
        struct program want = libseccomp_program((enum dshx_seccomp_filter)(first + f));
        struct program got = loaded_program(pid, (unsigned long)f);
        cr_assert_eq(got.len, want.len, "filter %d: %zu instructions loaded, libseccomp builds %zu", f,
                     got.len, want.len);
        cr_assert_eq(memcmp(got.insns, want.insns, want.len * sizeof(struct sock_filter)), 0,
                     "filter %d differs from libseccomp's", f);
        free(want.insns);
        free(got.insns);
    }
    errno = 0;
    cr_assert_eq(ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *)(unsigned long)DSHX_SECCOMP_SET_SIZE, NULL),
                 -1, "more filters than the launcher's");
    cr_assert_eq(errno, ENOENT);
    cr_assert_eq(ptrace(PTRACE_DETACH, pid, NULL, NULL), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the program did not run (status %#x)", st);
}

Test(seccomp_programs, the_launcher_loads_what_libseccomp_builds_from_the_table, .timeout = 60)
{
    check_set(DSHX_SECCOMP_deny_rules, NULL);
}

/* The network allow-list's set (--netns): the inet deny rules and table. */
Test(seccomp_programs, the_allow_list_set_is_what_libseccomp_builds, .timeout = 60)
{
    if (geteuid() != 0)
        cr_skip_test("joining a network namespace needs root");
    pid_t holder = netns_holder();
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)holder);
    const char *extra[] = {"--namespaces", "--netns", path, "--net-port", "443", NULL};
    check_set(DSHX_SECCOMP_deny_rules_inet, extra);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
}

/* --netns naming the launcher's own namespace (the host's) fails closed, before the program. */
Test(seccomp_programs, the_launcher_refuses_the_hosts_own_network_namespace, .timeout = 60)
{
    if (geteuid() != 0)
        cr_skip_test("the mount layer needs root here");
    int abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 4)
        cr_skip_test("no Landlock network rules");
    char abi_arg[16], self[64];
    snprintf(abi_arg, sizeof(abi_arg), "%d", abi);
    snprintf(self, sizeof(self), "/proc/%d/ns/net", (int)getpid());
    int err[2];
    cr_assert_eq(pipe(err), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(err[1], 2);
        if (chdir("/") < 0)
            _exit(126);
        execl(DSH_TEST_LAUNCHER, DSH_TEST_LAUNCHER, "--mode", "read-only", "--landlock-abi", abi_arg,
              "--namespaces", "--netns", self, "--net-port", "443", "--", "/bin/true", (char *)NULL);
        _exit(127);
    }
    close(err[1]);
    char text[512] = "";
    size_t len = 0;
    ssize_t n;
    while (len < sizeof(text) - 1 && (n = read(err[0], text + len, sizeof(text) - 1 - len)) > 0)
        len += (size_t)n;
    close(err[0]);
    text[len] = '\0';
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 125, "status %#x: %s", st, text);
    cr_assert_str_eq(text, "dsh-sandbox-launch: confinement failed: network: the namespace given is the "
                           "launcher's own\n");
}

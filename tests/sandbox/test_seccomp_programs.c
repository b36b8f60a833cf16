/* The seccomp programs the launcher loads (generated at build time, seccomp_gen.c) are exactly
 * what libseccomp builds now from the deny rules and the reviewed table (seccomp_rules.c,
 * syscall_allow.h): read back from a launched process with PTRACE_SECCOMP_GET_FILTER (root only),
 * at the exec of the program, once the launcher has confined itself. */
#include "landlock_defs.h"
#include "seccomp_rules.h"

#include <criterion/criterion.h>
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

Test(seccomp_programs, the_launcher_loads_what_libseccomp_builds_from_the_table, .timeout = 60)
{
    if (geteuid() != 0)
        cr_skip_test("PTRACE_SECCOMP_GET_FILTER needs root");
    int abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1)
        cr_skip_test("no Landlock: the launcher refuses to run");
    char abi_arg[16];
    snprintf(abi_arg, sizeof(abi_arg), "%d", abi);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* Stops at the launcher's exec, then at the program's, which runs under the filters. */
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execl(DSH_TEST_LAUNCHER, DSH_TEST_LAUNCHER, "--mode", "read-only", "--landlock-abi", abi_arg,
              "--", "/bin/true", (char *)NULL);
        _exit(127);
    }
    wait_trap(pid); /* the launcher's own exec: nothing loaded yet */
    errno = 0;
    cr_assert_eq(ptrace(PTRACE_SECCOMP_GET_FILTER, pid, (void *)0, NULL), -1, "a filter before the launcher ran");
    cr_assert_eq(ptrace(PTRACE_CONT, pid, NULL, NULL), 0);
    wait_trap(pid); /* the program's exec */
    for (int f = 0; f < DSHX_SECCOMP_SET_SIZE; f++) {
        struct program want = libseccomp_program((enum dshx_seccomp_filter)f);
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

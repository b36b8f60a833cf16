/* The launcher's seccomp filters, built with libseccomp at build time (seccomp_gen.c writes them
 * into the launcher as BPF programs; seccomp_filter.c loads them). Two are stacked:
 *   1. the allow table (syscall_allow.h): every syscall number it does not list answers ENOSYS,
 *      so a kernel interface nobody reviewed stays closed;
 *   2. the deny rules: the kernel surfaces a confined program must never reach (network,
 *      io_uring, tracing, namespaces and mounts, bpf/perf/keys/userfaultfd, terminal injection,
 *      set-user-ID/set-group-ID modes and extended attributes), with their own errnos and
 *      argument checks.
 * The kernel runs every filter and keeps the strongest action (an errno beats allow), so the
 * argument rules of filter 2 still refuse what the table allows. Filter 2 loads first (loading
 * the table first would refuse the seccomp(2) call that loads the rules), and the table filter
 * repeats the unconditional deny rules with their errnos, so a syscall such as ptrace answers
 * EPERM, not the table's ENOSYS, whichever filter the kernel asks first.
 * Denials return an errno so programs get a clean error, not a crash; a foreign-architecture
 * entry (int 0x80, x32) kills the process. The table is reviewed for x86_64 only: elsewhere the
 * launcher refuses to run (confinement failed), it never runs a program without it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_TMPFILE */
#endif
#include "seccomp_rules.h"
#include "syscall_allow.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

struct rule {
    const char *name;
    int err;
};

/* Unconditional denials. io_uring answers ENOSYS so libuv falls back to its thread pool; clone3
 * and openat2 answer ENOSYS because their flags (openat2: its mode too) live in memory seccomp
 * cannot read, and the C libraries then fall back to clone(2) and openat(2), whose arguments the
 * filter below does inspect. Extended attributes: seccomp cannot read the name either, so it
 * cannot tell security.capability (a file capability) or system.posix_acl_* (access for other
 * users) from user.*; a program sets and removes none, with EPERM (what the kernel answers a
 * process without capabilities for security.* and trusted.* already; cp -a and Python's
 * shutil.copystat carry on without them). */
static const struct rule denied[] = {
    {"socket", EACCES},
    {"io_uring_setup", ENOSYS},
    {"io_uring_enter", ENOSYS},
    {"io_uring_register", ENOSYS},
    {"clone3", ENOSYS},
    {"openat2", ENOSYS},
    {"setxattr", EPERM},
    {"lsetxattr", EPERM},
    {"fsetxattr", EPERM},
    {"removexattr", EPERM},
    {"lremovexattr", EPERM},
    {"fremovexattr", EPERM},
    {"ptrace", EPERM},
    {"process_vm_readv", EPERM},
    {"process_vm_writev", EPERM},
    {"pidfd_getfd", EPERM},
    {"unshare", EPERM},
    {"setns", EPERM},
    {"mount", EPERM},
    {"umount2", EPERM},
    {"pivot_root", EPERM},
    {"chroot", EPERM},
    {"move_mount", EPERM},
    {"open_tree", EPERM},
    {"fsopen", EPERM},
    {"fsconfig", EPERM},
    {"fsmount", EPERM},
    {"fspick", EPERM},
    {"mount_setattr", EPERM},
    {"bpf", EPERM},
    {"perf_event_open", EPERM},
    {"keyctl", EPERM},
    {"add_key", EPERM},
    {"request_key", EPERM},
    {"userfaultfd", EPERM},
    {"open_by_handle_at", EPERM},
    {"name_to_handle_at", EPERM},
    {"kexec_load", EPERM},
    {"kexec_file_load", EPERM},
    {"init_module", EPERM},
    {"finit_module", EPERM},
    {"delete_module", EPERM},
    {"reboot", EPERM},
    {"swapon", EPERM},
    {"swapoff", EPERM},
    {"acct", EPERM},
    {"quotactl", EPERM},
    {"iopl", EPERM},
    {"ioperm", EPERM},
    {"syslog", EPERM},
    {"vhangup", EPERM},
    {"settimeofday", EPERM},
    {"clock_settime", EPERM},
    {"clock_adjtime", EPERM},
    {"lookup_dcookie", EPERM},
};

static const unsigned long namespace_flags[] = {
    CLONE_NEWNS,   CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
    CLONE_NEWUSER, CLONE_NEWPID,    CLONE_NEWNET,
};

/* Every call that sets a file's mode, and which argument holds it. A mode with S_ISUID or S_ISGID
 * is refused with EPERM whatever the uid mapping: a set-id file a program leaves in a writable
 * root runs with its on-disk owner's ids for whoever executes it outside (with a dedicated
 * identity on a root host, root's; host-abi/ABI.md, "Roots"). The kernel honours the mode of
 * open/openat only with O_CREAT or O_TMPFILE (flags_arg) and ignores it otherwise, so those are
 * refused only then. mkdir's set-id bits are dropped by the kernel today; they are refused anyway
 * so that the rule does not rest on that. fchmodat2 is outside the reviewed table (ENOSYS, glibc
 * falls back to fchmodat); its rule keeps it closed should it ever be allowed. A name libseccomp
 * does not know is skipped: the table cannot allow it either. */
static const struct mode_rule {
    const char *name;
    unsigned mode_arg;
    int flags_arg; /* -1: the call always uses the mode */
} mode_rules[] = {
    {"chmod", 1, -1},   {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"fchmodat2", 2, -1},
    {"creat", 1, -1},   {"mkdir", 1, -1},  {"mkdirat", 2, -1},  {"mknod", 1, -1},
    {"mknodat", 2, -1}, {"open", 2, 1},    {"openat", 3, 2},
};

static const unsigned long set_id_bits[] = {S_ISUID, S_ISGID};
/* O_TMPFILE includes O_DIRECTORY; the bit of its own is the one that makes the call create. */
static const unsigned long creating_flags[] = {O_CREAT, O_TMPFILE & ~O_DIRECTORY};

static int add(scmp_filter_ctx ctx, int err, int nr, unsigned argc, const struct scmp_arg_cmp *cmp)
{
    return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(err), nr, argc, cmp);
}

/* The unconditional denials, except those whose errno is already the filter's default (libseccomp
 * refuses a rule that repeats the default action). */
static int add_denied(scmp_filter_ctx ctx, int default_errno, bool inet, char *ret_err, size_t errlen)
{
    for (size_t i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
        int nr = seccomp_syscall_resolve_name(denied[i].name);
        if (nr == __NR_SCMP_ERROR || denied[i].err == default_errno)
            continue; /* not a syscall on this architecture, or denied already */
        if (inet && nr == SCMP_SYS(socket))
            continue; /* the inet set checks its arguments instead (add_inet_socket) */
        int rc = add(ctx, denied[i].err, nr, 0, NULL);
        if (rc < 0) {
            snprintf(ret_err, errlen, "seccomp: rule %s: %s", denied[i].name, strerror(-rc));
            return rc;
        }
    }
    return 0;
}

/* The network allow-list's socket(2): AF_INET, SOCK_STREAM or SOCK_DGRAM (flags aside), protocol
 * 0, TCP or UDP; everything else EACCES as in the closed set: no AF_INET6, AF_UNIX, netlink, raw
 * or packet socket, no ICMP "ping" socket. A value with bits above the int's is refused too (the
 * comparisons are on the whole register). */
static int add_inet_socket(scmp_filter_ctx ctx)
{
    struct scmp_arg_cmp not_inet = SCMP_A0(SCMP_CMP_NE, AF_INET, 0);
    int rc = add(ctx, EACCES, SCMP_SYS(socket), 1, &not_inet);
    for (int type = 0; rc == 0 && type < 16; type++) {
        if (type == SOCK_STREAM || type == SOCK_DGRAM)
            continue;
        struct scmp_arg_cmp cmp[2] = {SCMP_A0(SCMP_CMP_EQ, AF_INET, 0),
                                      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (scmp_datum_t)type)};
        rc = add(ctx, EACCES, SCMP_SYS(socket), 2, cmp);
    }
    /* The type's upper bits (beyond SOCK_NONBLOCK | SOCK_CLOEXEC) the kernel refuses itself. */
    for (int proto = 1; rc == 0 && proto <= IPPROTO_UDP; proto++) {
        if (proto == IPPROTO_TCP || proto == IPPROTO_UDP)
            continue;
        struct scmp_arg_cmp cmp[2] = {SCMP_A0(SCMP_CMP_EQ, AF_INET, 0),
                                      SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)proto)};
        rc = add(ctx, EACCES, SCMP_SYS(socket), 2, cmp);
    }
    if (rc == 0) {
        struct scmp_arg_cmp cmp[2] = {SCMP_A0(SCMP_CMP_EQ, AF_INET, 0),
                                      SCMP_A2(SCMP_CMP_GT, IPPROTO_UDP)};
        rc = add(ctx, EACCES, SCMP_SYS(socket), 2, cmp);
    }
    return rc;
}

static int build_set(scmp_filter_ctx ctx, bool inet, char *ret_err, size_t errlen)
{
    int rc = add_denied(ctx, 0, inet, ret_err, errlen);
    if (rc < 0)
        return rc;
    if (inet && (rc = add_inet_socket(ctx)) < 0)
        goto fail;
    /* socketpair: AF_UNIX stream/seqpacket only (libuv needs them for child stdio). */
    struct scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0);
    if ((rc = add(ctx, EACCES, SCMP_SYS(socketpair), 1, &not_unix)) < 0)
        goto fail;
    for (int type = 0; type < 16; type++) {
        if (type == SOCK_STREAM || type == SOCK_SEQPACKET)
            continue;
        struct scmp_arg_cmp cmp[2] = {SCMP_A0(SCMP_CMP_EQ, AF_UNIX, 0),
                                      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (scmp_datum_t)type)};
        if ((rc = add(ctx, EACCES, SCMP_SYS(socketpair), 2, cmp)) < 0)
            goto fail;
    }
    /* clone(2) creating any namespace. */
    for (size_t i = 0; i < sizeof(namespace_flags) / sizeof(namespace_flags[0]); i++) {
        struct scmp_arg_cmp cmp =
            SCMP_A0(SCMP_CMP_MASKED_EQ, namespace_flags[i], namespace_flags[i]);
        if ((rc = add(ctx, EPERM, SCMP_SYS(clone), 1, &cmp)) < 0)
            goto fail;
    }
    /* Set-id modes (mode_rules above). The masks are 32-bit, so the upper half of a register
     * holding an int argument is not compared. */
    for (size_t i = 0; i < sizeof(mode_rules) / sizeof(mode_rules[0]); i++) {
        const struct mode_rule *m = &mode_rules[i];
        int nr = seccomp_syscall_resolve_name(m->name);
        if (nr == __NR_SCMP_ERROR)
            continue;
        for (size_t b = 0; b < 2; b++) {
            struct scmp_arg_cmp mode = {m->mode_arg, SCMP_CMP_MASKED_EQ, set_id_bits[b],
                                        set_id_bits[b]};
            if (m->flags_arg < 0) {
                if ((rc = add(ctx, EPERM, nr, 1, &mode)) < 0)
                    goto fail;
                continue;
            }
            for (size_t f = 0; f < 2; f++) {
                struct scmp_arg_cmp cmp[2] = {{(unsigned)m->flags_arg, SCMP_CMP_MASKED_EQ,
                                               creating_flags[f], creating_flags[f]},
                                              mode};
                if ((rc = add(ctx, EPERM, nr, 2, cmp)) < 0)
                    goto fail;
            }
        }
    }
    /* Terminal input injection. The command is an int: compare the low 32 bits only. */
    static const unsigned long tty_cmds[] = {TIOCSTI, TIOCLINUX};
    for (size_t i = 0; i < 2; i++) {
        struct scmp_arg_cmp cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, tty_cmds[i]);
        if ((rc = add(ctx, EPERM, SCMP_SYS(ioctl), 1, &cmp)) < 0)
            goto fail;
    }
    return 0;
fail:
    snprintf(ret_err, errlen, "seccomp: argument rule: %s", strerror(-rc));
    return rc;
}

#define ALLOW_NAME(name, why) #name,
static const char *const allowed[] = {DSHX_SYSCALL_ALLOW_TABLE(ALLOW_NAME)};
#undef ALLOW_NAME

/* A row libseccomp cannot resolve stays denied (fail closed). A row that is also a deny rule
 * makes libseccomp refuse the second rule: the build then fails instead of guessing. */
static int build(scmp_filter_ctx ctx, char *ret_err, size_t errlen)
{
    return build_set(ctx, false, ret_err, errlen);
}

static int build_inet(scmp_filter_ctx ctx, char *ret_err, size_t errlen)
{
    return build_set(ctx, true, ret_err, errlen);
}

static int build_table(scmp_filter_ctx ctx, bool inet, char *ret_err, size_t errlen)
{
    int rc = add_denied(ctx, ENOSYS, inet, ret_err, errlen);
    /* The allow-list's additions to the reviewed table: socket(2) (its arguments are the deny
     * set's), connect(2) (Landlock limits TCP to the listeners' ports; the namespace holds
     * nothing else) and bind(2), which Node's UDP sockets make before they send: a UDP port of
     * the range's own namespace, where the proxy accounts every datagram that is no question to
     * its resolver; a TCP bind stays refused by Landlock (no rule grants one), and with listen(2)
     * and accept(2) refused a bound socket of any kind takes no connection. */
    if (rc == 0 && inet && ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 0)) < 0 ||
                            (rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(connect), 0)) < 0 ||
                            (rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bind), 0)) < 0))
        snprintf(ret_err, errlen, "seccomp: allow socket, connect, bind: %s", strerror(-rc));
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, allowed[i]);
        if (nr == __NR_SCMP_ERROR)
            continue;
        if (rc == 0 && (rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0)) < 0)
            snprintf(ret_err, errlen, "seccomp: allow %s: %s", allowed[i], strerror(-rc));
    }
    return rc;
}

static int build_allow_table(scmp_filter_ctx ctx, char *ret_err, size_t errlen)
{
    return build_table(ctx, false, ret_err, errlen);
}

static int build_allow_table_inet(scmp_filter_ctx ctx, char *ret_err, size_t errlen)
{
    return build_table(ctx, true, ret_err, errlen);
}

int dshx__seccomp_rules_export(enum dshx_seccomp_filter filter, int fd, char *ret_err, size_t errlen)
{
    static const struct {
        uint32_t default_action;
        int (*rules)(scmp_filter_ctx, char *, size_t);
    } filters[] = {
        [DSHX_SECCOMP_deny_rules] = {SCMP_ACT_ALLOW, build},
        [DSHX_SECCOMP_allow_table] = {SCMP_ACT_ERRNO(ENOSYS), build_allow_table},
        [DSHX_SECCOMP_deny_rules_inet] = {SCMP_ACT_ALLOW, build_inet},
        [DSHX_SECCOMP_allow_table_inet] = {SCMP_ACT_ERRNO(ENOSYS), build_allow_table_inet},
    };
    scmp_filter_ctx ctx = seccomp_init(filters[filter].default_action);
    if (!ctx) {
        snprintf(ret_err, errlen, "seccomp: init failed");
        return -ENOMEM;
    }
    /* Foreign-architecture entry points (int 0x80, x32) would bypass every rule: kill instead. */
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    /* A binary tree over the syscall numbers instead of a linear chain: the kernel emulates the
     * program for every syscall number when it loads it (its allow cache), and a syscall the cache
     * does not answer walks a few comparisons instead of up to a few hundred. */
    if (rc == 0)
        rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (rc == 0)
        rc = filters[filter].rules(ctx, ret_err, errlen);
    else
        snprintf(ret_err, errlen, "seccomp: bad-arch action: %s", strerror(-rc));
    if (rc == 0 && (rc = seccomp_export_bpf(ctx, fd)) < 0)
        snprintf(ret_err, errlen, "seccomp: export: %s", strerror(-rc));
    seccomp_release(ctx);
    return rc;
}

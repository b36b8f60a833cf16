/* The launcher's seccomp filters as libseccomp builds them from the deny rules and the reviewed
 * table (seccomp_rules.c). Used at build time by seccomp_gen.c, which embeds the programs in the
 * launcher, and by the test that the embedded programs are current; the launcher itself does not
 * link libseccomp. */
#ifndef DSHX_SECCOMP_RULES_H
#define DSHX_SECCOMP_RULES_H

#include <stddef.h>

/* The filters in the order the launcher loads them (see seccomp_rules.c for why). */
#define DSHX_SECCOMP_FILTER_TABLE(X)                                                              \
    X(deny_rules)  /* default allow: the deny rules with their errnos and argument checks */     \
    X(allow_table) /* default ENOSYS: syscall_allow.h, plus the unconditional deny rules */      \
    X(deny_rules_inet)  /* the same for the network allow-list: socket(2) only for TCP and */    \
    X(allow_table_inet) /* UDP over IPv4 (the range's namespace holds only its proxy) */

/* The launcher loads one set of DSHX_SECCOMP_SET_SIZE filters, in order: the closed set, or the
 * inet set for a run with a network allow-list. */
#define DSHX_SECCOMP_SET_SIZE 2

enum dshx_seccomp_filter {
#define DSHX_SECCOMP_FILTER_ENUM(name) DSHX_SECCOMP_##name,
    DSHX_SECCOMP_FILTER_TABLE(DSHX_SECCOMP_FILTER_ENUM)
#undef DSHX_SECCOMP_FILTER_ENUM
    DSHX_SECCOMP_FILTER_COUNT
};

/* Writes the filter's classic BPF program (struct sock_filter[], host byte order, as the kernel
 * takes it) to fd. 0 or -errno, with a reason in ret_err. */
int dshx__seccomp_rules_export(enum dshx_seccomp_filter filter, int fd, char *ret_err, size_t errlen);

#endif /* DSHX_SECCOMP_RULES_H */

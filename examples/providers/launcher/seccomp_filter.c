/* Loads the launcher's seccomp filters: the BPF programs seccomp_gen.c generated at build time
 * from seccomp_rules.c (the deny rules, then the reviewed table of syscall_allow.h), in that
 * order, with seccomp(2) as libseccomp's seccomp_load would (no flags, after no_new_privs). The
 * test that they are current: tests/sandbox/test_seccomp_programs.c. */
#include "seccomp_filter.h"
#include "seccomp_programs.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int dshx__seccomp_apply(bool inet, char *ret_err, size_t errlen)
{
#if DSHX_SECCOMP_PROGRAM_COUNT > 0
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "seccomp: no_new_privs: %s", strerror(e));
        return -e;
    }
    for (size_t i = 0; i < DSHX_SECCOMP_PROGRAM_COUNT; i++) {
        if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, inet ? &dshx__seccomp_programs_inet[i] : &dshx__seccomp_programs[i]) < 0) {
            int e = errno;
            snprintf(ret_err, errlen, "seccomp: load: %s", strerror(e));
            return -e;
        }
    }
    return 0;
#else
    (void)inet;
    snprintf(ret_err, errlen, "seccomp: no reviewed syscall table for this architecture");
    return -ENOTSUP;
#endif
}

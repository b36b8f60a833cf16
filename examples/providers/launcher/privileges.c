/* Launcher hygiene: inherited fds, resource limits, capabilities. */
#include "privileges.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_close_range
#define __NR_close_range 436
#endif

#define NOFILE_LIMIT 4096
#define FSIZE_LIMIT (1ULL << 30) /* 1 GiB per file */

int dshx__close_inherited_fds(void)
{
    if (syscall(__NR_close_range, 4U, ~0U, 0U) == 0)
        return 0;
    /* Pre-5.9 kernels: close what the limit allows. */
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = 4; fd < (max > 0 ? max : 65536); fd++)
        (void)close((int)fd);
    return 0;
}

static int cap_limit(int resource, rlim_t value, const char *name, char *ret_err, size_t errlen)
{
    struct rlimit cur;
    if (getrlimit(resource, &cur) < 0)
        cur.rlim_max = RLIM_INFINITY;
    rlim_t v = value;
    if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < v)
        v = cur.rlim_max; /* never try to raise a limit */
    struct rlimit rl = {.rlim_cur = v, .rlim_max = v};
    if (setrlimit(resource, &rl) < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "rlimit %s: %s", name, strerror(e));
        return -e;
    }
    return 0;
}

int dshx__set_rlimits(uint64_t nproc, char *ret_err, size_t errlen)
{
    int rc = cap_limit(RLIMIT_CORE, 0, "core", ret_err, errlen);
    if (rc == 0)
        rc = cap_limit(RLIMIT_NOFILE, NOFILE_LIMIT, "nofile", ret_err, errlen);
    if (rc == 0)
        rc = cap_limit(RLIMIT_FSIZE, FSIZE_LIMIT, "fsize", ret_err, errlen);
    /* RLIMIT_NPROC binds only non-root users; the host passes it when we run in a user
     * namespace of our own, where it counts this range alone. */
    if (rc == 0 && nproc > 0)
        rc = cap_limit(RLIMIT_NPROC, (rlim_t)nproc, "nproc", ret_err, errlen);
    return rc;
}

int dshx__drop_capabilities(const struct dshx__identity *id, char *ret_err, size_t errlen)
{
    /* Lock "root gets capabilities on exec" off before the bits that allow it disappear. */
    unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                         SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                         SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    (void)prctl(PR_SET_SECUREBITS, bits, 0, 0, 0); /* needs CAP_SETPCAP; harmless without */
    for (int cap = 0; cap < 64; cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
            break; /* past the kernel's last capability */
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EPERM) {
            int e = errno;
            snprintf(ret_err, errlen, "capabilities: drop bounding %d: %s", cap, strerror(e));
            return -e;
        }
    }
    (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    /* SECBIT_NO_SETUID_FIXUP keeps CAP_SETUID/CAP_SETGID across the switch; capset drops them. */
    if (id->set) {
        int rc = dshx__switch_identity(id, ret_err, errlen);
        if (rc < 0)
            return rc;
    }
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capset, &hdr, data) < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "capabilities: capset: %s", strerror(e));
        return -e;
    }
    /* Verify: without CAP_SETPCAP the bounding set may survive, but nothing may stay permitted. */
    if (syscall(SYS_capget, &hdr, data) < 0 || data[0].permitted || data[1].permitted ||
        data[0].effective || data[1].effective) {
        snprintf(ret_err, errlen, "capabilities: still held after capset");
        return -EPERM;
    }
    return 0;
}

/* Landlock: apply every right the chosen ABI knows (the kernel's ABI: shared/landlock_probe.c). */
#include "landlock.h"
#include "landlock_defs.h"
#include "landlock_probe.h"
#include "world.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define ACCESS_FS_ABI1 ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define ACCESS_FILE                                                                                \
    (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |   \
     LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define ACCESS_READ                                                                                \
    (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* Device nodes are never created and device ioctls never allowed, even in writable roots. */
#define ACCESS_WRITE_DENIED                                                                        \
    (LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_IOCTL_DEV)

static uint64_t handled_fs(int abi)
{
    uint64_t r = ACCESS_FS_ABI1;
    if (abi >= 2)
        r |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        r |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return r;
}

static size_t attr_size(int abi)
{
    if (abi >= 6)
        return sizeof(struct dshx__landlock_ruleset_attr);
    if (abi >= 4)
        return offsetof(struct dshx__landlock_ruleset_attr, scoped);
    return offsetof(struct dshx__landlock_ruleset_attr, handled_access_net);
}

/* Adds one path-beneath rule. Missing optional paths are skipped (not every system has /lib32). */
static int add_rule(int ruleset, const char *path, uint64_t allowed, uint64_t handled,
                    bool required, char *ret_err, size_t errlen)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (!required && (e == ENOENT || e == ENOTDIR || e == EACCES))
            return 0;
        snprintf(ret_err, errlen, "landlock: open %s: %s", path, strerror(e));
        return -e;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        snprintf(ret_err, errlen, "landlock: stat %s: %s", path, strerror(e));
        return -e;
    }
    allowed &= handled;
    if (!S_ISDIR(st.st_mode))
        allowed &= ACCESS_FILE; /* the kernel rejects directory-only rights on files */
    int rc = 0;
    if (allowed) {
        struct landlock_path_beneath_attr pb = {.allowed_access = allowed, .parent_fd = fd};
        if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0) {
            rc = -errno;
            snprintf(ret_err, errlen, "landlock: rule for %s: %s", path, strerror(errno));
        }
    }
    close(fd);
    return rc;
}

static int add_rules(int ruleset, const char *const *paths, uint64_t allowed, uint64_t handled,
                     bool required, char *ret_err, size_t errlen)
{
    for (const char *const *p = paths; p && *p; p++) {
        int rc = add_rule(ruleset, *p, allowed, handled, required, ret_err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int dshx__landlock_apply(const struct dshx__landlock_plan *plan, char *ret_err, size_t errlen)
{
    int kernel_abi = dshx__landlock_probe_abi();
    if (kernel_abi < 1 || plan->abi < 1) {
        snprintf(ret_err, errlen, "landlock: not available");
        return -EOPNOTSUPP;
    }
    /* The host promised this ABI in its report; a weaker kernel must fail, never downgrade. */
    if (kernel_abi < plan->abi) {
        snprintf(ret_err, errlen, "landlock: kernel ABI %d below the required %d", kernel_abi,
                 plan->abi);
        return -EOPNOTSUPP;
    }
    int abi = plan->abi > DSHX_LANDLOCK_ABI_KNOWN ? DSHX_LANDLOCK_ABI_KNOWN : plan->abi;
    uint64_t handled = handled_fs(abi);
    struct dshx__landlock_ruleset_attr attr = {.handled_access_fs = handled};
    if (abi >= 4) /* no rules: every TCP bind and connect is denied */
        attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
    if (abi >= 6)
        attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;

    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size(abi), 0);
    if (ruleset < 0) {
        int e = errno;
        snprintf(ret_err, errlen, "landlock: create ruleset: %s", strerror(e));
        return -e;
    }
    uint64_t write = handled & ~ACCESS_WRITE_DENIED;
    uint64_t dev_rw = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE;
    int rc =
        add_rules(ruleset, dshx__world_system_roots, ACCESS_READ, handled, false, ret_err, errlen);
    if (rc == 0)
        rc = add_rules(ruleset, dshx__world_devices_rw, dev_rw, handled, false, ret_err, errlen);
    if (rc == 0)
        rc = add_rules(ruleset, dshx__world_devices_ro, LANDLOCK_ACCESS_FS_READ_FILE, handled,
                       false, ret_err, errlen);
    if (rc == 0)
        rc = add_rules(ruleset, plan->ro, ACCESS_READ, handled, true, ret_err, errlen);
    if (rc == 0)
        rc = add_rules(ruleset, plan->rw, write, handled, true, ret_err, errlen);
    /* The network allow-list: connect reaches exactly the ports of the range's listeners (the
     * range's own network namespace holds nothing else). */
    for (size_t i = 0; rc == 0 && abi >= 4 && i < plan->nconnect_ports; i++) {
        struct dshx__landlock_net_port_attr np = {.allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP,
                                                  .port = plan->connect_ports[i]};
        if (syscall(__NR_landlock_add_rule, ruleset, DSHX_LANDLOCK_RULE_NET_PORT, &np, 0) < 0) {
            rc = -errno;
            snprintf(ret_err, errlen, "landlock: rule for TCP port %u: %s", plan->connect_ports[i],
                     strerror(errno));
        }
    }
    if (rc == 0 && plan->nconnect_ports && abi < 4) {
        rc = -EOPNOTSUPP;
        snprintf(ret_err, errlen, "landlock: TCP port rules need ABI 4");
    }
    if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        rc = -errno;
        snprintf(ret_err, errlen, "no_new_privs: %s", strerror(errno));
    }
    if (rc == 0) {
        /* Log denials of the program we are about to exec, not only of the launcher. */
        unsigned flags = abi >= 7 ? LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON : 0;
        if (syscall(__NR_landlock_restrict_self, ruleset, flags) < 0) {
            rc = -errno;
            snprintf(ret_err, errlen, "landlock: restrict self: %s", strerror(errno));
        }
    }
    close(ruleset);
    return rc;
}

/* Kernel facts, probed once per services instance at create (kernel_probe.c). */
#ifndef DSHX_KERNEL_PROBE_H
#define DSHX_KERNEL_PROBE_H

#include <stdbool.h>
#include <stdint.h>

struct dshx__kernel {
    int landlock_abi;    /* 0 when Landlock is missing */
    bool seccomp;        /* seccomp filters with SECCOMP_RET_ERRNO */
    bool root;           /* euid 0 */
    bool userns;         /* a range gets a user namespace of its own for its namespaces: the host
                            is not root, or root without CAP_SYS_ADMIN (a container's) */
    bool pid_ns;         /* the supervisor can own a PID namespace */
    bool namespaces;     /* the launcher can build mount/net/ipc namespaces with read-only mounts */
    bool pid_max_per_ns; /* kernel >= 6.14 and /proc/sys writable: pid_max bounds one PID namespace */
    unsigned cgroup_controllers; /* bit set (range_cgroup.h controllers) a new range can get */
    uint64_t file_max;           /* fs.file-max; 0 when unreadable (range_cgroup.h: nofile rule) */
};

int dshx__kernel_probe(struct dshx__kernel *ret_kernel);

#endif /* DSHX_KERNEL_PROBE_H */

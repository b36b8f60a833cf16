/* Landlock in the launcher (landlock.c): every right of the chosen ABI, on the world's system
 * roots and devices and the plan's roots. Returns 0 or -errno with a short reason in ret_err; runs
 * single-threaded before execve, like every confinement step of the launcher. */
#ifndef DSHX_LANDLOCK_H
#define DSHX_LANDLOCK_H

#include <stddef.h>

struct dshx__landlock_plan {
    int abi;               /* the ABI level to enforce, 1..DSHX_LANDLOCK_ABI_KNOWN */
    const char *const *ro; /* read + execute beneath (files or directories), must exist */
    const char *const *rw; /* every filesystem right beneath, must exist */
    const unsigned short *connect_ports; /* TCP ports connect may reach (network allow-list) */
    size_t nconnect_ports;
};

int dshx__landlock_apply(const struct dshx__landlock_plan *plan, char *ret_err, size_t errlen);

#endif /* DSHX_LANDLOCK_H */

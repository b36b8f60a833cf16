/* Confinement steps of dsh-sandbox-launch. Each returns 0 or -errno and, on failure, writes a
 * short reason into ret_err. They run in the launcher, single-threaded, before execve. */
#ifndef DSHX_LAUNCHER_H
#define DSHX_LAUNCHER_H

#include <stddef.h>
#include <stdint.h>

struct dshx__landlock_plan {
    int abi;               /* the ABI level to enforce, 1..DSHX_LANDLOCK_ABI_KNOWN */
    const char *const *ro; /* read + execute beneath (files or directories), must exist */
    const char *const *rw; /* every filesystem right beneath, must exist */
};

int dshx__landlock_probe_abi(void); /* also used by the library; 0 when missing */
int dshx__landlock_apply(const struct dshx__landlock_plan *plan, char *ret_err, size_t errlen);

int dshx__seccomp_apply(char *ret_err, size_t errlen);

/* New mount, network and IPC namespaces; every mount read-only except the rw roots; a private
 * /proc when the launcher runs in a PID namespace of its own. */
int dshx__mount_layer_apply(const char *const *rw, char *ret_err, size_t errlen);

int dshx__close_inherited_fds(void);                                 /* all but 0..3 */
int dshx__set_rlimits(uint64_t nproc, char *ret_err, size_t errlen); /* nproc 0 = leave alone */
int dshx__drop_capabilities(char *ret_err, size_t errlen); /* bounding, ambient, securebits, sets */

#endif /* DSHX_LAUNCHER_H */

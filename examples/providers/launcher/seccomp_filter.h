/* The launcher's seccomp filters (seccomp_filter.c): the programs gen/ built, loaded last before
 * execve. 0 or -errno with a short reason in ret_err. */
#ifndef DSHX_SECCOMP_FILTER_H
#define DSHX_SECCOMP_FILTER_H

#include <stdbool.h>
#include <stddef.h>

/* inet: the set of a run with a network allow-list (AF_INET TCP and UDP sockets). */
int dshx__seccomp_apply(bool inet, char *ret_err, size_t errlen);

#endif /* DSHX_SECCOMP_FILTER_H */

/* The launcher's seccomp filters (seccomp_filter.c): the programs gen/ built, loaded last before
 * execve. 0 or -errno with a short reason in ret_err. */
#ifndef DSHX_SECCOMP_FILTER_H
#define DSHX_SECCOMP_FILTER_H

#include <stddef.h>

int dshx__seccomp_apply(char *ret_err, size_t errlen);

#endif /* DSHX_SECCOMP_FILTER_H */

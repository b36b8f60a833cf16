/* Launcher hygiene (privileges.c): inherited fds, resource limits, capabilities. Each step returns
 * 0 or -errno, with a short reason in ret_err where it takes one. */
#ifndef DSHX_PRIVILEGES_H
#define DSHX_PRIVILEGES_H

#include "identity.h"

#include <stddef.h>
#include <stdint.h>

int dshx__close_inherited_fds(void);                                 /* all but 0..3 */
int dshx__set_rlimits(uint64_t nproc, char *ret_err, size_t errlen); /* nproc 0 = leave alone */
/* Bounding, ambient, securebits, then the identity switch (when id->set), then the sets. */
int dshx__drop_capabilities(const struct dshx__identity *id, char *ret_err, size_t errlen);

#endif /* DSHX_PRIVILEGES_H */

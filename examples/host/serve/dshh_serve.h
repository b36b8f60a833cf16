/* `dsh headless --serve` (dshh_serve.c). */
#ifndef DSHH_SERVE_H
#define DSHH_SERVE_H

#include "dshh_host.h"
#include "dshh_profile.h"

/* Serves JSON lines on stdin/stdout until EOF or a stop signal; returns the exit status. profile
 * gives the background runs' bounds (the dsh-mcp-bindings row's maxBackgroundRuns, maxBackgroundMs). */
int dshh__cmd_serve(struct dshh_host *host, const struct dshh_profile *profile);
/* Serves each client of the Unix socket at address ("unix:PATH", made 0600; removed at the end)
 * as its own session, like stdin/stdout, until a stop signal; returns the exit status (2 when
 * the socket cannot be made). */
int dshh__cmd_serve_listen(struct dshh_host *host, const struct dshh_profile *profile, const char *address);

#endif

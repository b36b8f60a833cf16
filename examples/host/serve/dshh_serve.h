/* `dsh headless --serve` (dshh_serve.c). */
#ifndef DSHH_SERVE_H
#define DSHH_SERVE_H

#include "dshh_host.h"

/* Serves JSON lines on stdin/stdout until EOF or a stop signal; returns the exit status. */
int dshh__cmd_serve(struct dshh_host *host);

#endif

/* Starting runs (dshh_request.c): resolve() then run(), and the cwd each run resolved to. */
#ifndef DSHH_REQUEST_H
#define DSHH_REQUEST_H

#include "dshh_host.h"

/* resolve() then run(). Prints nothing; fills err (message) on failure and returns the status. */
int dshh__start_run(struct dshh_host *host, const char *request_json, size_t request_len,
                    const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run,
                    struct dsh_error *err);
/* The resolved cwd of a recent run started through dshh__start_run (NULL when unknown): the
 * demo tool registerImage resolves relative paths against it. */
const char *dshh__run_cwd(dsh_run_id run);

#endif

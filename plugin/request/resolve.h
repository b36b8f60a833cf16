/* resolve(request) -> spec: fills every default a run needs (host-abi/schemas/request.json and
 * spec.json). */
#ifndef PTC_RESOLVE_H
#define PTC_RESOLVE_H

#include "ptc_host.h"

int ptc__resolve(struct ptc_host *host, const char *request_json, size_t request_len, char **ret_spec_json,
                 size_t *ret_spec_len, struct dsh_error *err);

#endif

/* Retained environments by state owner (owners.c): release, and invalidation when the session's
 * sandbox mode changes. */
#ifndef PTC_OWNERS_H
#define PTC_OWNERS_H

#include "ptc_runs.h"

int ptc__owners_subscribe(struct ptc_runs *runs);
void ptc__owners_unsubscribe(struct ptc_runs *runs);
int ptc__owners_release(struct ptc_runs *runs, const char *owner, dsh_released_fn fn, void *userdata,
                        struct dsh_error *err);

#endif

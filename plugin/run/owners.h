/* Retained environments by state owner (owners.c): release, and invalidation when the session's
 * sandbox mode changes. */
#ifndef PTC_OWNERS_H
#define PTC_OWNERS_H

#include "ptc_runs.h"

int ptc__owners_subscribe(struct ptc_runs *runs);
void ptc__owners_unsubscribe(struct ptc_runs *runs);
int ptc__owners_release(struct ptc_runs *runs, const char *owner, dsh_released_fn fn, void *userdata,
                        struct dsh_error *err);

/* Why the provider released an owner's environment on its own: the result's
 * `retained.released.reason` is the configuration field that did it. */
#define PTC_RELEASE_REASON_TABLE(X)                                                                    \
    X(IDLE, "idleReleaseMs")                                                                          \
    X(LRU, "maxRetainedOwners")
enum ptc_release_reason {
#define PTC_RELEASE_REASON_ENUM(name, text) PTC_RELEASED_##name,
    PTC_RELEASE_REASON_TABLE(PTC_RELEASE_REASON_ENUM)
#undef PTC_RELEASE_REASON_ENUM
};
const char *ptc__release_reason_name(enum ptc_release_reason reason);

/* Listens for environments that expire idle (env/, idleReleaseMs) to keep their notices. */
void ptc__owners_watch_expiry(struct ptc_runs *runs);
/* Before a new environment is made for owner: with maxRetainedOwners, releases the least recently
 * used idle environment of another owner while the others would reach it; DSH_E_LIMIT when every
 * one has a run in progress. */
int ptc__owners_make_room(struct ptc_runs *runs, const char *owner, struct dsh_error *err);
/* The notice kept for owner, removed: *ret_message is transfer full. False when there is none. */
bool ptc__owners_take_notice(struct ptc_runs *runs, const char *owner, enum ptc_release_reason *ret_reason,
                             char **ret_message);
/* Forgets every notice (unload). */
void ptc__owners_forget_notices(struct ptc_runs *runs);

#endif

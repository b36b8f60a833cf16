/* Prewarmed fresh processes (pool.c): environments started under the full launcher and
 * supervisor and warmed with one constant evaluation before any request exists, each handed to
 * exactly one temporary run whose policy (mode, workspace root, session) they were confined
 * with. A taken environment leaves the pool for good and ends with its run like a cold one; it is
 * never given back. The pool holds at most `prewarmProcesses` environments per standing policy
 * and `prewarmTotalProcesses` (default: the same) in all, refills only for
 * a session's standing policy, and reaps each one `prewarmIdleMs` after it was started. */
#ifndef PTC_POOL_H
#define PTC_POOL_H

#include "env.h"

struct ptc_pool_slot;

/* Written only by pool.c. */
struct ptc_pool {
    struct ptc_envs *envs;
    const char *format; /* program format of the environments it starts */
    unsigned capacity;  /* per standing policy; 0: no pool */
    unsigned total;     /* in all (prewarmTotalProcesses, at least capacity) */
    uint64_t idle_ms;
    struct ptc_pool_slot *slots; /* newest first */
    bool closed;                 /* unloading: never refilled again */
};

/* total: the most in all (0: capacity). */
void ptc__pool_init(struct ptc_pool *pool, struct ptc_envs *envs, const char *format, unsigned capacity,
                    unsigned total, uint64_t idle_ms);
/* A pooled environment confined by exactly this policy and not closing (it may still be warming:
 * a consumer then gets `ready` once it is warm), removed from the pool; the caller attaches to it
 * at once. NULL when none. */
struct ptc_env *ptc__pool_take(struct ptc_pool *pool, json_object *policy);
/* Starts environments for policy until the pool holds capacity of them, evicting the oldest of
 * other policies when it holds total; nothing when policy is not its session's standing policy (an
 * approved escalation, or a mode that has changed since). */
void ptc__pool_refill(struct ptc_pool *pool, json_object *policy);
/* Terminates every pooled environment of session_id (NULL: all of them). */
void ptc__pool_drain(struct ptc_pool *pool, const char *session_id);
/* Drains everything and never refills again (unload). */
void ptc__pool_close(struct ptc_pool *pool);
/* Pooled environments right now (tests). */
unsigned ptc__pool_size(const struct ptc_pool *pool);

#endif

/* Prewarmed fresh processes: the slots, take, refill, drain and the idle reap. A pooled
 * environment has never had a consumer: its only evaluation is the constant warm-up
 * (env_io.c), so a program that takes it finds nothing any other program left. */
#include "pool.h"
#include "env_private.h"
#include "env_start.h"
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_list.h"

#include <stdlib.h>
#include <string.h>

struct ptc_pool_slot {
    struct ptc_pool_slot *next;
    struct ptc_pool *pool;
    struct ptc_env *env; /* referenced while pooled */
    struct ptc_timer idle;
};

void ptc__pool_init(struct ptc_pool *pool, struct ptc_envs *envs, const char *format, unsigned capacity,
                    unsigned total, uint64_t idle_ms)
{
    *pool = (struct ptc_pool){.envs = envs,
                              .format = format,
                              .capacity = capacity,
                              .total = total > capacity ? total : capacity,
                              .idle_ms = idle_ms};
}

unsigned ptc__pool_size(const struct ptc_pool *pool)
{
    unsigned n = 0;
    for (struct ptc_pool_slot *slot = pool->slots; slot; slot = slot->next)
        n++;
    return n;
}

/* Unlinks and frees a slot; the environment is the caller's to terminate or hand on. */
static struct ptc_env *unslot(struct ptc_pool_slot *slot)
{
    struct ptc_pool *pool = slot->pool;
    struct ptc_env *env = slot->env;
    DSH_LIST_REMOVE(&pool->slots, slot);
    ptc__env_cancel_wait(env, slot);
    ptc__timer_destroy(&pool->envs->host->loop, &slot->idle);
    free(slot);
    return env;
}

/* Ends a pooled environment; it stays listed in the set until it is quiescent, as any other. */
static void discard(struct ptc_pool_slot *slot)
{
    struct ptc_env *env = unslot(slot);
    ptc__env_terminate(env);
    ptc__env_unref(env);
}

static void on_idle(struct ptc_timer *timer)
{
    struct ptc_pool_slot *slot = ptc__container_of(timer, struct ptc_pool_slot, idle);
    ptc__log(slot->pool->envs->host, DSH_LOG_DEBUG, "a prewarmed process nobody took is ended (prewarmIdleMs: %llu)",
             (unsigned long long)slot->pool->idle_ms);
    discard(slot);
}

/* The environment ended on its own (a failed start or warm-up, an early exit); it has already
 * dropped this waiter, so unslot's cancel finds nothing. */
static void on_pooled_closed(void *arg, int status)
{
    (void)status;
    ptc__env_unref(unslot(arg));
}

struct ptc_env *ptc__pool_take(struct ptc_pool *pool, json_object *policy)
{
    if (!pool->slots)
        return NULL;
    const char *text = json_object_to_json_string_ext(policy, JSON_C_TO_STRING_PLAIN);
    /* The oldest first: it is the most likely to be warm. */
    struct ptc_pool_slot *found = NULL;
    for (struct ptc_pool_slot *slot = pool->slots; slot; slot = slot->next)
        if (slot->env->state != PTC_ENV_CLOSING && strcmp(slot->env->policy_json, text) == 0)
            found = slot;
    if (!found)
        return NULL;
    struct ptc_env *env = unslot(found);
    /* Not closed, so dropping the pool's reference never frees it; the consumer takes its own. */
    ptc__env_unref(env);
    return env;
}

static bool same_string(json_object *a, json_object *b, const char *key)
{
    const char *x = dsh_json_get_text(a, key), *y = dsh_json_get_text(b, key);
    return x && y && strcmp(x, y) == 0;
}

/* Whether policy is what its session stands on now: only such environments are worth keeping,
 * and none is started under a mode the session has already left. */
static bool is_standing(struct ptc_pool *pool, json_object *policy)
{
    const char *session = dsh_json_get_text(policy, "sessionId");
    if (!session)
        return false;
    const struct dsh_sandbox_policy_service *svc = pool->envs->host->services.sandbox_policy;
    char buf[4096];
    int n = svc->resolve(svc->ctx, session, buf, sizeof buf);
    if (n < 0 || (size_t)n >= sizeof buf)
        return false;
    json_object *standing = dsh_json_parse_strict(buf, (size_t)n);
    bool same = standing && json_object_is_type(standing, json_type_object) &&
                json_object_object_length(standing) == json_object_object_length(policy) &&
                same_string(standing, policy, "mode") && same_string(standing, policy, "workspaceRoot") &&
                same_string(standing, policy, "sessionId");
    json_object_put(standing);
    return same;
}

static struct ptc_pool_slot *oldest_other(struct ptc_pool *pool, const char *text)
{
    struct ptc_pool_slot *oldest = NULL;
    for (struct ptc_pool_slot *slot = pool->slots; slot; slot = slot->next)
        if (strcmp(slot->env->policy_json, text) != 0)
            oldest = slot;
    return oldest;
}

static bool start_one(struct ptc_pool *pool, json_object *policy)
{
    struct ptc_pool_slot *slot = calloc(1, sizeof *slot);
    if (!slot)
        return false;
    struct ptc_loop *loop = &pool->envs->host->loop;
    if (ptc__timer_init(loop, &slot->idle, on_idle) < 0) {
        free(slot);
        return false;
    }
    struct ptc_env *env = ptc__env_create(pool->envs, policy, NULL, pool->format, false);
    if (!env || ptc__env_wait_closed(env, on_pooled_closed, slot) < 0) {
        if (env)
            ptc__env_terminate(env);
        ptc__timer_destroy(loop, &slot->idle);
        free(slot);
        return false;
    }
    ptc__env_request_warm_up(env);
    ptc__env_ref(env);
    slot->pool = pool;
    slot->env = env;
    slot->next = pool->slots;
    pool->slots = slot;
    ptc__timer_arm(&slot->idle, pool->idle_ms);
    return true;
}

void ptc__pool_refill(struct ptc_pool *pool, json_object *policy)
{
    if (pool->closed || !pool->capacity || !is_standing(pool, policy))
        return;
    const char *text = json_object_to_json_string_ext(policy, JSON_C_TO_STRING_PLAIN);
    unsigned same = 0, total = 0;
    for (struct ptc_pool_slot *slot = pool->slots; slot; slot = slot->next) {
        total++;
        if (strcmp(slot->env->policy_json, text) == 0)
            same++;
    }
    while (same < pool->capacity) {
        if (total >= pool->total) {
            struct ptc_pool_slot *victim = oldest_other(pool, text);
            if (!victim)
                return;
            discard(victim);
            total--;
        }
        if (!start_one(pool, policy))
            return;
        same++;
        total++;
    }
}

void ptc__pool_drain(struct ptc_pool *pool, const char *session_id)
{
    struct ptc_pool_slot *slot = pool->slots;
    while (slot) {
        struct ptc_pool_slot *next = slot->next;
        if (!session_id || strcmp(slot->env->identity.session_id, session_id) == 0)
            discard(slot);
        slot = next;
    }
}

void ptc__pool_close(struct ptc_pool *pool)
{
    pool->closed = true;
    ptc__pool_drain(pool, NULL);
}

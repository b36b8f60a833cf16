/* Retained environments by state owner: lookup, release, and invalidation when the session's
 * sandbox mode changes (retained processes follow file policy). */
#include "owners.h"
#include "outcome.h"
#include "dsh_json_strict.h"
#include "dsh_list.h"

#include <stdio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- notices of releases the provider made on its own ------------------------------------------ */

struct ptc_owner_notice {
    struct ptc_owner_notice *next;
    char *owner;
    enum ptc_release_reason reason;
    char *message;
};

const char *ptc__release_reason_name(enum ptc_release_reason reason)
{
    switch (reason) {
#define PTC_RELEASE_REASON_CASE(name, text)                                                            \
    case PTC_RELEASED_##name:                                                                          \
        return text;
        PTC_RELEASE_REASON_TABLE(PTC_RELEASE_REASON_CASE)
#undef PTC_RELEASE_REASON_CASE
    }
    return "unknown";
}

static void free_notice(struct ptc_owner_notice *n)
{
    free(n->owner);
    free(n->message);
    free(n);
}

static struct ptc_owner_notice *unlink_notice(struct ptc_runs *runs, const char *owner)
{
    DSH_LIST_FOREACH_LINK(link, &runs->notices)
        if (strcmp((*link)->owner, owner) == 0) {
            struct ptc_owner_notice *n = *link;
            DSH_LIST_UNLINK(link);
            return n;
        }
    return NULL;
}

/* Kept until the owner runs again or is released; a newer release replaces an older notice. */
static void keep_notice(struct ptc_runs *runs, const char *owner, enum ptc_release_reason reason)
{
    struct ptc_owner_notice *old = unlink_notice(runs, owner);
    if (old)
        free_notice(old);
    struct ptc_owner_notice *n = calloc(1, sizeof *n);
    const struct ptc_config *config = &runs->host->config;
    int rc = -1;
    if (n && (n->owner = strdup(owner))) {
        n->reason = reason;
        if (reason == PTC_RELEASED_IDLE)
            rc = asprintf(&n->message,
                          "the earlier environment of state owner \"%s\" was released after %lld ms without a run "
                          "(idleReleaseMs); this run started in a fresh one, so earlier variables are gone",
                          owner, (long long)config->idle_release_ms);
        else
            rc = asprintf(&n->message,
                          "the earlier environment of state owner \"%s\" was released as the least recently used "
                          "one when another owner needed room (maxRetainedOwners: %lld); this run started in a "
                          "fresh one, so earlier variables are gone",
                          owner, (long long)config->max_retained_owners);
    }
    if (rc < 0) { /* out of memory: the next run is not told */
        if (n) {
            n->message = NULL;
            free_notice(n);
        }
        return;
    }
    n->next = runs->notices;
    runs->notices = n;
}

static void on_env_expired(void *ctx, const struct ptc_env *env)
{
    keep_notice(ctx, ptc__env_identity(env)->owner, PTC_RELEASED_IDLE);
}

void ptc__owners_watch_expiry(struct ptc_runs *runs)
{
    ptc__envs_on_expired(runs->envs, on_env_expired, runs);
}

bool ptc__owners_take_notice(struct ptc_runs *runs, const char *owner, enum ptc_release_reason *ret_reason,
                             char **ret_message)
{
    struct ptc_owner_notice *n = unlink_notice(runs, owner);
    if (!n)
        return false;
    *ret_reason = n->reason;
    *ret_message = n->message;
    n->message = NULL;
    free_notice(n);
    return true;
}

void ptc__owners_forget_notices(struct ptc_runs *runs)
{
    while (runs->notices) {
        struct ptc_owner_notice *n = runs->notices;
        runs->notices = n->next;
        free_notice(n);
    }
}

/* An environment that counts against maxRetainedOwners: owned, neither ending nor closed. */
static bool counts_as_retained(const struct ptc_env *env)
{
    return ptc__env_identity(env)->owner && !ptc__env_invalidated(env) && !ptc__env_closed(env) &&
           ptc__env_state(env) != PTC_ENV_CLOSING;
}

int ptc__owners_make_room(struct ptc_runs *runs, const char *owner, struct dsh_error *err)
{
    int64_t cap = runs->host->config.max_retained_owners;
    if (cap <= 0)
        return 0;
    for (;;) {
        int64_t retained = 0;
        struct ptc_env *lru = NULL;
        for (struct ptc_env *env = ptc__envs_next(runs->envs, NULL); env; env = ptc__envs_next(runs->envs, env)) {
            if (!counts_as_retained(env) || strcmp(ptc__env_identity(env)->owner, owner) == 0)
                continue;
            retained++;
            uint64_t order = ptc__env_idle_order(env);
            if (order && (!lru || order < ptc__env_idle_order(lru)))
                lru = env;
        }
        if (retained < cap)
            return 0;
        if (!lru)
            return ptc__fail(err, DSH_E_LIMIT,
                             "maxRetainedOwners (%lld) reached: every retained environment has a run in progress, "
                             "so none can be released for state owner \"%s\"; retry once one has ended",
                             (long long)cap, owner);
        const char *victim = ptc__env_identity(lru)->owner;
        ptc__log(runs->host, DSH_LOG_INFO, "the retained environment of owner \"%s\" is released: it is the least "
                                           "recently used and owner \"%s\" needs room (maxRetainedOwners: %lld)",
                 victim, owner, (long long)cap);
        keep_notice(runs, victim, PTC_RELEASED_LRU);
        ptc__env_terminate(lru);
    }
}

/* ---- release -------------------------------------------------------------------------------- */

struct release_request {
    struct ptc_host *host;
    dsh_released_fn fn;
    void *userdata;
    char *owner;
    int status;
    struct ptc_deferred complete_call;
};

static void complete_release(struct ptc_deferred *call)
{
    struct release_request *req = ptc__container_of(call, struct release_request, complete_call);
    req->fn(req->userdata, req->owner, req->status);
    free(req->owner);
    free(req);
}

static void on_released_env_closed(void *arg, int status)
{
    struct release_request *req = arg;
    req->status = status;
    /* Deliver from the loop, never from inside another callback chain. */
    ptc__defer(&req->host->loop, &req->complete_call, complete_release);
}

int ptc__owners_release(struct ptc_runs *runs, const char *owner, dsh_released_fn fn, void *userdata,
                        struct dsh_error *err)
{
    struct release_request *req = calloc(1, sizeof *req);
    if (!req || !(req->owner = strdup(owner))) {
        free(req);
        return ptc__fail(err, -ENOMEM, "out of memory");
    }
    req->host = runs->host;
    req->fn = fn;
    req->userdata = userdata;
    /* Released on request: an earlier notice has nobody left to tell. */
    struct ptc_owner_notice *notice = unlink_notice(runs, owner);
    if (notice)
        free_notice(notice);
    ptc__pool_drain(runs->pool, NULL);
    struct ptc_env *env = ptc__envs_find_owned(runs->envs, owner, PTC_OWNED_ANY);
    if (!env) { /* nothing retained: released at once */
        ptc__defer(&runs->host->loop, &req->complete_call, complete_release);
        return 0;
    }
    int rc = ptc__env_wait_closed(env, on_released_env_closed, req);
    if (rc < 0) {
        free(req->owner);
        free(req);
        return ptc__fail(err, rc, "out of memory");
    }
    struct ptc_run *run = ptc__env_consumer(env);
    if (run)
        ptc__run_cancel(run, "the state owner was released");
    if (ptc__env_cleanup_failed(env))
        ptc__env_retry_cleanup(env);
    else
        ptc__env_terminate(env);
    return 0;
}

/* ---- policy changes ---------------------------------------------------------------------------- */

/* The session id the policy service uses for its default session. */
static char *default_session(struct ptc_runs *runs)
{
    const struct dsh_sandbox_policy_service *svc = runs->host->services.sandbox_policy;
    char buf[4096];
    int n = svc->resolve(svc->ctx, NULL, buf, sizeof buf);
    if (n < 0 || (size_t)n >= sizeof buf)
        return NULL;
    json_object *policy = dsh_json_parse_strict(buf, (size_t)n), *v;
    char *id = NULL;
    if (policy && json_object_object_get_ex(policy, "sessionId", &v) && json_object_is_type(v, json_type_string))
        id = strdup(json_object_get_string(v));
    json_object_put(policy);
    return id ? id : strdup("");
}

static void on_mode_change(void *userdata, const char *session_id, const char *new_mode)
{
    struct ptc_runs *runs = userdata;
    char *fallback = session_id ? NULL : default_session(runs);
    const char *session = session_id ? session_id : fallback ? fallback : "";
    /* Prewarmed processes of the session were confined under the mode it just left. */
    ptc__pool_drain(runs->pool, session);
    /* Every retained environment of the session is invalidated at once, idle ones too. */
    for (struct ptc_env *env = ptc__envs_next(runs->envs, NULL); env; env = ptc__envs_next(runs->envs, env)) {
        const struct ptc_env_identity *id = ptc__env_identity(env);
        if (!id->owner || ptc__env_invalidated(env) || ptc__env_closed(env) || strcmp(id->session_id, session) != 0)
            continue;
        ptc__env_invalidate(env);
        struct ptc_run *run = ptc__env_consumer(env);
        if (run && !run->outcome_selected)
            ptc__run_select(run, PTC_FAILURE_ABORT, "execution aborted %s: the session's sandbox mode changed to %s",
                            run->code_started ? "during execution" : "before code started", new_mode);
        else
            ptc__env_terminate(env);
    }
    /* A revoked permission takes effect at once: every other run of the session ends too,
     * temporary ones included, executing or still being admitted (waiting for cleanup or startup).
     * The outcome stops a temporary run's process range. */
    for (struct ptc_run *run = runs->head; run; run = run->next) {
        if (run->outcome_selected || strcmp(ptc__spec_policy_string(&run->spec, "sessionId"), session) != 0)
            continue;
        ptc__run_select(run, PTC_FAILURE_ABORT, "execution aborted %s: the session's sandbox mode changed to %s",
                        run->code_started ? "during execution" : "before code started", new_mode);
    }
    free(fallback);
}

int ptc__owners_subscribe(struct ptc_runs *runs)
{
    const struct dsh_sandbox_policy_service *svc = runs->host->services.sandbox_policy;
    int rc = svc->subscribe(svc->ctx, on_mode_change, runs, &runs->subscription.id);
    if (rc == 0)
        runs->subscription.active = true;
    return rc;
}

void ptc__owners_unsubscribe(struct ptc_runs *runs)
{
    if (!runs->subscription.active)
        return;
    const struct dsh_sandbox_policy_service *svc = runs->host->services.sandbox_policy;
    svc->unsubscribe(svc->ctx, runs->subscription.id);
    runs->subscription.active = false;
}

/* Retained environments by state owner: lookup, release, and invalidation when the session's
 * sandbox mode changes (retained processes follow file policy). */
#include "frames.h"
#include "run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool owned_by(const struct ptc_env *env, const char *owner)
{
    return env->owner && strcmp(env->owner, owner) == 0;
}

struct ptc_env *ptc__owners_find(struct dsh_instance *inst, const char *owner)
{
    for (struct ptc_env *env = inst->envs; env; env = env->next)
        if (owned_by(env, owner) && !env->invalidated && env->state != PTC_ENV_CLOSING && !env->closed)
            return env;
    return NULL;
}

struct ptc_env *ptc__owners_find_closing(struct dsh_instance *inst, const char *owner)
{
    for (struct ptc_env *env = inst->envs; env; env = env->next)
        if (owned_by(env, owner) && !env->closed && (env->invalidated || env->state == PTC_ENV_CLOSING))
            return env;
    return NULL;
}

/* ---- release -------------------------------------------------------------------------------- */

struct release_request {
    struct dsh_instance *inst;
    dsh_released_fn fn;
    void *userdata;
    char *owner;
    int status;
};

static void complete_release(void *arg)
{
    struct release_request *req = arg;
    req->fn(req->userdata, req->owner, req->status);
    free(req->owner);
    free(req);
}

static void on_released_env_closed(void *arg, int status)
{
    struct release_request *req = arg;
    req->status = status;
    /* Deliver from the loop, never from inside another callback chain. */
    if (ptc__defer(&req->inst->loop, complete_release, req) < 0)
        complete_release(req);
}

int ptc__owners_release(struct dsh_instance *inst, const char *owner, dsh_released_fn fn, void *userdata,
                        struct dsh_error *err)
{
    struct release_request *req = calloc(1, sizeof *req);
    if (!req || !(req->owner = strdup(owner))) {
        free(req);
        return ptc__fail(err, -ENOMEM, "out of memory");
    }
    req->inst = inst;
    req->fn = fn;
    req->userdata = userdata;
    struct ptc_env *env = NULL;
    for (struct ptc_env *e = inst->envs; e; e = e->next)
        if (owned_by(e, owner) && !e->closed) {
            env = e;
            break;
        }
    if (!env) { /* nothing retained: released at once */
        if (ptc__defer(&inst->loop, complete_release, req) < 0) {
            free(req->owner);
            free(req);
            return ptc__fail(err, -ENOMEM, "out of memory");
        }
        return 0;
    }
    int rc = ptc__env_wait_closed(env, on_released_env_closed, req);
    if (rc < 0) {
        free(req->owner);
        free(req);
        return ptc__fail(err, rc, "out of memory");
    }
    if (env->run)
        ptc__run_cancel(env->run, "the state owner was released");
    if (env->cleanup_failed)
        ptc__env_retry_cleanup(env);
    else
        ptc__env_terminate(env, NULL);
    return 0;
}

/* ---- policy changes ---------------------------------------------------------------------------- */

static const char *run_session(const struct ptc_run *run)
{
    json_object *v;
    return json_object_object_get_ex(run->spec.policy, "sessionId", &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : "";
}

/* The session id the policy service uses for its default session. */
static char *default_session(struct dsh_instance *inst)
{
    const struct dsh_sandbox_policy_service *svc = inst->services.sandbox_policy;
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
    struct dsh_instance *inst = userdata;
    char *fallback = session_id ? NULL : default_session(inst);
    const char *session = session_id ? session_id : fallback ? fallback : "";
    /* Every retained environment of the session is invalidated at once, idle ones too. */
    for (struct ptc_env *env = inst->envs; env; env = env->next) {
        if (!env->owner || env->invalidated || env->closed || strcmp(env->session_id, session) != 0)
            continue;
        env->invalidated = true;
        if (env->run && !env->run->outcome_selected)
            ptc__run_select(env->run, "abort", "execution aborted %s: the session's sandbox mode changed to %s",
                            env->run->code_started ? "during execution" : "before code started", new_mode);
        else
            ptc__env_terminate(env, NULL);
    }
    /* Calls admitted under the old mode are cancelled even while waiting for cleanup or startup. */
    for (struct ptc_run *run = inst->runs; run; run = run->next) {
        if (run->outcome_selected || run->code_started || strcmp(run_session(run), session) != 0)
            continue;
        if (strcmp(run->spec.mode, new_mode) == 0)
            continue;
        ptc__run_select(run, "abort", "execution aborted before code started: the session's sandbox mode changed to %s",
                        new_mode);
    }
    free(fallback);
}

int ptc__owners_subscribe(struct dsh_instance *inst)
{
    const struct dsh_sandbox_policy_service *svc = inst->services.sandbox_policy;
    int rc = svc->subscribe(svc->ctx, on_mode_change, inst, &inst->subscription);
    if (rc == 0)
        inst->subscribed = true;
    return rc;
}

void ptc__owners_unsubscribe(struct dsh_instance *inst)
{
    if (!inst->subscribed)
        return;
    const struct dsh_sandbox_policy_service *svc = inst->services.sandbox_policy;
    svc->unsubscribe(svc->ctx, inst->subscription);
    inst->subscribed = false;
}

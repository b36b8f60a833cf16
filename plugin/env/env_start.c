/* Starting an environment: build the launch argv, confine it through the sandbox service, spawn
 * it through the subprocess service and watch its fds. */
#include "env_start.h"
#include "env_io.h"
#include "env_private.h"
#include "language.h"
#include "dsh_strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void start_process(struct ptc_env *env)
{
    size_t n_conf = 0, n_launch = 0;
    while (env->confinement->env[n_conf])
        n_conf++;
    while (env->launch_env[n_launch])
        n_launch++;
    const char **envp = calloc(n_conf + n_launch + 1, sizeof *envp);
    if (!envp) {
        ptc__env_fail(env, PTC_FAILURE_WORKER_EXIT, "out of memory");
        return;
    }
    memcpy(envp, env->confinement->env, n_conf * sizeof *envp);
    memcpy(envp + n_conf, env->launch_env, n_launch * sizeof *envp);
    /* The process starts in the workspace root; each run frame carries its own cwd. */
    const struct ptc_config *config = &env->host->config;
    struct dsh_spawn_request request = {
        .struct_size = sizeof request,
        .argv = env->confinement->argv,
        .env = envp,
        .cwd = env->identity.workspace_root,
        .max_memory_bytes = (uint64_t)config->max_memory_mb << 20,
        .max_processes = (uint32_t)config->max_processes,
        .max_cpu_percent = (uint32_t)config->max_cpu_percent,
    };
    struct dsh_error err = {0};
    const struct dsh_subprocess_service *sp = env->host->services.subprocess;
    int rc = sp->spawn(sp->ctx, &request, &env->process, &err);
    free(envp);
    if (rc < 0) {
        env->process = NULL;
        char message[1200];
        snprintf(message, sizeof message, "the process could not be started: %s",
                 err.message[0] ? err.message : dsh_strerror(rc));
        ptc__env_fail(env, PTC_FAILURE_WORKER_EXIT, message);
        return;
    }
    if (ptc__env_watch_process(env) < 0) {
        ptc__env_fail(env, PTC_FAILURE_WORKER_EXIT, "the process could not be observed");
        return;
    }
    env->state = PTC_ENV_STARTING;
}

static void after_confined(struct ptc_deferred *call)
{
    struct ptc_env *env = ptc__container_of(call, struct ptc_env, confined_call);
    if (env->state == PTC_ENV_CLOSING) { /* terminated while confining */
        ptc__env_schedule_close(env);
        return;
    }
    if (env->launch_error) { /* nothing was confined: the launch configuration is unusable */
        char message[sizeof((struct dsh_error *)0)->message + 64];
        snprintf(message, sizeof message, "the Node process could not be started: %s", env->launch_error);
        ptc__env_fail(env, PTC_FAILURE_WORKER_EXIT, message);
        return;
    }
    if (env->confine_status < 0 || !env->confinement) {
        char message[256];
        snprintf(message, sizeof message, "the sandbox could not confine the program: %s",
                 dsh_strerror(env->confine_status ? env->confine_status : DSH_E_SANDBOX_UNAVAILABLE));
        ptc__env_fail(env, PTC_FAILURE_SANDBOX_UNAVAILABLE, message);
        return;
    }
    /* A consumer that stopped while confinement was pending terminated the environment, and
     * CLOSING above keeps a late provider from starting its program. */
    start_process(env);
}

static void on_confined(void *userdata, int status, struct dsh_confinement *confinement)
{
    struct ptc_env *env = userdata;
    env->confine_pending = false;
    env->confine_status = status;
    env->confinement = confinement;
    /* Possibly called from inside confine(): continue from the loop, never re-entrantly. */
    ptc__defer(&env->host->loop, &env->confined_call, after_confined);
}

/* The policy text confine() gets: the resolved policy (env->policy_json keeps it as it is, to
 * match environments by) plus the row's limits the sandbox service applies (ABI 1.3: the TMPDIR
 * size, whether resource limits are required). NULL: out of memory. */
static char *confine_policy(json_object *policy, const struct ptc_config *config)
{
    json_object *copy = NULL;
    if (json_object_deep_copy(policy, &copy, NULL) < 0)
        return NULL;
    if (config->max_temp_bytes)
        json_object_object_add(copy, "maxTempBytes", json_object_new_int64(config->max_temp_bytes));
    if (config->require_resource_limits)
        json_object_object_add(copy, "requireResourceLimits", json_object_new_boolean(true));
    const char *text = json_object_to_json_string_ext(copy, JSON_C_TO_STRING_PLAIN);
    char *out = text ? strdup(text) : NULL;
    json_object_put(copy);
    return out;
}

struct ptc_env *ptc__env_create(struct ptc_envs *set, json_object *policy, const char *owner, const char *format,
                                bool retain)
{
    struct ptc_env *env = ptc__env_new(set, policy, owner, format, retain);
    if (!env)
        return NULL;
    struct ptc_host *host = env->host;
    char **argv = NULL;
    struct dsh_error err = {0};
    if (host->language->launch_argv(host, &argv, &env->launch_env, &err) < 0) {
        env->confine_status = err.code ? err.code : -EINVAL;
        env->launch_error = strdup(err.message);
        ptc__defer(&host->loop, &env->confined_call, after_confined);
        return env;
    }
    const struct dsh_sandbox_service *sb = host->services.sandbox;
    char *policy_text = confine_policy(policy, &host->config);
    env->confine_pending = true;
    int rc = policy_text ? sb->confine(sb->ctx, (const char *const *)argv, policy_text, strlen(policy_text),
                                       on_confined, env, &env->confine_op)
                         : -ENOMEM;
    free(policy_text);
    dsh_strv_free(argv);
    if (rc < 0) {
        env->confine_pending = false;
        env->confine_status = rc;
        ptc__defer(&host->loop, &env->confined_call, after_confined);
    }
    return env;
}

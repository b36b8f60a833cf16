/* Environment lifecycle: confine, spawn, terminate, wait for quiescence and drained pipes, free.
 * Control frames and pipe bytes are handled in env_io.c. */
#include "env.h"
#include "run.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

static void schedule_close(struct ptc_env *env);

static char *dup_string(json_object *obj, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return strdup("");
    return strdup(json_object_get_string(v));
}

bool ptc__env_usable(const struct ptc_env *env)
{
    return !env->invalidated && env->state != PTC_ENV_CLOSING && !env->run;
}

/* V8's one-line verdict when the heap limit is hit (it follows with a long GC and native-stack
 * dump), or NULL. */
static const char *heap_verdict(const struct ptc_env *env, int *ret_len)
{
    static const char marker[] = "JavaScript heap out of memory";
    const char *tail = env->stderr_tail, *hit = memmem(tail, env->stderr_tail_len, marker, sizeof marker - 1);
    if (!hit)
        return NULL;
    const char *line = hit;
    while (line > tail && line[-1] != '\n')
        line--;
    *ret_len = (int)(hit + sizeof marker - 1 - line);
    return line;
}

char *ptc__env_exit_description(const struct ptc_env *env)
{
    char status[64] = "";
    if (env->quiescent && env->exit_status.exited)
        snprintf(status, sizeof status, " (exit code %d)", env->exit_status.code);
    else if (env->quiescent && env->exit_status.signal)
        snprintf(status, sizeof status, " (signal %s)",
                 sigabbrev_np(env->exit_status.signal) ? sigabbrev_np(env->exit_status.signal) : "unknown");
    const char *what = !env->run                                       ? "the Node process exited"
                       : env->control_lost && !env->exit_status.exited ? "the control channel closed before the result"
                                                                       : "the Node process exited before completing";
    /* A read failure of the control channel stays visible next to the exit status. */
    char transport[96] = "";
    if (env->control_error < 0)
        snprintf(transport, sizeof transport, "; control channel: %s", strerror(-env->control_error));
    char *text = NULL;
    int verdict_len = 0;
    const char *verdict = env->run && env->inst ? heap_verdict(env, &verdict_len) : NULL;
    if (verdict)
        (void)!asprintf(&text, "the program exhausted the JavaScript heap (maxOldGenerationSizeMb: %lld)%s; V8: %.*s",
                        (long long)env->inst->config.max_old_generation_size_mb, status, verdict_len, verdict);
    else if (env->stderr_tail_len)
        (void)!asprintf(&text, "%s%s%s; stderr: %.*s", what, status, transport, (int)env->stderr_tail_len,
                        env->stderr_tail);
    else
        (void)!asprintf(&text, "%s%s%s", what, status, transport);
    return text;
}

static void fail_env(struct ptc_env *env, const char *kind, const char *message)
{
    if (env->run)
        ptc__run_on_env_failed(env->run, kind, message);
    else if (env->owner) /* nobody gets a result for an idle failure: tell the host's logger */
        ptc__log(env->inst, DSH_LOG_WARN, "retained environment of owner \"%s\" ended while idle (%s): %s",
                 env->owner, kind, message);
    ptc__env_terminate(env, message);
}

static void start_process(struct ptc_env *env)
{
    struct dsh_instance *inst = env->inst;
    size_t n_conf = 0, n_launch = 0;
    while (env->confinement->env[n_conf])
        n_conf++;
    while (env->launch_env[n_launch])
        n_launch++;
    const char **envp = calloc(n_conf + n_launch + 1, sizeof *envp);
    if (!envp) {
        fail_env(env, "worker-exit", "out of memory");
        return;
    }
    memcpy(envp, env->confinement->env, n_conf * sizeof *envp);
    memcpy(envp + n_conf, env->launch_env, n_launch * sizeof *envp);
    /* The process starts in the workspace root; each run frame carries its own cwd. */
    struct dsh_spawn_request request = {
        .struct_size = sizeof request,
        .argv = env->confinement->argv,
        .env = envp,
        .cwd = env->workspace_root,
    };
    struct dsh_error err = {0};
    const struct dsh_subprocess_service *sp = inst->services.subprocess;
    int rc = sp->spawn(sp->ctx, &request, &env->process, &err);
    free(envp);
    if (rc < 0) {
        env->process = NULL;
        char message[1200];
        snprintf(message, sizeof message, "the process could not be started: %s",
                 err.message[0] ? err.message : dsh_strerror(rc));
        fail_env(env, "worker-exit", message);
        return;
    }
    if (ptc__env_watch_process(env) < 0) {
        fail_env(env, "worker-exit", "the process could not be observed");
        return;
    }
    env->state = PTC_ENV_STARTING;
}

static void after_confined(void *arg)
{
    struct ptc_env *env = arg;
    if (env->state == PTC_ENV_CLOSING) { /* terminated while confining */
        schedule_close(env);
        return;
    }
    if (env->launch_error) { /* nothing was confined: the launch configuration is unusable */
        char message[sizeof((struct dsh_error *)0)->message + 64];
        snprintf(message, sizeof message, "the Node process could not be started: %s", env->launch_error);
        fail_env(env, "worker-exit", message);
        return;
    }
    if (env->confine_status < 0 || !env->confinement) {
        char message[256];
        snprintf(message, sizeof message, "the sandbox could not confine the program: %s",
                 dsh_strerror(env->confine_status ? env->confine_status : DSH_E_SANDBOX_UNAVAILABLE));
        fail_env(env, "sandbox-unavailable", message);
        return;
    }
    /* A late provider must not start a cancelled program: re-check after confinement. */
    if (env->run && env->run->outcome_selected) {
        ptc__env_terminate(env, NULL);
        return;
    }
    start_process(env);
    /* ... and after spawn. */
    if (env->run && env->run->outcome_selected && env->state != PTC_ENV_CLOSING)
        ptc__env_terminate(env, NULL);
}

static void on_confined(void *userdata, int status, struct dsh_confinement *confinement)
{
    struct ptc_env *env = userdata;
    env->confine_pending = false;
    env->confine_status = status;
    env->confinement = confinement;
    /* Possibly called from inside confine(): continue from the loop, never re-entrantly. */
    if (ptc__defer(&env->inst->loop, after_confined, env) < 0)
        fail_env(env, "worker-exit", "out of memory");
}

static void on_drain_timeout(struct ptc_timer *timer)
{
    struct ptc_env *env = ptc__container_of(timer, struct ptc_env, drain);
    /* Pipes still open after the range is gone and graceMs passed: stop waiting for them. */
    ptc__log(env->inst, DSH_LOG_WARN, "output pipes of a finished Node process stayed open %lld ms after it ended; closing them",
             (long long)env->inst->config.grace_ms);
    env->drained = true;
    schedule_close(env);
}

struct ptc_env *ptc__env_create(struct dsh_instance *inst, const struct ptc_spec *spec, const char *owner,
                                const char *format, bool retain)
{
    struct ptc_env *env = calloc(1, sizeof *env);
    if (!env)
        return NULL;
    env->inst = inst;
    env->format = format;
    env->retain = retain;
    env->control.fd = -1;
    env->out.watch.fd = env->err.watch.fd = -1;
    env->policy_json = strdup(json_object_to_json_string_ext(spec->policy, JSON_C_TO_STRING_PLAIN));
    env->mode = dup_string(spec->policy, "mode");
    env->workspace_root = dup_string(spec->policy, "workspaceRoot");
    env->session_id = dup_string(spec->policy, "sessionId");
    env->owner = owner ? strdup(owner) : NULL;
    if (!env->policy_json || !env->mode || !env->workspace_root || !env->session_id || (owner && !env->owner) ||
        ptc__timer_init(&inst->loop, &env->drain, on_drain_timeout) < 0) {
        free(env->policy_json);
        free(env->mode);
        free(env->workspace_root);
        free(env->session_id);
        free(env->owner);
        free(env);
        return NULL;
    }
    env->next = inst->envs;
    inst->envs = env;
    env->state = PTC_ENV_CONFINING;

    char **argv = NULL;
    struct dsh_error err = {0};
    if (ptc__launch_argv(inst, &argv, &env->launch_env, &err) < 0) {
        env->confine_status = err.code ? err.code : -EINVAL;
        env->launch_error = strdup(err.message);
        ptc__defer(&inst->loop, after_confined, env);
        return env;
    }
    const struct dsh_sandbox_service *sb = inst->services.sandbox;
    env->confine_pending = true;
    int rc = sb->confine(sb->ctx, (const char *const *)argv, env->policy_json, strlen(env->policy_json),
                         on_confined, env, &env->confine_op);
    ptc__argv_free(argv);
    if (rc < 0) {
        env->confine_pending = false;
        env->confine_status = rc;
        ptc__defer(&inst->loop, after_confined, env);
    }
    return env;
}

int ptc__env_send(struct ptc_env *env, json_object *frame)
{
    const char *text = json_object_to_json_string_ext(frame, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = ptc__control_queue(&env->control, text, strlen(text));
    if (rc < 0)
        return rc;
    rc = ptc__control_flush(&env->control);
    if (rc == 0)
        ptc__watch_modify(&env->inst->loop, &env->control_watch, EPOLLIN | EPOLLOUT);
    return rc < 0 ? rc : 0;
}

void ptc__env_terminate(struct ptc_env *env, const char *why)
{
    if (why && !env->failure)
        env->failure = strdup(why);
    if (env->state == PTC_ENV_CLOSING)
        return;
    env->state = PTC_ENV_CLOSING;
    if (env->confine_pending) {
        const struct dsh_sandbox_service *sb = env->inst->services.sandbox;
        if (sb->cancel_confine(sb->ctx, env->confine_op) == 0)
            env->confine_pending = false;
        /* else on_confined is still coming; after_confined sees CLOSING */
    }
    if (env->process && !env->quiescent) {
        const struct dsh_subprocess_service *sp = env->inst->services.subprocess;
        if (sp->terminate(sp->ctx, env->process, 0) < 0) {
            env->cleanup_failed = true;
            schedule_close(env);
        }
        return;
    }
    if (!env->confine_pending)
        schedule_close(env);
}

void ptc__env_retry_cleanup(struct ptc_env *env)
{
    if (!env->cleanup_failed || !env->process)
        return;
    const struct dsh_subprocess_service *sp = env->inst->services.subprocess;
    if (sp->terminate(sp->ctx, env->process, 0) == 0 && sp->poll_quiescent(sp->ctx, env->process, &env->exit_status) == 1) {
        env->cleanup_failed = false;
        env->quiescent = true;
    }
    schedule_close(env);
}

int ptc__env_wait_closed(struct ptc_env *env, ptc_env_closed_fn fn, void *arg)
{
    struct ptc_env_waiter *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->fn = fn;
    w->arg = arg;
    w->next = env->waiters;
    env->waiters = w;
    return 0;
}

void ptc__env_cancel_wait(struct ptc_env *env, ptc_env_closed_fn fn, void *arg)
{
    for (struct ptc_env_waiter **link = &env->waiters; *link; link = &(*link)->next)
        if ((*link)->fn == fn && (*link)->arg == arg) {
            struct ptc_env_waiter *w = *link;
            *link = w->next;
            free(w);
            return;
        }
}

void ptc__env_destroy(struct ptc_env *env)
{
    struct dsh_instance *inst = env->inst;
    for (struct ptc_env **link = &inst->envs; *link; link = &(*link)->next)
        if (*link == env) {
            *link = env->next;
            break;
        }
    ptc__timer_destroy(&inst->loop, &env->drain);
    ptc__env_close_fds(env);
    if (env->process) {
        const struct dsh_subprocess_service *sp = inst->services.subprocess;
        sp->release(sp->ctx, env->process);
    }
    if (env->confinement) {
        const struct dsh_sandbox_service *sb = inst->services.sandbox;
        sb->release_confinement(sb->ctx, env->confinement);
    }
    ptc__argv_free(env->launch_env);
    ptc__defer_cancel(&inst->loop, env);
    free(env->policy_json);
    free(env->mode);
    free(env->workspace_root);
    free(env->session_id);
    free(env->owner);
    free(env->failure);
    free(env->launch_error);
    ptc__images_clear(&env->images);
    while (env->waiters) { /* unload: nobody is told any more */
        struct ptc_env_waiter *w = env->waiters;
        env->waiters = w->next;
        free(w);
    }
    free(env);
}

static void close_now(void *arg)
{
    struct ptc_env *env = arg;
    env->close_scheduled = false;
    if (env->confine_pending)
        return; /* on_confined will come back through after_confined */
    bool closed = env->cleanup_failed || !env->process || (env->quiescent && env->drained);
    if (!closed)
        return;
    int status = env->cleanup_failed ? DSH_E_CLEANUP_FAILED : 0;
    struct ptc_run *run = env->run;
    env->run = NULL;
    if (run)
        ptc__run_on_env_closed(run, status);
    struct ptc_env_waiter *waiters = env->waiters;
    env->waiters = NULL;
    while (waiters) {
        struct ptc_env_waiter *w = waiters;
        waiters = w->next;
        w->fn(w->arg, status);
        free(w);
    }
    /* A failed cleanup keeps the handle so a release can retry termination. */
    if (status == 0) {
        env->closed = true;
        if (env->refs == 0)
            ptc__env_destroy(env);
    }
}

void ptc__env_ref(struct ptc_env *env)
{
    env->refs++;
}

void ptc__env_unref(struct ptc_env *env)
{
    if (--env->refs == 0 && env->closed)
        ptc__env_destroy(env);
}

static void schedule_close(struct ptc_env *env)
{
    if (env->close_scheduled)
        return;
    env->close_scheduled = true;
    if (ptc__defer(&env->inst->loop, close_now, env) < 0)
        env->close_scheduled = false;
}

void ptc__env_progress(struct ptc_env *env)
{
    if (!env->quiescent && !env->cleanup_failed)
        return;
    if (env->state != PTC_ENV_CLOSING) {
        /* The range ended on its own: early process exit. */
        char *why = ptc__env_exit_description(env);
        fail_env(env, "worker-exit", why ? why : "the Node process exited");
        free(why);
    }
    if (env->cleanup_failed || (env->out.eof && env->err.eof)) {
        env->drained = true;
        schedule_close(env);
        return;
    }
    ptc__timer_arm(&env->drain, (uint64_t)env->inst->config.grace_ms);
}

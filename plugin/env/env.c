/* Environments: the set, attach and detach a consumer, terminate, wait for quiescence and
 * drained pipes, close and free, and what others may read. Confinement and spawn are in
 * env_start.c, control frames and pipe bytes in env_io.c. */
#include "env_io.h"
#include "dsh_json_get.h"
#include "env_private.h"
#include "launch.h"
#include "dsh_strv.h"
#include "dsh_list.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

static void destroy(struct ptc_env *env);
static void on_freeze_poll(struct ptc_timer *timer);
static void on_idle_expired(struct ptc_timer *timer);

static char *dup_string(json_object *obj, const char *key)
{
    const char *v = dsh_json_get_text(obj, key);
    return strdup(v ? v : "");
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
    const char *what = !env->events                                       ? "the Node process exited"
                       : env->control_lost && !env->exit_status.exited ? "the control channel closed before the result"
                                                                       : "the Node process exited before completing";
    /* A read failure of the control channel stays visible next to the exit status. */
    char transport[96] = "";
    if (env->control_error < 0)
        snprintf(transport, sizeof transport, "; control channel: %s", strerror(-env->control_error));
    char *text = NULL;
    int verdict_len = 0;
    const char *verdict = env->events && env->host ? heap_verdict(env, &verdict_len) : NULL;
    if (env->memory_limit_kills && env->host)
        (void)!asprintf(&text, "the program exceeded its memory limit (maxMemoryMb: %lld); the kernel killed it%s",
                        (long long)env->host->config.max_memory_mb, status);
    else if (verdict)
        (void)!asprintf(&text, "the program exhausted the JavaScript heap (maxOldGenerationSizeMb: %lld)%s; V8: %.*s",
                        (long long)env->host->config.max_old_generation_size_mb, status, verdict_len, verdict);
    else if (env->stderr_tail_len)
        (void)!asprintf(&text, "%s%s%s; stderr: %.*s", what, status, transport, (int)env->stderr_tail_len,
                        env->stderr_tail);
    else
        (void)!asprintf(&text, "%s%s%s", what, status, transport);
    return text;
}

void ptc__env_fail(struct ptc_env *env, enum ptc_failure kind, const char *message)
{
    if (env->events)
        env->events->failed(env->consumer, kind, message);
    else if (env->identity.owner) /* nobody gets a result for an idle failure: tell the host's logger */
        ptc__log(env->host, DSH_LOG_WARN, "retained environment of owner \"%s\" ended while idle (%s): %s",
                 env->identity.owner, ptc_failure_name(kind), message);
    else if (env->warm_up && env->state != PTC_ENV_CLOSING)
        ptc__log(env->host, DSH_LOG_WARN, "a prewarmed process ended before serving a program (%s): %s",
                 ptc_failure_name(kind), message);
    ptc__env_terminate(env);
}

static void on_drain_timeout(struct ptc_timer *timer)
{
    struct ptc_env *env = ptc__container_of(timer, struct ptc_env, drain);
    /* Pipes still open after the range is gone and graceMs passed: stop waiting for them. */
    ptc__log(env->host, DSH_LOG_WARN, "output pipes of a finished Node process stayed open %lld ms after it ended; closing them",
             (long long)env->host->config.grace_ms);
    env->drained = true;
    ptc__env_schedule_close(env);
}

void ptc__envs_init(struct ptc_envs *set, struct ptc_host *host)
{
    *set = (struct ptc_envs){.host = host};
}

void ptc__envs_on_expired(struct ptc_envs *set, ptc_envs_expired_fn fn, void *ctx)
{
    set->expired = fn;
    set->expired_ctx = ctx;
}

struct ptc_env *ptc__envs_next(const struct ptc_envs *set, const struct ptc_env *env)
{
    return env ? env->next : set->head;
}

bool ptc__envs_closing(const struct ptc_envs *set)
{
    for (struct ptc_env *env = set->head; env; env = env->next)
        if (!env->cleanup_failed)
            return true;
    return false;
}

static bool owner_wants(const struct ptc_env *env, enum ptc_owned which)
{
    bool ending = env->invalidated || env->state == PTC_ENV_CLOSING;
    switch (which) {
    case PTC_OWNED_CURRENT:
        return !ending && !env->closed;
    case PTC_OWNED_ENDING:
        return ending && !env->closed;
    case PTC_OWNED_ANY:
        return !env->closed;
    }
    return false;
}

struct ptc_env *ptc__envs_find_owned(const struct ptc_envs *set, const char *owner, enum ptc_owned which)
{
    for (struct ptc_env *env = set->head; env; env = env->next)
        if (env->identity.owner && strcmp(env->identity.owner, owner) == 0 && owner_wants(env, which))
            return env;
    return NULL;
}

void ptc__envs_destroy_all(struct ptc_envs *set)
{
    while (set->head)
        destroy(set->head);
}

static void free_identity(struct ptc_env *env)
{
    free(env->policy_json);
    free((char *)env->identity.owner);
    free((char *)env->identity.mode);
    free((char *)env->identity.workspace_root);
    free((char *)env->identity.session_id);
}

struct ptc_env *ptc__env_new(struct ptc_envs *set, json_object *policy, const char *owner, const char *format,
                             bool retain)
{
    struct ptc_host *host = set->host;
    struct ptc_env *env = calloc(1, sizeof *env);
    if (!env)
        return NULL;
    env->set = set;
    env->host = host;
    env->format = format;
    env->retain = retain;
    env->control.fd = -1;
    env->out.watch.fd = env->err.watch.fd = -1;
    env->policy_json = strdup(json_object_to_json_string_ext(policy, JSON_C_TO_STRING_PLAIN));
    env->identity.mode = dup_string(policy, "mode");
    env->identity.workspace_root = dup_string(policy, "workspaceRoot");
    env->identity.session_id = dup_string(policy, "sessionId");
    env->identity.owner = owner ? strdup(owner) : NULL;
    if (!env->policy_json || !env->identity.mode || !env->identity.workspace_root || !env->identity.session_id ||
        (owner && !env->identity.owner) || ptc__timer_init(&host->loop, &env->drain, on_drain_timeout) < 0) {
        free_identity(env);
        free(env);
        return NULL;
    }
    if (ptc__timer_init(&host->loop, &env->freeze_poll, on_freeze_poll) < 0) {
        ptc__timer_destroy(&host->loop, &env->drain);
        free_identity(env);
        free(env);
        return NULL;
    }
    if (ptc__timer_init(&host->loop, &env->idle, on_idle_expired) < 0) {
        ptc__timer_destroy(&host->loop, &env->drain);
        ptc__timer_destroy(&host->loop, &env->freeze_poll);
        free_identity(env);
        free(env);
        return NULL;
    }
    env->next = set->head;
    set->head = env;
    env->state = PTC_ENV_CONFINING;
    return env;
}

static void close_pipe(struct ptc_env *env, struct ptc_pipe *pipe)
{
    if (pipe->watch.fd < 0)
        return;
    ptc__watch_remove(&env->host->loop, &pipe->watch);
    close(pipe->watch.fd);
    pipe->watch.fd = -1;
}

void ptc__env_close_fds(struct ptc_env *env)
{
    ptc__watch_remove(&env->host->loop, &env->control_watch);
    ptc__control_destroy(&env->control);
    close_pipe(env, &env->out);
    close_pipe(env, &env->err);
    ptc__watch_remove(&env->host->loop, &env->quiescence_watch);
}

/* An owned environment's idle time counts from here (the end of its last run); its idle timer
 * runs only while nothing is attached. */
static void become_idle(struct ptc_env *env)
{
    if (!env->identity.owner || env->invalidated)
        return;
    env->idle_order = ++env->set->idle_seq;
    if (env->host->config.idle_release_ms > 0)
        ptc__timer_arm(&env->idle, (uint64_t)env->host->config.idle_release_ms);
}

static void stop_idling(struct ptc_env *env)
{
    env->idle_order = 0;
    ptc__timer_arm(&env->idle, 0);
}

static void on_idle_expired(struct ptc_timer *timer)
{
    struct ptc_env *env = ptc__container_of(timer, struct ptc_env, idle);
    if (env->state != PTC_ENV_IDLE || env->events || env->invalidated)
        return;
    ptc__log(env->host, DSH_LOG_INFO, "the retained environment of owner \"%s\" ran nothing for %lld ms "
                                      "(idleReleaseMs); it is released",
             env->identity.owner, (long long)env->host->config.idle_release_ms);
    if (env->set->expired)
        env->set->expired(env->set->expired_ctx, env);
    ptc__env_terminate(env);
}

uint64_t ptc__env_idle_order(const struct ptc_env *env)
{
    return env->state == PTC_ENV_IDLE && !env->events ? env->idle_order : 0;
}

uint64_t ptc__env_attach(struct ptc_env *env, const struct ptc_env_events *events, void *arg, bool *ret_ready)
{
    stop_idling(env);
    env->events = events;
    env->consumer = arg;
    env->consumer_wire_id = ++env->wire_ids_issued;
    /* A confined environment may have served runs before this one (retained, prewarmed): its
     * network accounting starts again here (sandbox service 1.8). */
    const struct dsh_sandbox_service *sb = env->host->services.sandbox;
    if (env->confinement && DSH_HAS(sb, network_begin_run) && sb->network_begin_run)
        sb->network_begin_run(sb->ctx, env->confinement);
    *ret_ready = env->state == PTC_ENV_IDLE;
    if (*ret_ready)
        env->state = PTC_ENV_BUSY;
    return env->consumer_wire_id;
}

void ptc__env_detach(struct ptc_env *env, void *arg)
{
    if (env->consumer != arg || !env->events)
        return;
    ptc__env_hold_reading(env, arg, false);
    env->events = NULL;
    env->consumer = NULL;
    if (env->state == PTC_ENV_BUSY) {
        env->state = PTC_ENV_IDLE;
        become_idle(env);
    }
}

void ptc__env_hold_reading(struct ptc_env *env, const void *consumer, bool held)
{
    bool attached = env->events && env->consumer == consumer;
    if (!held || (attached && env->state != PTC_ENV_CLOSING && !env->quiescent))
        ptc__env_set_reading_held(env, held && attached);
}

void *ptc__env_consumer(const struct ptc_env *env)
{
    return env->events ? env->consumer : NULL;
}

void ptc__env_invalidate(struct ptc_env *env)
{
    env->invalidated = true;
    stop_idling(env);
}

void ptc__env_request_warm_up(struct ptc_env *env)
{
    env->warm_up = true;
    env->warm_ups_left = PTC_WARM_UP_EVALUATIONS;
}

void ptc__env_mark_initialized(struct ptc_env *env)
{
    env->initialized = true;
}

void ptc__env_terminate_unattached(struct ptc_env *env)
{
    if (!env->events)
        ptc__env_terminate(env);
}

enum ptc_env_state ptc__env_state(const struct ptc_env *env)
{
    return env->state;
}

const struct ptc_env_identity *ptc__env_identity(const struct ptc_env *env)
{
    return &env->identity;
}

const char *ptc__env_format(const struct ptc_env *env)
{
    return env->format;
}

bool ptc__env_retains(const struct ptc_env *env)
{
    return env->retain;
}

bool ptc__env_initialized(const struct ptc_env *env)
{
    return env->initialized;
}

bool ptc__env_runs_stripped(const struct ptc_env *env)
{
    return env->runs_stripped;
}

bool ptc__env_invalidated(const struct ptc_env *env)
{
    return env->invalidated;
}

bool ptc__env_cleanup_failed(const struct ptc_env *env)
{
    return env->cleanup_failed;
}

bool ptc__env_closed(const struct ptc_env *env)
{
    return env->closed;
}

const struct dsh_confinement *ptc__env_confinement(const struct ptc_env *env)
{
    return env->confinement;
}

int ptc__env_send(struct ptc_env *env, json_object *frame)
{
    const char *text = json_object_to_json_string_ext(frame, DSH_JSON_PRINT_FLAGS);
    return ptc__env_send_text(env, text, strlen(text));
}

int ptc__env_send_text(struct ptc_env *env, const char *text, size_t len)
{
    int rc = ptc__control_queue(&env->control, text, len);
    if (rc < 0)
        return rc;
    rc = ptc__control_flush(&env->control);
    if (rc == 0)
        ptc__env_watch_control(env, true);
    return rc < 0 ? rc : 0;
}

/* Kills the range (a frozen one at once); the environment closes once it is quiescent. */
static void kill_range(struct ptc_env *env)
{
    const struct dsh_subprocess_service *sp = env->host->services.subprocess;
    if (sp->terminate(sp->ctx, env->process, 0) < 0) {
        env->cleanup_failed = true;
        ptc__env_schedule_close(env);
    }
}

static void kill_frozen(struct ptc_deferred *call)
{
    kill_range(ptc__container_of(call, struct ptc_env, freeze_call));
}

/* The range stands frozen: nothing of it runs any more, so the consumer gets what the pipes
 * already hold and then its result; the kill and the reap follow in the background, and the
 * environment stays listed until it is quiescent. */
static void deliver_frozen(struct ptc_deferred *call)
{
    struct ptc_env *env = ptc__container_of(call, struct ptc_env, freeze_call);
    env->freezing = false;
    ptc__timer_arm(&env->freeze_poll, 0);
    if (env->quiescent || env->cleanup_failed)
        return; /* it ended on its own meanwhile: close_now tells the consumer */
    ptc__env_drain_frozen(env);
    const struct ptc_env_events *events = env->events;
    void *consumer = env->consumer;
    env->events = NULL;
    env->consumer = NULL;
    if (events)
        events->closed(consumer, 0);
    /* Queued behind the consumer's own deferred delivery, so the kill is off the result's path. */
    ptc__defer(&env->host->loop, &env->freeze_call, kill_frozen);
}

/* A freeze is polled as soon as it is asked for and then FREEZE_SPIN_POLLS times on consecutive
 * dispatches (about 80 us), which catch a quick freeze such as a one-thread Python range's; then
 * on a timer, every FREEZE_QUICK_WAIT_US during the first FREEZE_QUICK_MS, then every
 * millisecond. Every thread of the range must run to reach the freezer: a host that kept polling
 * on every dispatch held one of the machine's two cores, and a Node range's freeze that takes 0.2
 * ms on an idle machine took up to 4.5 ms (plugin/README.md, "States"). graceMs after the freeze
 * was asked for, the range is killed as if it could not be frozen. */
#define FREEZE_SPIN_POLLS    4u
#define FREEZE_QUICK_WAIT_US 50u
#define FREEZE_QUICK_MS      1u

static void on_poll_frozen_call(struct ptc_deferred *call);

static void poll_frozen(struct ptc_env *env)
{
    const struct dsh_subprocess_service *sp = env->host->services.subprocess;
    int rc = sp->freeze(sp->ctx, env->process);
    if (rc == 1) {
        ptc__defer(&env->host->loop, &env->freeze_call, deliver_frozen);
        return;
    }
    uint64_t waited_ns = ptc__loop_now_ns() - env->freeze_started_ns;
    if (rc == 0 && waited_ns < (uint64_t)env->host->config.grace_ms * 1000000u) {
        if (env->freeze_spins++ < FREEZE_SPIN_POLLS)
            ptc__defer(&env->host->loop, &env->freeze_call, on_poll_frozen_call);
        else if (waited_ns < FREEZE_QUICK_MS * 1000000u)
            ptc__timer_arm_us(&env->freeze_poll, FREEZE_QUICK_WAIT_US);
        else
            ptc__timer_arm(&env->freeze_poll, 1);
        return;
    }
    /* Not frozen in time (or the freezer failed): wait for quiescence as without one. */
    env->freezing = false;
    kill_range(env);
}

/* A range that ended on its own while freezing closes as without a freezer. */
static void poll_frozen_again(struct ptc_env *env)
{
    if (env->freezing && !env->quiescent && !env->cleanup_failed)
        poll_frozen(env);
}

static void on_poll_frozen_call(struct ptc_deferred *call)
{
    poll_frozen_again(ptc__container_of(call, struct ptc_env, freeze_call));
}

static void on_freeze_poll(struct ptc_timer *timer)
{
    poll_frozen_again(ptc__container_of(timer, struct ptc_env, freeze_poll));
}

/* A temporary environment's consumer waits for its result: freeze the range where the service
 * can, so the result need not wait for the kernel to tear every process down. */
static bool freeze_for_delivery(struct ptc_env *env)
{
    const struct dsh_subprocess_service *sp = env->host->services.subprocess;
    if (env->retain || !env->events ||
        sp->struct_size < offsetof(struct dsh_subprocess_service, freeze) + sizeof sp->freeze || !sp->freeze)
        return false;
    env->freeze_started_ns = ptc__loop_now_ns();
    int rc = sp->freeze(sp->ctx, env->process);
    if (rc < 0) /* unsupported here: the result waits for quiescence */
        return false;
    env->freezing = true;
    if (rc == 1)
        ptc__defer(&env->host->loop, &env->freeze_call, deliver_frozen);
    else
        poll_frozen(env);
    return true;
}

void ptc__env_terminate(struct ptc_env *env)
{
    if (env->state == PTC_ENV_CLOSING)
        return;
    env->state = PTC_ENV_CLOSING;
    stop_idling(env);
    ptc__env_hold_reading(env, NULL, false);
    if (env->confine_pending) {
        const struct dsh_sandbox_service *sb = env->host->services.sandbox;
        if (sb->cancel_confine(sb->ctx, env->confine_op) == 0)
            env->confine_pending = false;
        /* else on_confined is still coming; after_confined sees CLOSING */
    }
    if (env->process && !env->quiescent) {
        if (!freeze_for_delivery(env))
            kill_range(env);
        return;
    }
    if (!env->confine_pending)
        ptc__env_schedule_close(env);
}

void ptc__env_retry_cleanup(struct ptc_env *env)
{
    if (!env->cleanup_failed || !env->process)
        return;
    const struct dsh_subprocess_service *sp = env->host->services.subprocess;
    if (sp->terminate(sp->ctx, env->process, 0) == 0 && sp->poll_quiescent(sp->ctx, env->process, &env->exit_status) == 1) {
        env->cleanup_failed = false;
        env->quiescent = true;
    }
    ptc__env_schedule_close(env);
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

void ptc__env_cancel_wait(struct ptc_env *env, void *arg)
{
    DSH_LIST_FOREACH_LINK(link, &env->waiters)
        if ((*link)->arg == arg) {
            struct ptc_env_waiter *w = *link;
            DSH_LIST_UNLINK(link);
            free(w);
            return;
        }
}

static void destroy(struct ptc_env *env)
{
    struct ptc_host *host = env->host;
    DSH_LIST_REMOVE(&env->set->head, env);
    ptc__timer_destroy(&host->loop, &env->drain);
    ptc__timer_destroy(&host->loop, &env->freeze_poll);
    ptc__timer_destroy(&host->loop, &env->idle);
    ptc__env_close_fds(env);
    if (env->process) {
        const struct dsh_subprocess_service *sp = host->services.subprocess;
        sp->release(sp->ctx, env->process);
    }
    if (env->confinement) {
        const struct dsh_sandbox_service *sb = host->services.sandbox;
        sb->release_confinement(sb->ctx, env->confinement);
    }
    dsh_strv_free(env->launch_env);
    ptc__defer_cancel(&env->confined_call);
    ptc__defer_cancel(&env->close_call);
    ptc__defer_cancel(&env->freeze_call);
    free_identity(env);
    free(env->launch_error);
    ptc__images_clear(&env->images);
    while (env->waiters) { /* unload: nobody is told any more */
        struct ptc_env_waiter *w = env->waiters;
        env->waiters = w->next;
        free(w);
    }
    free(env);
}

static void close_now(struct ptc_deferred *call)
{
    struct ptc_env *env = ptc__container_of(call, struct ptc_env, close_call);
    if (env->confine_pending)
        return; /* on_confined will come back through after_confined */
    bool closed = env->cleanup_failed || !env->process || (env->quiescent && env->drained);
    if (!closed)
        return;
    int status = env->cleanup_failed ? DSH_E_CLEANUP_FAILED : 0;
    /* Nobody waits for this close (a result already delivered from a frozen range, an idle
     * environment): the host's logger is the only one to learn that processes may remain. */
    if (status && !env->events && !env->waiters)
        ptc__log(env->host, DSH_LOG_WARN, "a finished Node process's range could not be killed or reaped; it stays "
                                          "listed until a release or the unload retries the cleanup");
    const struct ptc_env_events *events = env->events;
    void *consumer = env->consumer;
    env->events = NULL;
    env->consumer = NULL;
    if (events)
        events->closed(consumer, status);
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
            destroy(env);
    }
}

void ptc__env_ref(struct ptc_env *env)
{
    env->refs++;
}

void ptc__env_unref(struct ptc_env *env)
{
    if (--env->refs == 0 && env->closed)
        destroy(env);
}

void ptc__env_schedule_close(struct ptc_env *env)
{
    ptc__defer(&env->host->loop, &env->close_call, close_now);
}

void ptc__env_progress(struct ptc_env *env)
{
    if (!env->quiescent && !env->cleanup_failed)
        return;
    if (env->state != PTC_ENV_CLOSING) {
        /* The range ended on its own: early process exit. */
        char *why = ptc__env_exit_description(env);
        ptc__env_fail(env, PTC_FAILURE_WORKER_EXIT, why ? why : "the Node process exited");
        free(why);
    }
    if (env->cleanup_failed || (env->out.eof && env->err.eof)) {
        env->drained = true;
        ptc__env_schedule_close(env);
        return;
    }
    ptc__timer_arm(&env->drain, (uint64_t)env->host->config.grace_ms);
}

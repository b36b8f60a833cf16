/* Environment I/O: the control channel of an untrusted child, raw stdout/stderr, quiescence.
 * Frames of the attached consumer's evaluation go to it; anything else ends the environment. */
#include "env_io.h"
#include "language.h"
#include "env_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define PIPE_CHUNK 65536

/* The environment can no longer be trusted: fail its consumer (if any) and terminate it. */
static void env_protocol(struct ptc_env *env, const char *message)
{
    ptc__env_fail(env, PTC_FAILURE_PROTOCOL, message);
}

/* Ready for a consumer: busy at once when one is attached. */
static void become_ready(struct ptc_env *env)
{
    env->state = env->events ? PTC_ENV_BUSY : PTC_ENV_IDLE;
    if (env->events)
        env->events->ready(env->consumer);
}

/* The warm-up's bindings: the language's warm-up binding, or none. */
static json_object *warm_up_bindings(const struct ptc_language *language)
{
    json_object *bindings = json_object_new_array();
    if (!language->warm_up_binding_global)
        return bindings;
    json_object *binding = json_object_new_object(), *functions = json_object_new_array();
    json_object_object_add(binding, "global", json_object_new_string(language->warm_up_binding_global));
    json_object_array_add(functions, json_object_new_string(language->warm_up_binding_function));
    json_object_object_add(binding, "functions", functions);
    json_object_array_add(bindings, binding);
    return bindings;
}

/* A prewarmed process's evaluations before any program: the language's constant warm-up text,
 * its warm-up binding only, the completion discarded, valid in every program format. Nothing of
 * them depends on a request, and `warmUp` has the child remove the binding's globals after. */
static void send_warm_up(struct ptc_env *env)
{
    const struct ptc_language *language = env->host->language;
    env->warm_up_wire_id = ++env->wire_ids_issued;
    json_object *frame = ptc__frame_for_run(PTC_FRAME_RUN, env->warm_up_wire_id);
    json_object_object_add(frame, "format", json_object_new_string(env->format));
    json_object_object_add(frame, "retain", json_object_new_boolean(false));
    json_object_object_add(frame, "program", json_object_new_string(language->warm_up_program));
    json_object_object_add(frame, "cwd", json_object_new_string(env->identity.workspace_root));
    json_object_object_add(frame, "discardCompletion", json_object_new_boolean(true));
    json_object_object_add(frame, "bindings", warm_up_bindings(language));
    json_object_object_add(frame, "warmUp", json_object_new_boolean(true));
    int rc = ptc__env_send(env, frame);
    json_object_put(frame);
    if (rc < 0) {
        env_protocol(env, "the warm-up evaluation could not be sent");
        return;
    }
    env->warming = true;
}

/* A call of the warm-up binding, at most PTC_WARM_UP_CALLS_MAX in all, is answered with its
 * arguments array; any other call ends the process. */
static void on_warm_up_call(struct ptc_env *env, const struct ptc_frame *frame)
{
    const struct ptc_language *language = env->host->language;
    if (!language->warm_up_binding_global || strcmp(frame->global, language->warm_up_binding_global) != 0 ||
        strcmp(frame->name, language->warm_up_binding_function) != 0) {
        env_protocol(env, "the warm-up evaluation of a prewarmed process called a binding it was not given");
        return;
    }
    if (++env->warm_up_calls > PTC_WARM_UP_CALLS_MAX) {
        env_protocol(env, "the warm-up evaluation of a prewarmed process made too many binding calls");
        return;
    }
    size_t len;
    char *reply = ptc__frame_reply_value(frame->call, frame->args, frame->args_bytes, &len);
    int rc = reply ? ptc__env_send_text(env, reply, len) : -ENOMEM;
    free(reply);
    if (rc < 0)
        env_protocol(env, "a warm-up binding call could not be answered");
}

/* A warm-up's only acceptable answers are calls of its binding and a successful result; anything
 * else ends the process. */
static void on_warm_up_frame(struct ptc_env *env, const struct ptc_frame *frame)
{
    if (frame->type == PTC_FRAME_CALL) {
        on_warm_up_call(env, frame);
        return;
    }
    if (frame->type != PTC_FRAME_RESULT || !frame->ok) {
        env_protocol(env, "the warm-up evaluation of a prewarmed process did not succeed");
        return;
    }
    env->warming = false;
    if (--env->warm_ups_left > 0) {
        send_warm_up(env);
        return;
    }
    if (!env->events)
        ptc__log(env->host, DSH_LOG_DEBUG,
                 "a prewarmed process is ready (mode %s, session \"%s\", %u warm-up binding calls answered)",
                 env->identity.mode, env->identity.session_id, env->warm_up_calls);
    become_ready(env);
}

static void on_hello(struct ptc_env *env, const struct ptc_frame *frame)
{
    char message[256];
    if (frame->protocol != PTC_PROTOCOL_REVISION) {
        snprintf(message, sizeof message,
                 "the bootstrap speaks control protocol revision %lld, the runtime needs %d; "
                 "upgrade launch.bootstrapPath with the host",
                 (long long)frame->protocol, PTC_PROTOCOL_REVISION);
        env_protocol(env, message);
        return;
    }
    if (!env->host->language->hello_supported(frame, message, sizeof message)) {
        env_protocol(env, message);
        return;
    }
    env->runs_stripped = frame->stripped_programs;
    if (env->warm_up)
        send_warm_up(env);
    else
        become_ready(env);
}

static void handle_line(struct ptc_env *env, char *line, size_t len)
{
    struct ptc_frame frame;
    char why[256], message[300];
    if (ptc__frame_parse(line, len, &frame, why, sizeof why) < 0) {
        snprintf(message, sizeof message, "invalid control frame: %s", why);
        env_protocol(env, message);
        return;
    }
    if (env->state == PTC_ENV_STARTING) {
        if (env->warming && frame.run == env->warm_up_wire_id && frame.type != PTC_FRAME_HELLO)
            on_warm_up_frame(env, &frame);
        else if (env->warming)
            env_protocol(env, frame.type == PTC_FRAME_HELLO ? "repeated hello frame"
                                                            : "control frame for an unknown run");
        else if (frame.type == PTC_FRAME_HELLO)
            on_hello(env, &frame);
        else
            env_protocol(env, "the bootstrap did not start with a hello frame");
    } else if (frame.type == PTC_FRAME_HELLO) {
        env_protocol(env, "repeated hello frame");
    } else if (!env->events || frame.run != env->consumer_wire_id) {
        /* Only the active evaluation may speak; an ended one has nothing more to say. */
        env_protocol(env, env->events ? "control frame for an unknown run" : "control frame while no run is active");
    } else {
        env->events->frame(env->consumer, &frame);
    }
    ptc__frame_release(&frame);
}

static void on_control(struct ptc_watch *watch, uint32_t events)
{
    struct ptc_env *env = ptc__container_of(watch, struct ptc_env, control_watch);
    struct ptc_loop *loop = &env->host->loop;
    if (events & EPOLLOUT) {
        int rc = ptc__control_flush(&env->control);
        if (rc != 0)
            ptc__env_watch_control(env, false);
    }
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        return;
    int rc = ptc__control_read(&env->control);
    char *line;
    size_t len;
    int got = 0;
    /* Once the environment is closing its remaining bytes are not trusted. */
    while (rc >= 0 && env->state != PTC_ENV_CLOSING &&
           (got = ptc__control_next_line(&env->control, &line, &len)) > 0)
        handle_line(env, line, len);
    if (got == 0)
        ptc__control_trim(&env->control);
    if (env->state == PTC_ENV_CLOSING && env->events &&
        (ptc__control_has_partial(&env->control) || (rc >= 0 && ptc__control_next_line(&env->control, &line, &len) != 0)))
        env->events->trailing(env->consumer);
    if (rc == -E2BIG || got == -E2BIG) {
        char message[128];
        snprintf(message, sizeof message, "a control frame exceeds maxMessageBytes (%lld bytes)",
                 (long long)env->host->config.max_message_bytes);
        env_protocol(env, message);
        ptc__watch_remove(loop, watch);
        return;
    }
    if (rc < 0 || env->control.eof) {
        ptc__watch_remove(loop, watch);
        if (env->state == PTC_ENV_CLOSING)
            return;
        env->control_lost = true;
        env->control_error = rc < 0 ? rc : 0;
        if (env->control.eof && ptc__control_has_partial(&env->control)) {
            env_protocol(env, "the control channel ended inside a frame");
            return;
        }
        /* Report with the exit status once the range is quiescent (ptc__env_progress). */
        const struct dsh_subprocess_service *sp = env->host->services.subprocess;
        sp->terminate(sp->ctx, env->process, (uint32_t)env->host->config.grace_ms);
    }
}

/* ---- raw stdout / stderr ----------------------------------------------------------------- */

static void keep_stderr_tail(struct ptc_env *env, const char *text, size_t len)
{
    if (len >= PTC_STDERR_TAIL) {
        memcpy(env->stderr_tail, text + len - PTC_STDERR_TAIL, PTC_STDERR_TAIL);
        env->stderr_tail_len = PTC_STDERR_TAIL;
        return;
    }
    size_t keep = env->stderr_tail_len + len > PTC_STDERR_TAIL ? PTC_STDERR_TAIL - len : env->stderr_tail_len;
    memmove(env->stderr_tail, env->stderr_tail + env->stderr_tail_len - keep, keep);
    memcpy(env->stderr_tail + keep, text, len);
    env->stderr_tail_len = keep + len;
}

/* Reads up to rounds chunks of a pipe; at end of file it stops watching it. With flush, an
 * incomplete UTF-8 sequence left when the pipe is empty is settled as at end of file (the range
 * stands frozen: nothing can complete it before the result). */
static void read_pipe(struct ptc_env *env, struct ptc_pipe *pipe, int rounds, bool flush)
{
    char buf[PIPE_CHUNK];
    for (int round = 0; round < rounds && pipe->watch.fd >= 0 && !pipe->eof; round++) {
        ssize_t n = read(pipe->watch.fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        bool again = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        if (again && !flush)
            return;
        bool eof = !again && n <= 0;
        char *text = NULL;
        size_t len = 0;
        if (ptc__utf8_sanitize(&pipe->carry, buf, n > 0 ? (size_t)n : 0, eof || (again && flush), &text, &len) == 0 &&
            len) {
            if (pipe->is_stderr)
                keep_stderr_tail(env, text, len);
            /* Raw bytes have no evaluation identity: they belong to whatever run is active;
             * idle stdout is discarded and idle stderr only feeds the diagnostic tail. */
            if (env->events)
                env->events->output(env->consumer, text, len);
        }
        free(text);
        if (again)
            return;
        if (eof) {
            pipe->eof = true;
            ptc__watch_remove(&env->host->loop, &pipe->watch);
            ptc__env_progress(env);
            return;
        }
    }
}

static void on_pipe(struct ptc_watch *watch, uint32_t events)
{
    (void)events;
    struct ptc_pipe *pipe = ptc__container_of(watch, struct ptc_pipe, watch);
    read_pipe(pipe->env, pipe, 16, false);
}

/* A frozen range's pipes hold at most their capacity (at most 1 MiB for an unprivileged
 * process), so this many chunks empty them. */
#define FROZEN_PIPE_ROUNDS 32

void ptc__env_drain_frozen(struct ptc_env *env)
{
    read_pipe(env, &env->out, FROZEN_PIPE_ROUNDS, true);
    read_pipe(env, &env->err, FROZEN_PIPE_ROUNDS, true);
    if (!env->control_watch.armed || !env->events)
        return;
    int rc = ptc__control_read(&env->control);
    char *line;
    size_t len;
    if (ptc__control_has_partial(&env->control) || (rc >= 0 && ptc__control_next_line(&env->control, &line, &len) != 0))
        env->events->trailing(env->consumer);
}

void ptc__env_watch_control(struct ptc_env *env, bool writing)
{
    if (env->control_watch.armed)
        ptc__watch_modify(&env->host->loop, &env->control_watch,
                          (env->reading_held ? 0 : EPOLLIN) | (writing ? EPOLLOUT : 0));
}

/* A held pipe or socket still reports hang-up and errors: its handler then reads what is left,
 * which the kernel bounds (nothing more can be written once the writer is gone). */
void ptc__env_set_reading_held(struct ptc_env *env, bool held)
{
    if (env->reading_held == held)
        return;
    env->reading_held = held;
    ptc__env_watch_control(env, ptc__control_writing(&env->control));
    struct ptc_pipe *pipes[] = {&env->out, &env->err};
    for (size_t i = 0; i < sizeof pipes / sizeof *pipes; i++)
        if (pipes[i]->watch.armed)
            ptc__watch_modify(&env->host->loop, &pipes[i]->watch, held ? 0 : EPOLLIN);
}

static void on_quiescent(struct ptc_watch *watch, uint32_t events)
{
    (void)events;
    struct ptc_env *env = ptc__container_of(watch, struct ptc_env, quiescence_watch);
    ptc__env_set_reading_held(env, false);
    const struct dsh_subprocess_service *sp = env->host->services.subprocess;
    int rc = sp->poll_quiescent(sp->ctx, env->process, &env->exit_status);
    if (rc == 0)
        return;
    ptc__watch_remove(&env->host->loop, watch);
    if (rc < 0)
        env->cleanup_failed = true;
    else
        env->quiescent = true;
    /* ABI 1.3: the range's counters tell a kill by its memory limit from any other SIGKILL. */
    struct dsh_range_usage usage = {.struct_size = sizeof usage};
    if (rc > 0 && DSH_HAS(sp, usage) && sp->usage && sp->usage(sp->ctx, env->process, &usage) == 0 &&
        DSH_HAS(&usage, oom_kills))
        env->memory_limit_kills = usage.oom_kills;
    /* Bytes the child sent before it ended are still in the socket: read them first. */
    if (env->control_watch.armed && env->state != PTC_ENV_CLOSING)
        on_control(&env->control_watch, EPOLLIN);
    ptc__env_progress(env);
}

int ptc__env_watch_process(struct ptc_env *env)
{
    struct ptc_loop *loop = &env->host->loop;
    struct dsh_process *p = env->process;
    ptc__control_init(&env->control, p->control_fd, (uint64_t)env->host->config.max_message_bytes);
    env->out = (struct ptc_pipe){.env = env, .is_stderr = false};
    env->err = (struct ptc_pipe){.env = env, .is_stderr = true};
    env->out.watch.fd = env->err.watch.fd = -1;
    int rc;
    if ((rc = ptc__watch_add(loop, &env->control_watch, p->control_fd, EPOLLIN, on_control)) < 0)
        return rc;
    if ((rc = ptc__watch_add(loop, &env->out.watch, p->stdout_fd, EPOLLIN, on_pipe)) < 0)
        return rc;
    if ((rc = ptc__watch_add(loop, &env->err.watch, p->stderr_fd, EPOLLIN, on_pipe)) < 0)
        return rc;
    return ptc__watch_add(loop, &env->quiescence_watch, p->quiescence_fd, EPOLLIN, on_quiescent);
}

/* Run I/O: the control channel (frames from an untrusted child), stdout/stderr pipes, the
 * quiescence fd, binding calls and their replies. */
#include "frames.h"
#include "run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define PIPE_CHUNK 65536

static void send_frame(struct ptc_run *run, json_object *frame)
{
    const char *text = json_object_to_json_string_ext(frame, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc = ptc__control_queue(&run->control, text, strlen(text));
    if (rc == -E2BIG) {
        ptc__run_select(run, "protocol", "queued control writes exceed maxMessageBytes (%lld bytes)",
                        (long long)run->inst->config.max_message_bytes);
        return;
    }
    if (rc < 0) {
        ptc__run_select(run, "worker-exit", "control write failed: %s", dsh_strerror(rc));
        return;
    }
    rc = ptc__control_flush(&run->control);
    if (rc == 0)
        ptc__watch_modify(&run->inst->loop, &run->control_watch, EPOLLIN | EPOLLOUT);
    else if (rc < 0 && !run->outcome_selected)
        run->control_lost = true; /* EOF handling reports it with the exit status */
}

void ptc__run_send_program(struct ptc_run *run)
{
    json_object *frame = json_object_new_object();
    json_object_object_add(frame, "type", json_object_new_string("run"));
    json_object_object_add(frame, "run", json_object_new_int64(1));
    json_object_object_add(frame, "format", json_object_new_string("async-function"));
    json_object_object_add(frame, "program", json_object_new_string(run->spec.program));
    json_object_object_add(frame, "cwd", json_object_new_string(run->spec.cwd));
    json_object_object_add(frame, "discardCompletion", json_object_new_boolean(run->spec.discard_completion));
    json_object_object_add(frame, "bindings", json_object_get(run->spec.bindings));
    /* From here on a timeout reports "during execution". */
    run->code_started = true;
    run->phase = PTC_RUNNING;
    send_frame(run, frame);
    json_object_put(frame);
}

/* ---- frames from the child ------------------------------------------------------------------ */

static void on_hello(struct ptc_run *run, const struct ptc_frame *frame)
{
    if (frame->protocol != PTC_PROTOCOL_REVISION) {
        ptc__run_select(run, "protocol",
                        "the bootstrap speaks control protocol revision %lld, the runtime needs %d; "
                        "upgrade launch.bootstrapPath with the host",
                        (long long)frame->protocol, PTC_PROTOCOL_REVISION);
        return;
    }
    long major = 0;
    if (!frame->node || sscanf(frame->node, "v%ld", &major) != 1 || major < PTC_MIN_NODE_MAJOR) {
        ptc__run_select(run, "protocol", "Node.js %s is older than the supported v%d line",
                        frame->node ? frame->node : "(unknown)", PTC_MIN_NODE_MAJOR);
        return;
    }
    ptc__run_send_program(run);
}

static struct ptc_open_call *find_call(struct ptc_run *run, uint64_t id)
{
    for (size_t i = 0; i < run->n_calls; i++)
        if (run->calls[i].id == id)
            return &run->calls[i];
    return NULL;
}

static void on_call(struct ptc_run *run, const struct ptc_frame *frame)
{
    const struct ptc_config *config = &run->inst->config;
    if (find_call(run, frame->call)) {
        ptc__run_select(run, "protocol", "binding call id %llu is already open", (unsigned long long)frame->call);
        return;
    }
    if (!ptc__spec_allows(&run->spec, frame->global, frame->name)) {
        ptc__run_select(run, "protocol", "the program called an undeclared binding %s.%s", frame->global,
                        frame->name);
        return;
    }
    if (run->n_calls >= (size_t)config->max_pending_calls) {
        ptc__run_select(run, "protocol", "more than maxPendingCalls (%lld) simultaneous binding calls",
                        (long long)config->max_pending_calls);
        return;
    }
    if (run->open_arg_bytes + frame->args_bytes > (uint64_t)config->max_message_bytes) {
        ptc__run_select(run, "protocol", "outstanding binding arguments exceed maxMessageBytes (%lld bytes)",
                        (long long)config->max_message_bytes);
        return;
    }
    if (run->n_calls == run->cap_calls) {
        size_t next = run->cap_calls ? run->cap_calls * 2 : 8;
        struct ptc_open_call *grown = realloc(run->calls, next * sizeof *grown);
        if (!grown) {
            ptc__run_select(run, "worker-exit", "out of memory");
            return;
        }
        run->calls = grown;
        run->cap_calls = next;
    }
    run->calls[run->n_calls++] = (struct ptc_open_call){frame->call, frame->args_bytes};
    run->open_arg_bytes += frame->args_bytes;
    const char *args = json_object_to_json_string_ext(frame->args, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    run->cb.on_call(run->cb.userdata, run->id, frame->call, frame->global, frame->name, args, strlen(args));
}

static void on_result(struct ptc_run *run, const struct ptc_frame *frame)
{
    run->terminal_seen = true;
    if (frame->ok) {
        if (frame->has_value) {
            const char *text = json_object_to_json_string_ext(frame->value, JSON_C_TO_STRING_PLAIN);
            if (run->spec.discard_completion) {
                ptc__run_select(run, "protocol", "the child returned a completion that was to be discarded");
                return;
            }
            if (ptc__ledger_charge(&run->ledger, strlen(text)) > 0) {
                ptc__run_select(run, "output-limit",
                                "the completion value does not fit in maxOutputBytes (%lld bytes)",
                                (long long)run->ledger.budget);
                return;
            }
            run->has_value = true;
            run->value = json_object_get(frame->value);
        }
        ptc__run_select(run, NULL, NULL);
        return;
    }
    size_t room = (size_t)ptc__ledger_remaining(&run->ledger);
    if (ptc__ledger_charge(&run->ledger, frame->error_message_len) > 0) {
        size_t keep = ptc__utf8_prefix(frame->error_message, frame->error_message_len, room);
        ptc__run_select(run, "output-limit", "output exceeded maxOutputBytes (%lld bytes); %s: %.*s",
                        (long long)run->ledger.budget, frame->error_kind, (int)keep, frame->error_message);
        return;
    }
    ptc__run_select(run, strcmp(frame->error_kind, "exception") == 0 ? "exception" : "invalid-output", "%.*s",
                    (int)frame->error_message_len, frame->error_message);
}

static void on_output_overflow(struct ptc_run *run)
{
    ptc__run_select(run, "output-limit", "output exceeded maxOutputBytes (%lld bytes)",
                    (long long)run->ledger.budget);
}

static void override_protocol(struct ptc_run *run, const char *message)
{
    if (!run->outcome_selected) {
        ptc__run_select(run, "protocol", "%s", message);
        return;
    }
    run->kind = "protocol";
    free(run->message);
    run->message = strdup(message);
    json_object_put(run->value);
    run->value = NULL;
    run->has_value = false;
}

static void handle_frame(struct ptc_run *run, const char *line, size_t len)
{
    struct ptc_frame frame;
    char why[256];
    if (run->terminal_seen) {
        /* Nothing may follow the terminal frame, whatever the result said. */
        override_protocol(run, "control frame after the result");
        return;
    }
    if (ptc__frame_parse(line, len, &frame, why, sizeof why) < 0) {
        ptc__run_select(run, "protocol", "invalid control frame: %s", why);
        return;
    }
    if (run->phase == PTC_STARTING) {
        if (frame.type == PTC_FRAME_HELLO)
            on_hello(run, &frame);
        else
            ptc__run_select(run, "protocol", "the bootstrap did not start with a hello frame");
        ptc__frame_release(&frame);
        return;
    }
    if (frame.type == PTC_FRAME_HELLO || frame.run != 1) {
        ptc__run_select(run, "protocol", frame.type == PTC_FRAME_HELLO ? "repeated hello frame"
                                                                       : "control frame for an unknown run");
        ptc__frame_release(&frame);
        return;
    }
    switch (frame.type) {
    case PTC_FRAME_TEXT:
        if (ptc__ledger_text(&run->ledger, frame.text, frame.text_len) != 0)
            on_output_overflow(run);
        break;
    case PTC_FRAME_IMAGE:
        if (ptc__ledger_image(&run->ledger, ptc__frame_image_entry(&frame)) != 0)
            on_output_overflow(run);
        break;
    case PTC_FRAME_CALL:
        on_call(run, &frame);
        break;
    case PTC_FRAME_RESULT:
        on_result(run, &frame);
        break;
    default:
        ptc__run_select(run, "protocol", "control frame not valid in per-call execution");
        break;
    }
    ptc__frame_release(&frame);
}

static void on_control(struct ptc_watch *watch, uint32_t events)
{
    struct ptc_run *run = ptc__container_of(watch, struct ptc_run, control_watch);
    struct ptc_loop *loop = &run->inst->loop;
    if (events & EPOLLOUT) {
        int rc = ptc__control_flush(&run->control);
        if (rc != 0)
            ptc__watch_modify(loop, watch, EPOLLIN);
    }
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
        return;
    int rc = ptc__control_read(&run->control);
    const char *line;
    size_t len;
    int got;
    while (rc >= 0 && (got = ptc__control_next_line(&run->control, &line, &len)) > 0) {
        /* After a protocol failure the remaining bytes are not trusted. */
        if (run->outcome_selected && run->kind && strcmp(run->kind, "protocol") == 0)
            break;
        handle_frame(run, line, len);
    }
    if (rc == -E2BIG || (rc >= 0 && got == -E2BIG)) {
        char message[128];
        snprintf(message, sizeof message, "a control frame exceeds maxMessageBytes (%lld bytes)",
                 (long long)run->inst->config.max_message_bytes);
        override_protocol(run, message);
        ptc__watch_remove(loop, watch);
        return;
    }
    if (rc < 0 || run->control.eof) {
        if (run->control.eof && ptc__control_has_partial(&run->control) && !run->outcome_selected)
            ptc__run_select(run, "protocol", "the control channel ended inside a frame");
        if (!run->terminal_seen)
            run->control_lost = true;
        ptc__watch_remove(loop, watch);
        if (!run->outcome_selected)
            ptc__run_select(run, "worker-exit", NULL); /* message filled with the exit status */
    }
}

/* ---- raw stdout / stderr -------------------------------------------------------------------- */

static void keep_stderr_tail(struct ptc_run *run, const char *text, size_t len)
{
    if (len >= PTC_STDERR_TAIL) {
        memcpy(run->stderr_tail, text + len - PTC_STDERR_TAIL, PTC_STDERR_TAIL);
        run->stderr_tail_len = PTC_STDERR_TAIL;
        return;
    }
    size_t keep = run->stderr_tail_len + len > PTC_STDERR_TAIL ? PTC_STDERR_TAIL - len : run->stderr_tail_len;
    memmove(run->stderr_tail, run->stderr_tail + run->stderr_tail_len - keep, keep);
    memcpy(run->stderr_tail + keep, text, len);
    run->stderr_tail_len = keep + len;
}

static void on_pipe(struct ptc_watch *watch, uint32_t events)
{
    (void)events;
    struct ptc_pipe *pipe = ptc__container_of(watch, struct ptc_pipe, watch);
    struct ptc_run *run = pipe->run;
    char buf[PIPE_CHUNK];
    for (int rounds = 0; rounds < 16; rounds++) {
        ssize_t n = read(watch->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        bool eof = n <= 0;
        char *text = NULL;
        size_t len = 0;
        if (ptc__utf8_sanitize(pipe, buf, eof ? 0 : (size_t)n, eof, &text, &len) == 0 && len) {
            if (pipe->is_stderr)
                keep_stderr_tail(run, text, len);
            if (ptc__ledger_text(&run->ledger, text, len) != 0)
                on_output_overflow(run);
        }
        free(text);
        if (eof) {
            pipe->eof = true;
            ptc__watch_remove(&run->inst->loop, watch);
            ptc__run_maybe_finish(run);
            return;
        }
    }
}

void ptc__run_pipe_close(struct ptc_run *run, struct ptc_pipe *pipe)
{
    if (pipe->watch.fd < 0)
        return;
    ptc__watch_remove(&run->inst->loop, &pipe->watch);
    close(pipe->watch.fd);
    pipe->watch.fd = -1;
}

static void on_quiescent(struct ptc_watch *watch, uint32_t events)
{
    (void)events;
    struct ptc_run *run = ptc__container_of(watch, struct ptc_run, quiescence_watch);
    const struct dsh_subprocess_service *sp = run->inst->services.subprocess;
    int rc = sp->poll_quiescent(sp->ctx, run->process, &run->exit_status);
    if (rc == 0)
        return;
    ptc__watch_remove(&run->inst->loop, watch);
    if (rc < 0)
        run->cleanup_failed = true;
    else
        run->quiescent = true;
    /* Bytes the child sent before it died are still in the socket: read them first. */
    if (run->control_watch.armed)
        on_control(&run->control_watch, EPOLLIN);
    ptc__run_maybe_finish(run);
}

int ptc__run_watch_process(struct ptc_run *run)
{
    struct ptc_loop *loop = &run->inst->loop;
    struct dsh_process *p = run->process;
    ptc__control_init(&run->control, p->control_fd, (uint64_t)run->inst->config.max_message_bytes);
    run->out = (struct ptc_pipe){.run = run, .is_stderr = false};
    run->err = (struct ptc_pipe){.run = run, .is_stderr = true};
    run->out.watch.fd = run->err.watch.fd = -1;
    int rc;
    if ((rc = ptc__watch_add(loop, &run->control_watch, p->control_fd, EPOLLIN, on_control)) < 0)
        return rc;
    if ((rc = ptc__watch_add(loop, &run->out.watch, p->stdout_fd, EPOLLIN, on_pipe)) < 0)
        return rc;
    if ((rc = ptc__watch_add(loop, &run->err.watch, p->stderr_fd, EPOLLIN, on_pipe)) < 0)
        return rc;
    return ptc__watch_add(loop, &run->quiescence_watch, p->quiescence_fd, EPOLLIN, on_quiescent);
}

/* ---- replies from the host ------------------------------------------------------------------ */

int ptc__run_reply(struct ptc_run *run, uint64_t call, bool ok, const char *text, size_t len)
{
    struct ptc_open_call *open = find_call(run, call);
    if (!open || run->outcome_selected)
        return DSH_E_NOT_FOUND;
    json_object *value = NULL;
    if (ok && text) {
        value = ptc__json_parse_strict(text, len);
        if (!value && !(len == 4 && memcmp(text, "null", 4) == 0))
            return DSH_E_REQUEST_INVALID;
    }
    json_object *frame = json_object_new_object();
    json_object_object_add(frame, "type", json_object_new_string("reply"));
    json_object_object_add(frame, "call", json_object_new_int64((int64_t)call));
    json_object_object_add(frame, "ok", json_object_new_boolean(ok));
    if (ok && text)
        json_object_object_add(frame, "value", value);
    else if (!ok)
        json_object_object_add(frame, "message", json_object_new_string_len(text ? text : "", text ? (int)len : 0));
    run->open_arg_bytes -= open->arg_bytes;
    *open = run->calls[--run->n_calls];
    const char *encoded = json_object_to_json_string_ext(frame, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (strlen(encoded) > (uint64_t)run->inst->config.max_message_bytes) {
        /* Too large for the channel: the program sees a rejected call instead. */
        json_object_put(frame);
        frame = json_object_new_object();
        json_object_object_add(frame, "type", json_object_new_string("reply"));
        json_object_object_add(frame, "call", json_object_new_int64((int64_t)call));
        json_object_object_add(frame, "ok", json_object_new_boolean(0));
        json_object_object_add(frame, "message", json_object_new_string("the binding result exceeds maxMessageBytes"));
    }
    send_frame(run, frame);
    json_object_put(frame);
    return 0;
}

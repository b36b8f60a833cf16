/* The evaluation side of a run: the run frame, frames the child sends for it (output, binding
 * calls, the terminal frame), raw output while it is active, and replies to binding calls. */
#include "run_frames.h"
#include "outcome.h"
#include "images.h"
#include "utf8.h"
#include "dsh_json_strict.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void send_failed(struct ptc_run *run, int rc)
{
    if (rc == -E2BIG)
        ptc__run_select(run, PTC_FAILURE_PROTOCOL, "queued control writes exceed maxMessageBytes (%lld bytes)",
                        (long long)run->host->config.max_message_bytes);
    else if (rc < 0 && !run->outcome_selected)
        ptc__run_select(run, PTC_FAILURE_WORKER_EXIT, "control write failed: %s", dsh_strerror(rc));
}

static void send_or_fail(struct ptc_run *run, json_object *frame)
{
    send_failed(run, ptc__env_send(run->env, frame));
}

void ptc__run_send_program(struct ptc_run *run)
{
    struct ptc_env *env = run->env;
    json_object *frame = ptc__frame_for_run(PTC_FRAME_RUN, run->wire_id);
    json_object_object_add(frame, "format", json_object_new_string(ptc__env_format(env)));
    json_object_object_add(frame, "retain", json_object_new_boolean(ptc__env_retains(env)));
    json_object_object_add(frame, "program", json_object_new_string(run->spec.program));
    /* A child that announced it runs stripped programs gets the stripper's checked text too (the
     * source stays for its messages), or its syntax error, when both fit in one frame (a byte
     * escapes to at most 6). */
    size_t room = strlen(ptc__frame_text(run->spec.root)) + 256;
    uint64_t most = (uint64_t)run->host->config.max_message_bytes;
    if (run->stripped && ptc__env_runs_stripped(env) && room + 6 * run->stripped_len <= most)
        json_object_object_add(frame, "stripped", json_object_new_string_len(run->stripped, (int)run->stripped_len));
    else if (run->strip_refusal && ptc__env_runs_stripped(env) && room + 6 * run->strip_refusal_len <= most)
        json_object_object_add(frame, "syntaxError",
                               json_object_new_string_len(run->strip_refusal, (int)run->strip_refusal_len));
    json_object_object_add(frame, "cwd", json_object_new_string(run->spec.cwd));
    json_object_object_add(frame, "discardCompletion", json_object_new_boolean(run->spec.discard_completion));
    json_object_object_add(frame, "bindings", json_object_get(run->spec.bindings));
    if (!ptc__env_initialized(env)) {
        const struct ptc_runs_source *source = &run->runs->source;
        char *initializer = source->initializer ? source->initializer(source->ctx) : NULL;
        if (initializer) {
            json_object_object_add(frame, "initializer", json_object_new_string(initializer));
            run->initializing = true;
        }
        free(initializer);
    }
    /* The spec's images are registered right before the program starts (image-register frames
     * precede the run frame on the channel). resolve() already read them; a file that changed
     * since, or another file under an attachment id the environment holds, refuses the run before
     * its program is sent, so a retained environment stays as it was. */
    json_object *images;
    if (json_object_object_get_ex(run->spec.root, "images", &images)) {
        for (size_t i = 0; i < json_object_array_length(images); i++) {
            json_object *e = json_object_array_get_idx(images, i);
            struct ptc_image *image = NULL;
            struct dsh_error err = {0};
            int rc = ptc__image_load(run->host, json_object_get_string(json_object_object_get(e, "attachmentId")),
                                     json_object_get_string(json_object_object_get(e, "path")), &image, &err);
            if (rc == 0) {
                rc = ptc__env_register_image(env, image, &err);
                if (rc < 0 && rc != DSH_E_REQUEST_INVALID) { /* the channel failed */
                    send_failed(run, rc);
                    json_object_put(frame);
                    return;
                }
            }
            if (rc != 0) {
                run->initializing = false;
                run->refused_before_program = true;
                ptc__run_select(run, PTC_FAILURE_EXCEPTION, "image registration failed: %s", err.message);
                json_object_put(frame);
                return;
            }
        }
    }
    /* From here on a timeout reports "during execution". */
    run->code_started = true;
    send_or_fail(run, frame);
    json_object_put(frame);
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
    const struct ptc_config *config = &run->host->config;
    if (run->phase == PTC_RUN_STOPPING) {
        /* After a stop request new binding calls reject inside the program. */
        static const char stopped[] = "execution was stopped";
        json_object *reply = ptc__frame_reply(frame->call, false, false, NULL, stopped, sizeof stopped - 1);
        ptc__env_send(run->env, reply);
        json_object_put(reply);
        return;
    }
    if (find_call(run, frame->call)) {
        ptc__run_select(run, PTC_FAILURE_PROTOCOL, "binding call id %llu is already open", (unsigned long long)frame->call);
        return;
    }
    if (!ptc__spec_allows(&run->spec, frame->global, frame->name)) {
        ptc__run_select(run, PTC_FAILURE_PROTOCOL, "the program called an undeclared binding %s.%s", frame->global, frame->name);
        return;
    }
    if (run->n_calls >= (size_t)config->max_pending_calls) {
        ptc__run_select(run, PTC_FAILURE_PROTOCOL, "more than maxPendingCalls (%lld) simultaneous binding calls",
                        (long long)config->max_pending_calls);
        return;
    }
    if (run->open_arg_bytes + frame->args_bytes > (uint64_t)config->max_message_bytes) {
        ptc__run_select(run, PTC_FAILURE_PROTOCOL, "outstanding binding arguments exceed maxMessageBytes (%lld bytes)",
                        (long long)config->max_message_bytes);
        return;
    }
    if (run->n_calls == run->cap_calls) {
        size_t next = run->cap_calls ? run->cap_calls * 2 : 8;
        struct ptc_open_call *grown = realloc(run->calls, next * sizeof *grown);
        if (!grown) {
            ptc__run_select(run, PTC_FAILURE_WORKER_EXIT, "out of memory");
            return;
        }
        run->calls = grown;
        run->cap_calls = next;
    }
    run->calls[run->n_calls++] = (struct ptc_open_call){frame->call, frame->args_bytes};
    run->open_arg_bytes += frame->args_bytes;
    /* The arguments' text as the child sent it, NUL-terminated for hosts that want a C string:
     * the frame's line ends there or a member follows (the byte is the line's own, restored). */
    char *args_end = (char *)frame->args + frame->args_bytes, saved = *args_end;
    *args_end = '\0';
    run->cb.on_call(run->cb.userdata, run->id, frame->call, frame->global, frame->name, frame->args,
                    frame->args_bytes);
    *args_end = saved;
}

static void on_result(struct ptc_run *run, const struct ptc_frame *frame)
{
    run->terminal_seen = true;
    if (run->phase == PTC_RUN_STOPPING) {
        /* The stopped evaluation settled: the outcome stays timeout/abort, state preserved. */
        ptc__run_timer_arm(run, 0);
        ptc__env_detach(run->env, run);
        run->retained_state = "preserved";
        ptc__run_schedule_finish(run);
        return;
    }
    if (frame->ok) {
        if (frame->has_value) {
            if (run->spec.discard_completion) {
                ptc__run_select(run, PTC_FAILURE_PROTOCOL, "the child returned a completion that was to be discarded");
                return;
            }
            if (ptc__ledger_charge(&run->ledger, frame->value_len) > 0) {
                ptc__run_select(run, PTC_FAILURE_OUTPUT_LIMIT, "the completion value does not fit in maxOutputBytes (%lld bytes)",
                                (long long)run->ledger.budget);
                return;
            }
            run->value = strndup(frame->value, frame->value_len);
            if (!run->value) {
                ptc__run_select(run, PTC_FAILURE_WORKER_EXIT, "out of memory");
                return;
            }
            run->value_len = frame->value_len;
            run->has_value = true;
        }
        ptc__run_select(run, PTC_FAILURE_NONE, NULL);
        return;
    }
    size_t room = (size_t)ptc__ledger_remaining(&run->ledger);
    if (ptc__ledger_charge(&run->ledger, frame->error_message_len) > 0) {
        size_t keep = ptc__utf8_prefix(frame->error_message, frame->error_message_len, room);
        ptc__run_select(run, PTC_FAILURE_OUTPUT_LIMIT, "output exceeded maxOutputBytes (%lld bytes); %s: %.*s",
                        (long long)run->ledger.budget, ptc_failure_name(frame->error_kind), (int)keep,
                        frame->error_message);
        return;
    }
    ptc__run_select(run, frame->error_kind, "%.*s", (int)frame->error_message_len, frame->error_message);
}

static void on_overflow(struct ptc_run *run)
{
    ptc__run_select(run, PTC_FAILURE_OUTPUT_LIMIT, "output exceeded maxOutputBytes (%lld bytes)", (long long)run->ledger.budget);
}

/* on_output (ABI 1.1) of an image entry the ledger just accepted; entry is consumed. */
static void report_image(struct ptc_run *run, json_object *entry)
{
    if (entry) {
        size_t n;
        const char *json = json_object_to_json_string_length(entry, DSH_JSON_PRINT_FLAGS, &n);
        run->cb.on_output(run->cb.userdata, run->id, json, n);
    }
    json_object_put(entry);
}

/* on_output of {"type":"text","text":...} for accepted ledger text (valid UTF-8), escaped here in
 * one pass: this runs for every piece of output a streaming host receives. */
static void report_text(struct ptc_run *run, const char *text, size_t len)
{
    static const char head[] = "{\"type\":\"text\",\"text\":\"", tail[] = "\"}";
    char *json = malloc(sizeof head + len * 6 + sizeof tail);
    if (!json)
        return;
    size_t n = sizeof head - 1;
    memcpy(json, head, n);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            json[n++] = (char)c;
            continue;
        }
        json[n++] = '\\';
        switch (c) {
        case '"': json[n++] = '"'; break;
        case '\\': json[n++] = '\\'; break;
        case '\n': json[n++] = 'n'; break;
        case '\r': json[n++] = 'r'; break;
        case '\t': json[n++] = 't'; break;
        default: n += (size_t)sprintf(json + n, "u%04x", c); break;
        }
    }
    memcpy(json + n, tail, sizeof tail);
    run->cb.on_output(run->cb.userdata, run->id, json, n + sizeof tail - 1);
    free(json);
}

void ptc__run_on_output(void *arg, const char *text, size_t len)
{
    struct ptc_run *run = arg;
    /* Output after the stop request (or after the outcome) is discarded. */
    if (run->phase == PTC_RUN_STOPPING || (run->outcome_selected && run->retained))
        return;
    uint64_t before = run->ledger.used;
    int rc = ptc__ledger_text(&run->ledger, text, len);
    /* Only the accepted prefix is reported: what overflowed is not in the result either. */
    size_t accepted = (size_t)(run->ledger.used - before);
    if (accepted > 0 && run->cb.on_output)
        report_text(run, text, accepted);
    if (rc != 0 && !run->outcome_selected)
        on_overflow(run);
}

void ptc__run_on_frame(void *arg, const struct ptc_frame *frame)
{
    struct ptc_run *run = arg;
    if (run->terminal_seen) {
        ptc__run_override_protocol(run, "control frame after the result");
        ptc__env_terminate(run->env);
        return;
    }
    switch (frame->type) {
    case PTC_FRAME_TEXT:
        ptc__run_on_output(run, frame->text, frame->text_len);
        break;
    case PTC_FRAME_IMAGE: {
        if (run->phase == PTC_RUN_STOPPING)
            break;
        /* Only images registered in this environment, described by the host's own record. */
        const char *id = json_object_get_string(json_object_object_get(frame->root, "attachmentId"));
        const struct ptc_image *image = ptc__env_find_image(run->env, id);
        if (!image) {
            ptc__run_select(run, PTC_FAILURE_PROTOCOL, "image frame for an unregistered attachmentId");
            break;
        }
        if (ptc__ledger_image(&run->ledger, ptc__image_host_descriptor(image, "image")) != 0)
            on_overflow(run);
        else if (run->cb.on_output)
            report_image(run, ptc__image_host_descriptor(image, "image"));
        break;
    }
    case PTC_FRAME_CALL:
        on_call(run, frame);
        break;
    case PTC_FRAME_RESULT:
        on_result(run, frame);
        break;
    case PTC_FRAME_REVOKED:
        if (run->phase != PTC_RUN_STOPPING) {
            ptc__run_select(run, PTC_FAILURE_PROTOCOL, "revoked frame without a revoke");
            break;
        }
        on_result(run, frame);
        break;
    case PTC_FRAME_INITIALIZED: {
        if (!run->initializing || run->outcome_selected) {
            if (!run->initializing)
                ptc__run_select(run, PTC_FAILURE_PROTOCOL, "initialized frame without an initializer");
            break;
        }
        /* The host accepts initialization only while the run is still active. */
        run->initializing = false;
        ptc__env_mark_initialized(run->env);
        json_object *ack = ptc__frame_for_run(PTC_FRAME_INIT_ACK, run->wire_id);
        send_or_fail(run, ack);
        json_object_put(ack);
        break;
    }
    default:
        ptc__run_select(run, PTC_FAILURE_PROTOCOL, "unexpected control frame");
        break;
    }
}

int ptc__runs_reply(struct ptc_runs *runs, dsh_run_id id, uint64_t call, bool ok, const char *text, size_t len)
{
    struct ptc_run *run = ptc__run_find(runs, id);
    if (!run)
        return DSH_E_NOT_FOUND;
    struct ptc_open_call *open = find_call(run, call);
    /* Late results after an outcome or a stop request are dropped. */
    if (!open || run->outcome_selected || !run->env)
        return DSH_E_NOT_FOUND;
    /* A value is validated and passed on as text: its numbers keep their text (-0 included) and
     * its nesting is bounded by DSH_JSON_VALUE_MAX_DEPTH, not by a tree's recursion. */
    if (ok && text && !dsh_json_is_value(text, len, DSH_JSON_VALUE_MAX_DEPTH, NULL))
        return DSH_E_REQUEST_INVALID;
    run->open_arg_bytes -= open->arg_bytes;
    *open = run->calls[--run->n_calls];
    static const char too_big[] = "the binding result exceeds maxMessageBytes";
    uint64_t max = (uint64_t)run->host->config.max_message_bytes;
    if (ok && text) {
        size_t reply_len = 0;
        char *reply = ptc__frame_reply_value(call, text, len, &reply_len);
        if (reply && reply_len <= max) {
            send_failed(run, ptc__env_send_text(run->env, reply, reply_len));
            free(reply);
            return 0;
        }
        free(reply);
        /* Too large for the channel (or no memory for it): the program sees a rejected call. */
        ok = false;
        text = too_big;
        len = sizeof too_big - 1;
    }
    /* ok without text is undefined: no value field. */
    json_object *frame = ptc__frame_reply(call, ok, false, NULL, text ? text : "", text ? len : 0);
    if (strlen(ptc__frame_text(frame)) > max) {
        json_object_put(frame);
        frame = ptc__frame_reply(call, false, false, NULL, too_big, sizeof too_big - 1);
    }
    send_or_fail(run, frame);
    json_object_put(frame);
    return 0;
}

int ptc__runs_register_image(struct ptc_runs *runs, dsh_run_id id, const char *attachment_id, const char *host_path,
                             char **ret_descriptor_json, size_t *ret_len, struct dsh_error *err)
{
    struct ptc_run *run = ptc__run_find(runs, id);
    /* Only a run whose program was submitted: the child must know it before the next reply. */
    if (!run || run->outcome_selected || !run->env || !run->code_started)
        return ptc__fail(err, DSH_E_NOT_FOUND, "run %llu is not executing a program", (unsigned long long)id);
    struct ptc_image *image = NULL;
    int rc = ptc__image_load(runs->host, attachment_id, host_path, &image, err);
    if (rc != 0)
        return rc;
    json_object *d = ptc__image_host_descriptor(image, NULL);
    rc = ptc__env_register_image(run->env, image, err);
    if (rc < 0) {
        json_object_put(d);
        if (rc == DSH_E_REQUEST_INVALID)
            return rc;
        return ptc__fail(err, rc == -E2BIG ? DSH_E_LIMIT : rc, "image-register could not be queued: %s",
                         dsh_strerror(rc));
    }
    if (ret_descriptor_json) {
        *ret_descriptor_json = strdup(ptc__frame_text(d));
        if (!*ret_descriptor_json) {
            json_object_put(d);
            return ptc__fail(err, -ENOMEM, "out of memory");
        }
        if (ret_len)
            *ret_len = strlen(*ret_descriptor_json);
    }
    json_object_put(d);
    return 0;
}

/* The evaluation side of a run: the run frame, frames the child sends for it (output, binding
 * calls, the terminal frame), raw output while it is active, and replies to binding calls. */
#include "run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void send_failed(struct ptc_run *run, int rc)
{
    if (rc == -E2BIG)
        ptc__run_select(run, "protocol", "queued control writes exceed maxMessageBytes (%lld bytes)",
                        (long long)run->inst->config.max_message_bytes);
    else if (rc < 0 && !run->outcome_selected)
        ptc__run_select(run, "worker-exit", "control write failed: %s", dsh_strerror(rc));
}

static void send_or_fail(struct ptc_run *run, json_object *frame)
{
    send_failed(run, ptc__env_send(run->env, frame));
}

void ptc__run_send_program(struct ptc_run *run)
{
    struct ptc_env *env = run->env;
    json_object *frame = json_object_new_object();
    json_object_object_add(frame, "type", json_object_new_string("run"));
    json_object_object_add(frame, "run", json_object_new_int64((int64_t)run->wire_id));
    json_object_object_add(frame, "format", json_object_new_string(env->format));
    json_object_object_add(frame, "retain", json_object_new_boolean(env->retain));
    json_object_object_add(frame, "program", json_object_new_string(run->spec.program));
    json_object_object_add(frame, "cwd", json_object_new_string(run->spec.cwd));
    json_object_object_add(frame, "discardCompletion", json_object_new_boolean(run->spec.discard_completion));
    json_object_object_add(frame, "bindings", json_object_get(run->spec.bindings));
    if (!env->initialized) {
        char *initializer = ptc__initializer_source(run->inst);
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
            int rc = ptc__image_load(run->inst, json_object_get_string(json_object_object_get(e, "attachmentId")),
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
                ptc__run_select(run, "exception", "image registration failed: %s", err.message);
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

static json_object *reply_frame(uint64_t call, bool ok, json_object *value, const char *message, size_t len)
{
    json_object *frame = json_object_new_object();
    json_object_object_add(frame, "type", json_object_new_string("reply"));
    json_object_object_add(frame, "call", json_object_new_int64((int64_t)call));
    json_object_object_add(frame, "ok", json_object_new_boolean(ok));
    if (ok && value)
        json_object_object_add(frame, "value", value);
    else if (ok)
        json_object_object_add(frame, "value", NULL);
    if (!ok)
        json_object_object_add(frame, "message", json_object_new_string_len(message, (int)len));
    return frame;
}

static void on_call(struct ptc_run *run, const struct ptc_frame *frame)
{
    const struct ptc_config *config = &run->inst->config;
    if (run->phase == PTC_RUN_STOPPING) {
        /* After a stop request new binding calls reject inside the program. */
        static const char stopped[] = "execution was stopped";
        json_object *reply = reply_frame(frame->call, false, NULL, stopped, sizeof stopped - 1);
        ptc__env_send(run->env, reply);
        json_object_put(reply);
        return;
    }
    if (find_call(run, frame->call)) {
        ptc__run_select(run, "protocol", "binding call id %llu is already open", (unsigned long long)frame->call);
        return;
    }
    if (!ptc__spec_allows(&run->spec, frame->global, frame->name)) {
        ptc__run_select(run, "protocol", "the program called an undeclared binding %s.%s", frame->global, frame->name);
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
    if (run->phase == PTC_RUN_STOPPING) {
        /* The stopped evaluation settled: the outcome stays timeout/abort, state preserved. */
        ptc__timer_arm(&run->stop_grace, 0);
        run->env->run = NULL;
        run->env->state = PTC_ENV_IDLE;
        run->retained_state = "preserved";
        ptc__run_schedule_finish(run);
        return;
    }
    if (frame->ok) {
        if (frame->has_value) {
            if (run->spec.discard_completion) {
                ptc__run_select(run, "protocol", "the child returned a completion that was to be discarded");
                return;
            }
            const char *text = json_object_to_json_string_ext(frame->value, JSON_C_TO_STRING_PLAIN);
            if (ptc__ledger_charge(&run->ledger, strlen(text)) > 0) {
                ptc__run_select(run, "output-limit", "the completion value does not fit in maxOutputBytes (%lld bytes)",
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

static void on_overflow(struct ptc_run *run)
{
    ptc__run_select(run, "output-limit", "output exceeded maxOutputBytes (%lld bytes)", (long long)run->ledger.budget);
}

/* on_output (ABI 1.1) of an image entry the ledger just accepted; entry is consumed. */
static void report_image(struct ptc_run *run, json_object *entry)
{
    if (entry) {
        size_t n;
        const char *json = json_object_to_json_string_length(entry, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
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

void ptc__run_on_output(struct ptc_run *run, const char *text, size_t len)
{
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

void ptc__run_on_frame(struct ptc_run *run, const struct ptc_frame *frame)
{
    if (run->terminal_seen) {
        ptc__run_override_protocol(run, "control frame after the result");
        ptc__env_terminate(run->env, NULL);
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
        const struct ptc_image *image = ptc__images_find(run->env->images, id);
        if (!image) {
            ptc__run_select(run, "protocol", "image frame for an unregistered attachmentId");
            break;
        }
        if (ptc__ledger_image(&run->ledger, ptc__image_descriptor(image, "image")) != 0)
            on_overflow(run);
        else if (run->cb.on_output)
            report_image(run, ptc__image_descriptor(image, "image"));
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
            ptc__run_select(run, "protocol", "revoked frame without a revoke");
            break;
        }
        on_result(run, frame);
        break;
    case PTC_FRAME_INITIALIZED: {
        if (!run->initializing || run->outcome_selected) {
            if (!run->initializing)
                ptc__run_select(run, "protocol", "initialized frame without an initializer");
            break;
        }
        /* The host accepts initialization only while the run is still active. */
        run->initializing = false;
        run->env->initialized = true;
        json_object *ack = json_object_new_object();
        json_object_object_add(ack, "type", json_object_new_string("init-ack"));
        json_object_object_add(ack, "run", json_object_new_int64((int64_t)run->wire_id));
        send_or_fail(run, ack);
        json_object_put(ack);
        break;
    }
    default:
        ptc__run_select(run, "protocol", "unexpected control frame");
        break;
    }
}

int ptc__run_reply(struct ptc_run *run, uint64_t call, bool ok, const char *text, size_t len)
{
    struct ptc_open_call *open = find_call(run, call);
    /* Late results after an outcome or a stop request are dropped. */
    if (!open || run->outcome_selected || !run->env)
        return DSH_E_NOT_FOUND;
    json_object *value = NULL;
    if (ok && text) {
        value = dsh_json_parse_strict(text, len);
        if (!value && !(len == 4 && memcmp(text, "null", 4) == 0))
            return DSH_E_REQUEST_INVALID;
    }
    run->open_arg_bytes -= open->arg_bytes;
    *open = run->calls[--run->n_calls];
    json_object *frame;
    if (ok && !text) {
        /* undefined: no value field */
        frame = json_object_new_object();
        json_object_object_add(frame, "type", json_object_new_string("reply"));
        json_object_object_add(frame, "call", json_object_new_int64((int64_t)call));
        json_object_object_add(frame, "ok", json_object_new_boolean(1));
    } else {
        frame = reply_frame(call, ok, value, text ? text : "", text ? len : 0);
    }
    const char *encoded = json_object_to_json_string_ext(frame, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (strlen(encoded) > (uint64_t)run->inst->config.max_message_bytes) {
        /* Too large for the channel: the program sees a rejected call instead. */
        static const char too_big[] = "the binding result exceeds maxMessageBytes";
        json_object_put(frame);
        frame = reply_frame(call, false, NULL, too_big, sizeof too_big - 1);
    }
    send_or_fail(run, frame);
    json_object_put(frame);
    return 0;
}

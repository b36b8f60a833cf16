/* See frames.h. */
#include "frames.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool get_uint(json_object *parent, const char *key, uint64_t *ret)
{
    json_object *v;
    if (!json_object_object_get_ex(parent, key, &v) || !json_object_is_type(v, json_type_int))
        return false;
    int64_t n = json_object_get_int64(v);
    /* Ids are positive and exactly representable in a JS number. */
    if (n <= 0 || n > (INT64_C(1) << 53))
        return false;
    *ret = (uint64_t)n;
    return true;
}

static const char *get_string(json_object *parent, const char *key, size_t *ret_len)
{
    json_object *v;
    if (!json_object_object_get_ex(parent, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    if (ret_len)
        *ret_len = (size_t)json_object_get_string_len(v);
    return json_object_get_string(v);
}

static int fail(char *why, size_t why_len, const char *message)
{
    snprintf(why, why_len, "%s", message);
    return -EPROTO;
}

static int parse_failed(struct ptc_frame *frame, int rc)
{
    ptc__frame_release(frame);
    return rc;
}

static const struct {
    const char *name;
    bool from_child;
} frame_types[] = {
#define FRAME_ROW(suffix, name, from_child) [PTC_FRAME_##suffix] = {name, from_child},
    PTC_FRAME_TABLE(FRAME_ROW)
#undef FRAME_ROW
};

const char *ptc__frame_type_name(enum ptc_frame_type type)
{
    return frame_types[type].name;
}

/* Only the types a child may send decode; the host's own types are unknown from the child. */
static bool child_frame_type(const char *name, enum ptc_frame_type *ret)
{
    for (size_t i = 0; i < sizeof frame_types / sizeof frame_types[0]; i++)
        if (frame_types[i].from_child && strcmp(frame_types[i].name, name) == 0) {
            *ret = (enum ptc_frame_type)i;
            return true;
        }
    return false;
}

static int parse_result(struct ptc_frame *frame, char *why, size_t why_len)
{
    json_object *ok;
    if (!json_object_object_get_ex(frame->root, "ok", &ok) ||
        !json_object_is_type(ok, json_type_boolean))
        return fail(why, why_len, "result frame without boolean ok");
    frame->ok = json_object_get_boolean(ok);
    if (frame->ok) {
        frame->has_value = frame->value != NULL;
        return 0;
    }
    json_object *error;
    if (!json_object_object_get_ex(frame->root, "error", &error) ||
        !json_object_is_type(error, json_type_object))
        return fail(why, why_len, "failed result frame without error object");
    const char *kind = get_string(error, "kind", NULL);
    frame->error_message = get_string(error, "message", &frame->error_message_len);
    if (!kind || !frame->error_message)
        return fail(why, why_len, "result error needs string kind and message");
    /* The child may only report failures of the program itself. */
    frame->error_kind = ptc_failure_reported_by_child(kind);
    if (frame->error_kind == PTC_FAILURE_NONE)
        return fail(why, why_len, "result error kind is not one the child may report");
    return 0;
}

static int parse_image(struct ptc_frame *frame, char *why, size_t why_len)
{
    json_object *w, *h;
    if (!get_string(frame->root, "attachmentId", NULL) || !get_string(frame->root, "path", NULL) ||
        !json_object_object_get_ex(frame->root, "width", &w) ||
        !json_object_object_get_ex(frame->root, "height", &h) ||
        !json_object_is_type(w, json_type_int) || !json_object_is_type(h, json_type_int) ||
        json_object_get_int64(w) < 0 || json_object_get_int64(h) < 0)
        return fail(why, why_len, "image frame needs attachmentId, path, width and height");
    return 0;
}

/* The run id of a text frame in the form the bootstrap writes: digits without a leading zero,
 * at most 2^53. 0 when the text has another form (the general parser then decides). */
static uint64_t plain_run_id(const char *p, const char *end, const char **ret_after)
{
    uint64_t n = 0;
    const char *start = p;
    for (; p < end && *p >= '0' && *p <= '9' && p - start < 17; p++)
        n = n * 10 + (uint64_t)(*p - '0');
    if (p == start || *start == '0' || n > (UINT64_C(1) << 53))
        return 0;
    *ret_after = p;
    return n;
}

/* The closing quote of the JSON string whose text starts at p (after its opening quote), or NULL:
 * only escapes are skipped, the decoder checks the rest. */
static const char *string_close(const char *p, const char *end)
{
    for (; p < end; p++) {
        if (*p == '\\') {
            if (++p == end)
                return NULL;
        } else if (*p == '"') {
            return p;
        }
    }
    return NULL;
}

/* Text frames carry all of a program's output. In the exact form the bootstrap writes,
 * {"type":"text","run":N,"text":"..."}, the text is decoded where it lies in the line: no JSON
 * tree, no copies. Returns 1 when the frame was decoded, 0 for any other form (the line
 * untouched, for the general parser), or -EPROTO for a text that is no strict JSON string (so
 * the line is no JSON at all). Only a text that closes the line is decoded: a frame with more
 * members after it (another "type", a "value" in the line) is the general parser's, whose
 * fields then point into the line as for every other frame. */
static int parse_plain_text(char *line, size_t len, struct ptc_frame *frame, char *why, size_t why_len)
{
    static const char head[] = "{\"type\":\"text\",\"run\":", member[] = ",\"text\":\"";
    const char *end = line + len, *after_run;
    if (len < sizeof head + sizeof member || memcmp(line, head, sizeof head - 1) != 0 ||
        memcmp(end - 2, "\"}", 2) != 0)
        return 0;
    uint64_t run = plain_run_id(line + sizeof head - 1, end, &after_run);
    if (!run || (size_t)(end - after_run) < sizeof member || memcmp(after_run, member, sizeof member - 1) != 0)
        return 0;
    char *text = line + (after_run - line) + sizeof member - 1;
    if (string_close(text, end) != end - 2)
        return 0;
    size_t text_len;
    const char *after = dsh_json_decode_string(text, end, text, &text_len);
    if (after != end - 1)
        return fail(why, why_len, "control frame is not valid JSON");
    memset(frame, 0, sizeof *frame);
    frame->type = PTC_FRAME_TEXT;
    frame->run = run;
    frame->text = text;
    frame->text_len = text_len;
    return 1;
}

int ptc__frame_parse(char *line, size_t len, struct ptc_frame *ret_frame, char *why, size_t why_len)
{
    int rc = parse_plain_text(line, len, ret_frame, why, why_len);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    return ptc__frame_parse_json(line, len, ret_frame, why, why_len);
}

int ptc__frame_parse_json(const char *line, size_t len, struct ptc_frame *ret_frame, char *why,
                          size_t why_len)
{
    memset(ret_frame, 0, sizeof *ret_frame);
    /* A program's values and arguments are validated where they lie and passed on as text: a
     * tree of them would take many times their size in host memory. Only the envelope is built,
     * with a node budget. */
    static const char *const raw_names[] = {"value", "args", NULL};
    struct dsh_json_slice raw[2];
    json_object *root = dsh_json_parse_envelope(line, len, raw_names, raw, DSH_JSON_ENVELOPE_MAX_NODES);
    if (!root) {
        if (dsh_json_is_value(line, len, DSH_JSON_VALUE_MAX_DEPTH, NULL))
            return fail(why, why_len, line[strspn(line, " \t\r\n")] == '{'
                                          ? "control frame is larger than the envelope budget"
                                          : "control frame is not a JSON object");
        return fail(why, why_len, "control frame is not valid JSON");
    }
    ret_frame->root = root;
    const char *type = get_string(root, "type", NULL);
    int rc = 0;
    if (!type)
        return parse_failed(ret_frame, fail(why, why_len, "control frame without a type"));
    bool known = child_frame_type(type, &ret_frame->type);
    if (known && ret_frame->type == PTC_FRAME_ERROR) {
        /* The child's answer to a host frame it does not handle. The host sends only types the
         * child knows, so host and child disagree about the protocol (or a program wrote it on
         * fd 3): never a usable frame. */
        const char *message = get_string(root, "message", NULL);
        snprintf(why, why_len, "the bootstrap did not handle a control frame: %s",
                 message ? message : "(no message)");
        /* Untrusted text cut to fit: printable ASCII only, so no cut can split a character. */
        for (char *c = why; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
                *c = '?';
        return parse_failed(ret_frame, -EPROTO);
    }
    if (!(known && ret_frame->type == PTC_FRAME_HELLO) && !get_uint(root, "run", &ret_frame->run))
        return parse_failed(ret_frame, fail(why, why_len, "control frame without a valid run id"));
    if (!known)
        return parse_failed(ret_frame, fail(why, why_len, "unknown control frame type"));
    switch (ret_frame->type) {
    case PTC_FRAME_HELLO: {
        json_object *p;
        ret_frame->node = get_string(root, "node", NULL);
        ret_frame->python = get_string(root, "python", NULL);
        json_object *sp;
        ret_frame->stripped_programs = json_object_object_get_ex(root, "strippedPrograms", &sp) &&
                                       json_object_is_type(sp, json_type_boolean) && json_object_get_boolean(sp);
        if (!json_object_object_get_ex(root, "protocol", &p) || !json_object_is_type(p, json_type_int))
            rc = fail(why, why_len, "the bootstrap did not announce a protocol revision");
        else
            ret_frame->protocol = json_object_get_int64(p);
        break;
    }
    case PTC_FRAME_TEXT:
        ret_frame->text = get_string(root, "text", &ret_frame->text_len);
        if (!ret_frame->text)
            rc = fail(why, why_len, "text frame without string text");
        break;
    case PTC_FRAME_IMAGE:
        rc = parse_image(ret_frame, why, why_len);
        break;
    case PTC_FRAME_CALL:
        ret_frame->global = get_string(root, "global", NULL);
        ret_frame->name = get_string(root, "name", NULL);
        if (!get_uint(root, "call", &ret_frame->call) || !ret_frame->global || !ret_frame->name ||
            !raw[1].text || raw[1].text[0] != '[')
            rc = fail(why, why_len, "call frame needs call id, global, name and an args array");
        ret_frame->args = raw[1].text;
        ret_frame->args_bytes = raw[1].len;
        break;
    case PTC_FRAME_RESULT:
        ret_frame->value = raw[0].text;
        ret_frame->value_len = raw[0].len;
        rc = parse_result(ret_frame, why, why_len);
        break;
    default: /* initialized, revoked: type and run only */
        break;
    }
    return rc < 0 ? parse_failed(ret_frame, rc) : 0;
}

void ptc__frame_release(struct ptc_frame *frame)
{
    json_object_put(frame->root);
    frame->root = NULL;
}

json_object *ptc__frame_new(enum ptc_frame_type type)
{
    json_object *frame = json_object_new_object();
    json_object_object_add(frame, "type", json_object_new_string(ptc__frame_type_name(type)));
    return frame;
}

json_object *ptc__frame_for_run(enum ptc_frame_type type, uint64_t run)
{
    json_object *frame = ptc__frame_new(type);
    json_object_object_add(frame, "run", json_object_new_int64((int64_t)run));
    return frame;
}

json_object *ptc__frame_reply(uint64_t call, bool ok, bool has_value, json_object *value, const char *message,
                              size_t len)
{
    json_object *frame = ptc__frame_new(PTC_FRAME_REPLY);
    json_object_object_add(frame, "call", json_object_new_int64((int64_t)call));
    json_object_object_add(frame, "ok", json_object_new_boolean(ok));
    if (ok && has_value)
        json_object_object_add(frame, "value", value);
    else if (!ok)
        json_object_object_add(frame, "message", json_object_new_string_len(message, (int)len));
    return frame;
}

char *ptc__frame_reply_value(uint64_t call, const char *value, size_t len, size_t *ret_len)
{
    char head[96];
    int n = snprintf(head, sizeof head, "{\"type\":\"%s\",\"call\":%llu,\"ok\":true,\"value\":",
                     ptc__frame_type_name(PTC_FRAME_REPLY), (unsigned long long)call);
    char *text = malloc((size_t)n + len + 2);
    if (!text)
        return NULL;
    memcpy(text, head, (size_t)n);
    size_t at = (size_t)n + dsh_json_compact(text + n, value, len);
    text[at++] = '}';
    text[at] = '\0';
    *ret_len = at;
    return text;
}

const char *ptc__frame_text(json_object *frame)
{
    return json_object_to_json_string_ext(frame, DSH_JSON_PRINT_FLAGS);
}

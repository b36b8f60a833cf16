/* See frames.h. */
#include "frames.h"

#include <errno.h>
#include <stdio.h>
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

static int parse_result(struct ptc_frame *frame, char *why, size_t why_len)
{
    json_object *ok;
    if (!json_object_object_get_ex(frame->root, "ok", &ok) ||
        !json_object_is_type(ok, json_type_boolean))
        return fail(why, why_len, "result frame without boolean ok");
    frame->ok = json_object_get_boolean(ok);
    if (frame->ok) {
        /* json-c represents a JSON null as NULL: has_value tells null from absent. */
        frame->has_value = json_object_object_get_ex(frame->root, "value", &frame->value);
        return 0;
    }
    json_object *error;
    if (!json_object_object_get_ex(frame->root, "error", &error) ||
        !json_object_is_type(error, json_type_object))
        return fail(why, why_len, "failed result frame without error object");
    frame->error_kind = get_string(error, "kind", NULL);
    frame->error_message = get_string(error, "message", &frame->error_message_len);
    if (!frame->error_kind || !frame->error_message)
        return fail(why, why_len, "result error needs string kind and message");
    /* The child may only report failures of the program itself. */
    if (strcmp(frame->error_kind, "exception") != 0 && strcmp(frame->error_kind, "invalid-output") != 0)
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

int ptc__frame_parse(const char *line, size_t len, struct ptc_frame *ret_frame, char *why,
                     size_t why_len)
{
    memset(ret_frame, 0, sizeof *ret_frame);
    json_object *root = dsh_json_parse_strict(line, len);
    if (!root)
        return fail(why, why_len, "control frame is not valid JSON");
    ret_frame->root = root;
    if (!json_object_is_type(root, json_type_object)) {
        ptc__frame_release(ret_frame);
        return fail(why, why_len, "control frame is not a JSON object");
    }
    const char *type = get_string(root, "type", NULL);
    int rc = 0;
    if (!type) {
        rc = fail(why, why_len, "control frame without a type");
    } else if (strcmp(type, "hello") == 0) {
        ret_frame->type = PTC_FRAME_HELLO;
        json_object *p;
        ret_frame->node = get_string(root, "node", NULL);
        if (!json_object_object_get_ex(root, "protocol", &p) || !json_object_is_type(p, json_type_int))
            rc = fail(why, why_len, "the bootstrap did not announce a protocol revision");
        else
            ret_frame->protocol = json_object_get_int64(p);
    } else if (!get_uint(root, "run", &ret_frame->run)) {
        rc = fail(why, why_len, "control frame without a valid run id");
    } else if (strcmp(type, "text") == 0) {
        ret_frame->type = PTC_FRAME_TEXT;
        ret_frame->text = get_string(root, "text", &ret_frame->text_len);
        if (!ret_frame->text)
            rc = fail(why, why_len, "text frame without string text");
    } else if (strcmp(type, "image") == 0) {
        ret_frame->type = PTC_FRAME_IMAGE;
        rc = parse_image(ret_frame, why, why_len);
    } else if (strcmp(type, "call") == 0) {
        ret_frame->type = PTC_FRAME_CALL;
        ret_frame->global = get_string(root, "global", NULL);
        ret_frame->name = get_string(root, "name", NULL);
        if (!get_uint(root, "call", &ret_frame->call) || !ret_frame->global || !ret_frame->name ||
            !json_object_object_get_ex(root, "args", &ret_frame->args) ||
            !json_object_is_type(ret_frame->args, json_type_array))
            rc = fail(why, why_len, "call frame needs call id, global, name and an args array");
        else
            ret_frame->args_bytes =
                strlen(json_object_to_json_string_ext(ret_frame->args, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    } else if (strcmp(type, "result") == 0) {
        ret_frame->type = PTC_FRAME_RESULT;
        rc = parse_result(ret_frame, why, why_len);
    } else if (strcmp(type, "initialized") == 0) {
        ret_frame->type = PTC_FRAME_INITIALIZED;
    } else if (strcmp(type, "revoked") == 0) {
        ret_frame->type = PTC_FRAME_REVOKED;
    } else {
        rc = fail(why, why_len, "unknown control frame type");
    }
    if (rc < 0)
        ptc__frame_release(ret_frame);
    return rc;
}

void ptc__frame_release(struct ptc_frame *frame)
{
    json_object_put(frame->root);
    frame->root = NULL;
}

json_object *ptc__frame_image_entry(const struct ptc_frame *frame)
{
    json_object *entry = json_object_new_object();
    json_object_object_add(entry, "type", json_object_new_string("image"));
    static const char *const keys[] = {"attachmentId", "path", "width", "height"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_object *v;
        json_object_object_get_ex(frame->root, keys[i], &v);
        json_object_object_add(entry, keys[i], json_object_get(v));
    }
    return entry;
}

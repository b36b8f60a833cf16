/* Decoding and validation of frames the child sends (see bootstrap/PROTOCOL.md). The child is
 * untrusted: every field is checked for presence and type here; semantic checks that need run
 * state (ids, allowlist, limits) happen in the run. */
#ifndef PTC_FRAMES_H
#define PTC_FRAMES_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsh_json_strict.h"

#define PTC_PROTOCOL_REVISION 1
#define PTC_MIN_NODE_MAJOR 22

enum ptc_frame_type {
    PTC_FRAME_HELLO,
    PTC_FRAME_TEXT,
    PTC_FRAME_IMAGE,
    PTC_FRAME_CALL,
    PTC_FRAME_RESULT,
    PTC_FRAME_INITIALIZED,
    PTC_FRAME_REVOKED,
};

struct ptc_frame {
    enum ptc_frame_type type;
    json_object *root; /* owns everything below */
    uint64_t run;
    /* hello */
    int64_t protocol;
    const char *node;
    /* text */
    const char *text;
    size_t text_len;
    /* call */
    uint64_t call;
    const char *global, *name;
    json_object *args;
    size_t args_bytes;
    /* result */
    bool ok;
    bool has_value;     /* false when the completion was undefined or discarded */
    json_object *value; /* NULL for JSON null */
    const char *error_kind, *error_message;
    size_t error_message_len;
    /* image: root minus type/run is the descriptor; built on demand */
};

/* Returns 0 and fills frame (release with ptc__frame_release), or -EPROTO with why filled. */
int ptc__frame_parse(const char *line, size_t len, struct ptc_frame *ret_frame, char *why,
                     size_t why_len);
void ptc__frame_release(struct ptc_frame *frame);
/* {"type":"image","attachmentId":..,"path":..,"width":..,"height":..} from an image frame. */
json_object *ptc__frame_image_entry(const struct ptc_frame *frame);

#endif

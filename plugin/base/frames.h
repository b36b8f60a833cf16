/* The control protocol's frames (see bootstrap/PROTOCOL.md): strict decoding and validation of
 * frames the child sends, and the encoding of frames sent to it. The child is untrusted: every
 * field is checked for presence and type here; semantic checks that need run state (ids,
 * allowlist, limits) happen in the run. */
#ifndef PTC_FRAMES_H
#define PTC_FRAMES_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsh_json_strict.h"
#include "failure.h"

#define PTC_PROTOCOL_REVISION 1
#define PTC_MIN_NODE_MAJOR 22

/* X(SUFFIX, "type", from_child): every frame type of the protocol, both directions. */
#define PTC_FRAME_TABLE(X)                                                                         \
    X(HELLO, "hello", true)                                                                        \
    X(TEXT, "text", true)                                                                          \
    X(IMAGE, "image", true)                                                                        \
    X(CALL, "call", true)                                                                          \
    X(RESULT, "result", true)                                                                      \
    X(INITIALIZED, "initialized", true)                                                            \
    X(REVOKED, "revoked", true)                                                                    \
    X(ERROR, "error", true)                                                                        \
    X(RUN, "run", false)                                                                           \
    X(REPLY, "reply", false)                                                                       \
    X(REVOKE, "revoke", false)                                                                     \
    X(INIT_ACK, "init-ack", false)                                                                 \
    X(IMAGE_REGISTER, "image-register", false)

enum ptc_frame_type {
#define PTC__FRAME_ENUM(suffix, name, from_child) PTC_FRAME_##suffix,
    PTC_FRAME_TABLE(PTC__FRAME_ENUM)
#undef PTC__FRAME_ENUM
};

const char *ptc__frame_type_name(enum ptc_frame_type type);

struct ptc_frame {
    enum ptc_frame_type type;
    /* The envelope: every member but a call's args and a result's value, which stay text in the
     * line (DSH_JSON_ENVELOPE_MAX_NODES). Owns the strings below; NULL for a text decoded in its
     * line. */
    json_object *root;
    uint64_t run;
    /* hello */
    int64_t protocol;
    const char *node;   /* the Node child's process.version */
    const char *python; /* the Python child's X.Y.Z */
    bool stripped_programs; /* runs programs the host stripped (`strippedPrograms`) */
    /* text */
    const char *text;
    size_t text_len;
    /* call */
    uint64_t call;
    const char *global, *name;
    const char *args; /* the arguments array's text in the line (validated, never built) */
    size_t args_bytes;
    /* result */
    bool ok;
    bool has_value;    /* false when the completion was undefined or discarded */
    const char *value; /* the value's text in the line (validated, never built) */
    size_t value_len;
    enum ptc_failure error_kind; /* exception or invalid-output */
    const char *error_message;
    size_t error_message_len;
    /* image: root minus type/run is the descriptor; built on demand */
};

/* Returns 0 and fills frame (release with ptc__frame_release), or -EPROTO with why filled. The
 * line is the control channel's buffer: a text frame's text is decoded in place there, and
 * frame->text, ->args and ->value point into it (valid as long as the line). */
int ptc__frame_parse(char *line, size_t len, struct ptc_frame *ret_frame, char *why, size_t why_len);
/* The same through the general JSON parser only; line stays as it is. */
int ptc__frame_parse_json(const char *line, size_t len, struct ptc_frame *ret_frame, char *why,
                          size_t why_len);
void ptc__frame_release(struct ptc_frame *frame);

/* Frames to the child. {"type": type} (transfer full). */
json_object *ptc__frame_new(enum ptc_frame_type type);
/* {"type": type, "run": run}: revoke, init-ack and the start of a run frame. */
json_object *ptc__frame_for_run(enum ptc_frame_type type, uint64_t run);
/* {"type":"reply","call":call,"ok":ok} with "value" (ok; has_value false: undefined, no field;
 * value NULL: null) or "message" (not ok). value is taken over. */
json_object *ptc__frame_reply(uint64_t call, bool ok, bool has_value, json_object *value, const char *message,
                              size_t len);
/* {"type":"reply","call":call,"ok":true,"value":VALUE} with value, a text dsh_json_is_value
 * accepted, compacted onto one line: malloc'd, its length in *ret_len; NULL when out of memory.
 * The value passes as text, so its numbers and nesting reach the child as they were. */
char *ptc__frame_reply_value(uint64_t call, const char *value, size_t len, size_t *ret_len);
/* The single-line wire text of a frame (valid until the frame changes or is released). */
const char *ptc__frame_text(json_object *frame);

#endif

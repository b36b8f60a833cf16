/* Strict JSON text parsing for everything that crosses a trust boundary as JSON (control frames,
 * specs, requests, command-line JSON): exactly one RFC 8259 value, UTF-8 validated, bounded
 * nesting, no NaN/Infinity, comments or trailing text. json-c's own
 * json_tokener_parse accepts all of those. Also the one way the project prints JSON text. */
#ifndef DSH_JSON_STRICT_H
#define DSH_JSON_STRICT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Nesting deeper than this is refused where a json-c tree is built (json-c recurses per level
 * when it prints and frees one). */
#define DSH_JSON_MAX_DEPTH 512

/* The nesting of program values passed on as text (dsh_json_scan_value, which keeps one bit
 * per level and never recurses). The pinned Node's JSON.stringify gives up near 4,500 levels
 * with its default stack (JSON.parse has no limit), so every value the child's own
 * JSON.stringify/JSON.parse round-trips fits, with room (host-abi/ABI.md, "Values"). */
#define DSH_JSON_VALUE_MAX_DEPTH 10000

/* Nodes (values of any type) of a program frame's envelope: everything but its value or its
 * arguments, which pass as text. The bootstrap's envelopes have a few dozen. */
#define DSH_JSON_ENVELOPE_MAX_NODES 4096

/* json_object_to_json_string_ext flags for the JSON text the project writes: compact, and '/'
 * left as is (json-c escapes it as "\/" by default). */
#define DSH_JSON_PRINT_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Whether v is a JSON string without NUL bytes (usable as a C string). */
bool dsh_json_is_text(json_object *v);

/* The value of text[0..len) (transfer full), or NULL when it is not exactly one strict value.
 * A member name containing NUL is refused: json-c keys are C strings, so such a member could not
 * be looked up (and an unknown-field check would miss it). */
json_object *dsh_json_parse_strict(const char *text, size_t len);

/* The same for program values (control frames of the child, binding replies), where a member
 * name may contain NUL as in JavaScript (`{"k\u0000": 1}`). Such a member is not a json-c member
 * (lookups do not see it), but the object keeps every member in text order and prints them all
 * through json_object_to_json_string_ext, so the value passes on unchanged. */
json_object *dsh_json_parse_strict_value(const char *text, size_t len);

/* What dsh_json_scan_value found: values (containers and scalars) and the deepest nesting. */
struct dsh_json_extent {
    size_t nodes, depth;
};

/* Validates one strict value at p (leading whitespace skipped) without building anything: the
 * position just past it, or NULL when it is not strict or nests deeper than max_depth (capped
 * at DSH_JSON_VALUE_MAX_DEPTH + 1: an array of values). Member names may contain NUL, as for
 * dsh_json_parse_strict_value. Iterative, no allocation: a pure function of the bytes. */
const char *dsh_json_scan_value(const char *p, const char *end, size_t max_depth, struct dsh_json_extent *ret);

/* Whether text[0..len) is exactly one such value (whitespace around it allowed). */
bool dsh_json_is_value(const char *text, size_t len, size_t max_depth, struct dsh_json_extent *ret);

/* A checked value's text without whitespace outside strings (one line, for framing): written to
 * out (room for len bytes; out may be text itself), its length returned. */
size_t dsh_json_compact(char *out, const char *text, size_t len);

/* A member's text inside a larger JSON text. */
struct dsh_json_slice {
    const char *text; /* NULL when the member is absent */
    size_t len;
};

/* For text already checked to be one value (dsh_json_is_value): the slice of each member named
 * names[k] (NULL-terminated) in ret[k], absent when there is none; a repeated name keeps its last
 * value (as json-c). false when text is no object. */
bool dsh_json_members(const char *text, size_t len, const char *const *names, struct dsh_json_slice *ret);

/* For text already checked to be one value: fn for each element in order (false stops: the call
 * returns false); false when text is no array. */
typedef bool (*dsh_json_element_fn)(void *arg, size_t index, struct dsh_json_slice element);
bool dsh_json_elements(const char *text, size_t len, dsh_json_element_fn fn, void *arg);

/* The object text[0..len) with the members named in raw_names (NULL-terminated) left as text:
 * each is validated by dsh_json_scan_value (DSH_JSON_VALUE_MAX_DEPTH + 1 levels) and reported in ret_raw (same order; a repeated name
 * keeps its last value) and is not a member of the returned object. Every other member becomes
 * json-c values, nesting up to DSH_JSON_MAX_DEPTH, at most max_nodes of them. NULL when the text
 * is not one strict object, a budget is exceeded, or a member name contains NUL. */
json_object *dsh_json_parse_envelope(const char *text, size_t len, const char *const *raw_names,
                                     struct dsh_json_slice *ret_raw, size_t max_nodes);

/* Decodes the strict JSON string body starting at p (just after its opening quote) into out and
 * returns the position just past its closing quote, with *ret_len the decoded bytes; NULL when the
 * body is not strict (a raw control character, a bad escape, a lone surrogate, invalid UTF-8, no
 * closing quote before end). out may be p itself: decoding never writes ahead of what it read. */
const char *dsh_json_decode_string(const char *p, const char *end, char *out, size_t *ret_len);

/* The JSON string body the project prints for UTF-8 text (json-c's escapes with '/' left as is,
 * so the bytes equal json_object_to_json_string_ext with DSH_JSON_PRINT_FLAGS, quotes aside):
 * its length, and the body written to out (room for dsh_json_escaped_length bytes). */
size_t dsh_json_escaped_length(const char *text, size_t len);
size_t dsh_json_escape(char *out, const char *text, size_t len);
/* The same in place: buf holds len bytes of text (escaped_len: their dsh_json_escaped_length) and
 * room for shift + escaped_len bytes; the escaped body is written at buf + shift. Returns
 * shift + escaped_len. */
size_t dsh_json_escape_backward(char *buf, size_t len, size_t escaped_len, size_t shift);

#endif

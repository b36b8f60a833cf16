/* Strict JSON text parsing for everything that crosses a trust boundary as JSON (control frames,
 * specs, requests, command-line JSON): exactly one RFC 8259 value, UTF-8 validated, bounded
 * nesting, no NaN/Infinity, comments or trailing text. json-c's own
 * json_tokener_parse accepts all of those. Also the one way the project prints JSON text. */
#ifndef DSH_JSON_STRICT_H
#define DSH_JSON_STRICT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Nesting deeper than this is refused (json-c recurses per level). */
#define DSH_JSON_MAX_DEPTH 512

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

#endif

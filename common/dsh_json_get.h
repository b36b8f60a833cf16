/* Typed reads of json-c values for host code: each accessor returns the member only when it has
 * the asked type, and "absent" (NULL or false) for a missing member, a member of another type, or
 * a NULL container. Every JSON value a program, a client or a downstream server sends is read
 * through these (never json_object_get_string and friends on an unchecked member), so a JSON null
 * or a number where a string belongs is an ordinary "missing" case and can never reach strcmp.
 * Rule for the folders' READMEs: `grep -n 'json_object_get_string\|json_object_object_get(' FILE`
 * finds nothing outside this file and printing code. */
#ifndef DSH_JSON_GET_H
#define DSH_JSON_GET_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* obj[key] when obj is an object and the member exists (any type, JSON null included as a
 * json-c NULL is indistinguishable: use dsh_json_has), else NULL (transfer none). */
json_object *dsh_json_member(json_object *obj, const char *key);

/* Whether obj is an object with a member key (of any type, null included). */
bool dsh_json_has(json_object *obj, const char *key);

/* obj[key] as a string: its bytes (NUL-terminated, transfer none) and, when ret_len is not NULL,
 * its length (which counts any NUL inside); NULL when absent or not a string. */
const char *dsh_json_get_string(json_object *obj, const char *key, size_t *ret_len);

/* The same, but only a string without NUL bytes (usable as a C string, e.g. a name). */
const char *dsh_json_get_text(json_object *obj, const char *key);

/* obj[key] as an object or an array (transfer none), NULL when absent or of another type. */
json_object *dsh_json_get_object(json_object *obj, const char *key);
json_object *dsh_json_get_array(json_object *obj, const char *key);

/* obj[key] as a boolean: true with *ret set when it is one. */
bool dsh_json_get_bool(json_object *obj, const char *key, bool *ret);

/* obj[key] as an integer in [min, max]: true with *ret set when it is a JSON integer (no
 * fraction, no exponent out of range) inside the range; false otherwise (also for doubles). */
bool dsh_json_get_int64(json_object *obj, const char *key, int64_t min, int64_t max, int64_t *ret);

/* The same checks for a value itself rather than a member (array elements). */
const char *dsh_json_as_string(json_object *v, size_t *ret_len);
const char *dsh_json_as_text(json_object *v);
bool dsh_json_as_int64(json_object *v, int64_t min, int64_t max, int64_t *ret);

#endif

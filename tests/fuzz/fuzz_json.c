/* The strict lossless JSON parser, validator and encoder (common/json_strict.c) against each other
 * and against json-c as the reference:
 * - the validator (dsh_json_scan_value) accepts exactly what the tree parser accepts, at the
 *   tree's depth bound; the text parser's refusals are a subset of the value parser's;
 * - an accepted value prints to text that parses back to the same text (a fixed point), equal to
 *   what its compact form prints, and json-c's own parser accepts the input too;
 * - a number's text is kept exactly;
 * - an array's elements and an object's named members, read as slices of the text, are the values
 *   the tree holds; an envelope keeps the named members as exactly those slices and no tree of them;
 * - the string encoder writes what json-c prints for the same bytes, forward and in place, and the
 *   decoder gives those bytes back. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_json_strict.h"
#include "fuzz_target.h"

static const char *print(json_object *v)
{
    return json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS);
}

/* Whether text is the JSON null, which json-c represents as NULL (so a parser's NULL alone does
 * not say "refused"). */
static bool is_null(const char *text, size_t len)
{
    char *compact = malloc(len + 1);
    size_t n = dsh_json_compact(compact, text, len);
    bool null = n == 4 && !memcmp(compact, "null", 4);
    free(compact);
    return null;
}

struct elements {
    json_object *array;
    size_t count;
};

static bool same_element(void *arg, size_t index, struct dsh_json_slice element)
{
    struct elements *e = arg;
    json_object *parsed = dsh_json_parse_strict_value(element.text, element.len);
    fuzz_check(index == e->count && index < json_object_array_length(e->array), "element %zu", index);
    fuzz_check(!strcmp(print(parsed), print(json_object_array_get_idx(e->array, index))), "element %zu differs", index);
    json_object_put(parsed);
    e->count++;
    return true;
}

/* The slices of a checked value's text against its tree. */
static void check_slices(const char *text, size_t len, json_object *value)
{
    if (json_object_is_type(value, json_type_array)) {
        struct elements e = {.array = value};
        fuzz_check(dsh_json_elements(text, len, same_element, &e) && e.count == json_object_array_length(value),
                   "elements: %zu of %zu", e.count, json_object_array_length(value));
        return;
    }
    if (!json_object_is_type(value, json_type_object))
        return;
    static const char *const names[] = {"value", "args", NULL};
    struct dsh_json_slice members[2], raw[2];
    fuzz_check(dsh_json_members(text, len, names, members), "members of an object");
    for (size_t k = 0; k < 2; k++) {
        json_object *member;
        if (!json_object_object_get_ex(value, names[k], &member)) {
            fuzz_check(!members[k].text, "a slice for the absent member %s", names[k]);
            continue;
        }
        json_object *parsed = dsh_json_parse_strict_value(members[k].text, members[k].len);
        fuzz_check(members[k].text && !strcmp(print(parsed), print(member)), "member %s differs", names[k]);
        json_object_put(parsed);
    }
    json_object *envelope = dsh_json_parse_envelope(text, len, names, raw, DSH_JSON_ENVELOPE_MAX_NODES);
    if (envelope) {
        for (size_t k = 0; k < 2; k++) {
            fuzz_check(raw[k].text == members[k].text && raw[k].len == members[k].len, "envelope slice %s", names[k]);
            fuzz_check(!json_object_object_get_ex(envelope, names[k], NULL), "envelope built %s", names[k]);
        }
        json_object_put(envelope);
    }
}

static void check_value(const char *text, size_t len)
{
    json_object *value = dsh_json_parse_strict_value(text, len);
    bool scanned = dsh_json_is_value(text, len, DSH_JSON_MAX_DEPTH, NULL);
    if (scanned && is_null(text, len)) {
        fuzz_check(!value && !dsh_json_parse_strict(text, len), "null parsed to a value");
        return;
    }
    fuzz_check(scanned == (value != NULL), "validator %d, tree parser %d", scanned, value != NULL);

    json_object *plain = dsh_json_parse_strict(text, len);
    fuzz_check(!plain || value, "the text parser accepted what the value parser refused");
    if (plain) {
        fuzz_check(!strcmp(print(plain), print(value)), "the two parsers print differently");
        json_object_put(plain);
    }
    if (!value)
        return;

    char *printed = strdup(print(value));
    size_t printed_len = strlen(printed);
    fuzz_check(dsh_json_is_value(printed, printed_len, DSH_JSON_MAX_DEPTH, NULL), "printed text invalid: %s", printed);
    json_object *again = dsh_json_parse_strict_value(printed, printed_len);
    fuzz_check(again && !strcmp(print(again), printed), "printing is no fixed point: %s", printed);
    json_object_put(again);

    char *compact = malloc(len + 1);
    size_t compact_len = dsh_json_compact(compact, text, len);
    json_object *from_compact = dsh_json_parse_strict_value(compact, compact_len);
    fuzz_check(from_compact && !strcmp(print(from_compact), printed), "the compact form differs: %.*s",
               (int)compact_len, compact);
    json_object_put(from_compact);
    check_slices(text, len, value);

    /* A bare number prints exactly as written. */
    if (compact[0] == '-' || (compact[0] >= '0' && compact[0] <= '9'))
        fuzz_check(printed_len == compact_len && !memcmp(printed, compact, printed_len), "number text changed: %.*s -> %s",
                   (int)compact_len, compact, printed);
    free(compact);

    /* json-c, the reference, accepts every strict value (at a depth bound above the strict one). */
    struct json_tokener *tok = json_tokener_new_ex(DSH_JSON_MAX_DEPTH + 2);
    json_object *reference = json_tokener_parse_ex(tok, text, (int)len);
    fuzz_check(reference || json_tokener_get_error(tok) == json_tokener_continue,
               "json-c refused a strict value: %s", json_tokener_error_desc(json_tokener_get_error(tok)));
    json_object_put(reference);
    json_tokener_free(tok);

    json_object_put(value);
    free(printed);
}

static void check_string(const char *bytes, size_t len)
{
    size_t escaped_len = dsh_json_escaped_length(bytes, len);
    char *escaped = malloc(escaped_len + 2);
    fuzz_check(dsh_json_escape(escaped, bytes, len) == escaped_len, "escape wrote another length");
    escaped[escaped_len] = '"';

    /* Only UTF-8 text is a JSON string; json-c prints it with the same escapes. */
    json_object *reference = json_object_new_string_len(bytes, (int)len);
    const char *printed = print(reference);
    size_t decoded_len;
    char *decoded = malloc(escaped_len + 1);
    if (dsh_json_decode_string(escaped, escaped + escaped_len + 1, decoded, &decoded_len)) {
        fuzz_check(decoded_len == len && !memcmp(decoded, bytes, len), "decode(escape(s)) != s");
        fuzz_check(strlen(printed) == escaped_len + 2 && !memcmp(printed + 1, escaped, escaped_len),
                   "json-c prints %s, the encoder \"%.*s\"", printed, (int)escaped_len, escaped);
    }
    json_object_put(reference);

    /* In place, shifted by a few bytes: the same body. */
    size_t shift = len % 7;
    char *buf = malloc(shift + escaped_len + 1);
    memcpy(buf, bytes, len);
    fuzz_check(dsh_json_escape_backward(buf, len, escaped_len, shift) == shift + escaped_len, "backward length");
    fuzz_check(!memcmp(buf + shift, escaped, escaped_len), "escaping in place differs");
    free(buf);
    free(decoded);
    free(escaped);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_value((const char *)data, size);
    check_string((const char *)data, size);
    return 0;
}

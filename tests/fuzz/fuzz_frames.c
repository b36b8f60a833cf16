/* Control frames from the child (plugin/base/frames.c), two decoders against each other: the
 * fast one that decodes the bootstrap's text frames in place (ptc__frame_parse) and the general
 * one (ptc__frame_parse_json). Any line: both accept or both refuse, and an accepted frame has
 * the same type, run and fields through both. Every pointer a frame holds is read, so ASan sees a
 * field that points into freed or foreign memory. */
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "fuzz_target.h"

static bool same_bytes(const char *a, size_t a_len, const char *b, size_t b_len)
{
    return (a == NULL) == (b == NULL) && a_len == b_len && (!a || !memcmp(a, b, a_len));
}

static bool same_text(const char *a, const char *b)
{
    return (a == NULL) == (b == NULL) && (!a || !strcmp(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = malloc(size + 1), *copy = malloc(size + 1);
    memcpy(line, data, size);
    memcpy(copy, data, size);
    line[size] = copy[size] = '\0';
    struct ptc_frame fast, general;
    char why_fast[256], why_general[256];
    int rc_fast = ptc__frame_parse(line, size, &fast, why_fast, sizeof why_fast);
    int rc_general = ptc__frame_parse_json(copy, size, &general, why_general, sizeof why_general);
    fuzz_check((rc_fast == 0) == (rc_general == 0), "fast %d (%s), general %d (%s)", rc_fast,
               rc_fast ? why_fast : "", rc_general, rc_general ? why_general : "");
    if (rc_fast == 0) {
        fuzz_check(fast.type == general.type && fast.run == general.run, "type %d/%d run %llu/%llu", fast.type,
                   general.type, (unsigned long long)fast.run, (unsigned long long)general.run);
        fuzz_check(same_bytes(fast.text, fast.text_len, general.text, general.text_len), "text differs");
        fuzz_check(fast.protocol == general.protocol && same_text(fast.node, general.node) &&
                       same_text(fast.python, general.python) && fast.stripped_programs == general.stripped_programs,
                   "hello differs");
        fuzz_check(fast.call == general.call && same_text(fast.global, general.global) &&
                       same_text(fast.name, general.name) &&
                       same_bytes(fast.args, fast.args_bytes, general.args, general.args_bytes),
                   "call differs");
        fuzz_check(fast.ok == general.ok && fast.has_value == general.has_value &&
                       same_bytes(fast.value, fast.value_len, general.value, general.value_len) &&
                       fast.error_kind == general.error_kind &&
                       same_bytes(fast.error_message, fast.error_message_len, general.error_message,
                                  general.error_message_len),
                   "result differs");
        /* Values and arguments pass on as text: each is one strict value. */
        if (fast.args)
            fuzz_check(dsh_json_is_value(fast.args, fast.args_bytes, DSH_JSON_VALUE_MAX_DEPTH + 1, NULL), "args");
        if (fast.value)
            fuzz_check(dsh_json_is_value(fast.value, fast.value_len, DSH_JSON_VALUE_MAX_DEPTH + 1, NULL), "value");
        ptc__frame_release(&fast);
        ptc__frame_release(&general);
    }
    free(line);
    free(copy);
    return 0;
}

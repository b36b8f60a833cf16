/* The strip invariant: what an untrusted type stripper may have done to a program (strip_check.c). */
#ifndef PTC_STRIP_CHECK_H
#define PTC_STRIP_CHECK_H

#include <stddef.h>

/* Each way a stripped text can break the invariant: name, then the sentence a refusal reports. */
#define PTC_STRIP_VIOLATION_TABLE(X)                                                          \
    X(NONE, "the stripped text keeps the invariant")                                          \
    X(LENGTH, "the stripped text is not as long as the program")                              \
    X(INPUT_NOT_UTF8, "the program is not valid UTF-8")                                       \
    X(OUTPUT_NOT_UTF8, "the stripped text is not valid UTF-8")                                \
    X(LINE_MOVED, "a line terminator of the program was removed or moved")                    \
    X(NOT_WHITESPACE, "a changed character did not become whitespace")                        \
    X(SEMICOLON_INSIDE, "a semicolon replaced a character that does not start a blanked run")

enum ptc_strip_violation {
#define PTC_STRIP_VIOLATION_ENUM(name, text) PTC_STRIP_##name,
    PTC_STRIP_VIOLATION_TABLE(PTC_STRIP_VIOLATION_ENUM)
#undef PTC_STRIP_VIOLATION_ENUM
};

/* Checks that `out` is `in` with some characters blanked (see strip_check.c for the exact rule).
 * Returns PTC_STRIP_NONE, or the first violation with its byte offset in *at (if at != NULL). */
enum ptc_strip_violation ptc__strip_check(const char *in, size_t in_len, const char *out,
                                          size_t out_len, size_t *at);

/* The sentence for a violation (static storage). */
const char *ptc__strip_violation_text(enum ptc_strip_violation violation);

#endif

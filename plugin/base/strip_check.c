/* The type stripper runs outside the program's process and its output is untrusted: before a
 * stripped program is sent to the child, this file checks that the stripper could only have
 * blanked text, never added any. The rule, over bytes of UTF-8:
 *
 *   - the output is exactly as long as the program, and both are valid UTF-8;
 *   - every output character is either the program's character at the same offset, byte for byte,
 *     or a replacement covering program bytes that hold no line terminator (LF, CR, U+2028,
 *     U+2029), so every line keeps its number and every unchanged character its column;
 *   - a replacement is JavaScript whitespace of the sizes amaro uses so that a blanked character
 *     keeps both its UTF-8 and its UTF-16 length: U+0020 (1 byte), U+00A0 (2), U+2002 (3), U+FEFF
 *     (3; after a U+0020 it blanks a 4-byte character); or, as the only exception, a `;` as the
 *     first character of a run of replacements: amaro
 *     writes it where a removed declaration (`type A = ...` on the line after a statement with no
 *     semicolon) would otherwise let the next line continue that statement.
 *
 * A stripper that follows the rule can change what a program does only the way deleting some of
 * the model's own characters could; it cannot insert code. Depends on libc only. */
#include "strip_check.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 character at s[0..left), or 0 (overlong forms, surrogates and code
 * points past U+10FFFF are invalid). */
static size_t utf8_char_len(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (left < n)
        return 0;
    for (size_t k = 1; k < n; k++) {
        if ((s[k] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[k] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

static bool valid_utf8(const unsigned char *s, size_t len, size_t *at)
{
    for (size_t i = 0; i < len;) {
        size_t n = utf8_char_len(s + i, len - i);
        if (!n) {
            *at = i;
            return false;
        }
        i += n;
    }
    return true;
}

/* Whether program bytes [from, to) touch a line terminator (a U+2028/U+2029 straddling either
 * end counts: its bytes would no longer form it). */
static bool holds_line_terminator(const unsigned char *in, size_t len, size_t from, size_t to)
{
    size_t start = from >= 2 ? from - 2 : 0;
    for (size_t j = start; j < to; j++) {
        if (j >= from && (in[j] == '\n' || in[j] == '\r'))
            return true;
        if (j + 2 < len && j + 2 >= from && in[j] == 0xe2 && in[j + 1] == 0x80 &&
            (in[j + 2] == 0xa8 || in[j + 2] == 0xa9))
            return true;
    }
    return false;
}

/* The whitespace characters amaro writes over blanked text (UTF-8). */
static bool is_blank(const unsigned char *c, size_t n)
{
    static const char *const blanks[] = {" ", "\xc2\xa0", "\xe2\x80\x82", "\xef\xbb\xbf"};
    for (size_t k = 0; k < sizeof(blanks) / sizeof(blanks[0]); k++)
        if (strlen(blanks[k]) == n && memcmp(blanks[k], c, n) == 0)
            return true;
    return false;
}

enum ptc_strip_violation ptc__strip_check(const char *in_text, size_t in_len, const char *out_text,
                                          size_t out_len, size_t *at)
{
    const unsigned char *in = (const unsigned char *)in_text;
    const unsigned char *out = (const unsigned char *)out_text;
    size_t where = 0;
    enum ptc_strip_violation violation = PTC_STRIP_NONE;
    bool in_run = false; /* the previous output character was a replacement */
    if (out_len != in_len) {
        violation = PTC_STRIP_LENGTH;
        where = out_len < in_len ? out_len : in_len;
    } else if (!valid_utf8(in, in_len, &where)) {
        violation = PTC_STRIP_INPUT_NOT_UTF8;
    }
    for (size_t i = 0; violation == PTC_STRIP_NONE && i < out_len;) {
        size_t n = utf8_char_len(out + i, out_len - i);
        where = i;
        if (!n) {
            violation = PTC_STRIP_OUTPUT_NOT_UTF8;
            break;
        }
        bool same = true;
        for (size_t k = 0; k < n; k++)
            same = same && out[i + k] == in[i + k];
        /* An equal lead byte means the program has the same character here (both are valid). */
        if (!same) {
            bool semicolon = n == 1 && out[i] == ';';
            if (holds_line_terminator(in, in_len, i, i + n))
                violation = PTC_STRIP_LINE_MOVED;
            else if (semicolon && in_run)
                violation = PTC_STRIP_SEMICOLON_INSIDE;
            else if (!semicolon && !is_blank(out + i, n))
                violation = PTC_STRIP_NOT_WHITESPACE;
        }
        in_run = !same;
        i += n;
    }
    if (at)
        *at = where;
    return violation;
}

const char *ptc__strip_violation_text(enum ptc_strip_violation violation)
{
    static const char *const texts[] = {
#define PTC_STRIP_VIOLATION_TEXT(name, text) [PTC_STRIP_##name] = text,
        PTC_STRIP_VIOLATION_TABLE(PTC_STRIP_VIOLATION_TEXT)
#undef PTC_STRIP_VIOLATION_TEXT
    };
    return (size_t)violation < sizeof(texts) / sizeof(texts[0]) ? texts[violation] : "unknown";
}

/* The strip invariant checker (plugin/base/strip_check.c) that stands between the untrusted type
 * stripper and the child, against a reference written from the rule alone: an output is accepted
 * exactly when it is as long as the program, both are UTF-8, the program's line terminators all
 * stand where they stood, and every character that differs is one of amaro's blanks, or a `;`
 * right after an unchanged character. The input's first half is a program; its second half is a
 * plan that blanks, semicolons, keeps or corrupts the program's characters one by one, so both
 * accepted and refused outputs are common. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "strip_check.h"

/* A UTF-8 character's length at s (0: invalid), from the standard's table. */
static size_t char_len(const unsigned char *s, size_t left)
{
    static const struct {
        unsigned char lo, hi, lo2, hi2;
        size_t n;
    } forms[] = {
        {0x00, 0x7f, 0, 0, 1},    {0xc2, 0xdf, 0x80, 0xbf, 2}, {0xe0, 0xe0, 0xa0, 0xbf, 3},
        {0xe1, 0xec, 0x80, 0xbf, 3}, {0xed, 0xed, 0x80, 0x9f, 3}, {0xee, 0xef, 0x80, 0xbf, 3},
        {0xf0, 0xf0, 0x90, 0xbf, 4}, {0xf1, 0xf3, 0x80, 0xbf, 4}, {0xf4, 0xf4, 0x80, 0x8f, 4},
    };
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        if (s[0] < forms[f].lo || s[0] > forms[f].hi)
            continue;
        if (forms[f].n > left)
            return 0;
        if (forms[f].n > 1 && (s[1] < forms[f].lo2 || s[1] > forms[f].hi2))
            return 0;
        for (size_t k = 2; k < forms[f].n; k++)
            if (s[k] < 0x80 || s[k] > 0xbf)
                return 0;
        return forms[f].n;
    }
    return 0;
}

static bool utf8(const unsigned char *s, size_t len)
{
    for (size_t i = 0, n; i < len; i += n)
        if (!(n = char_len(s + i, len - i)))
            return false;
    return true;
}

/* The length of a line terminator (LF, CR, U+2028, U+2029) at s, or 0. */
static size_t terminator(const unsigned char *s, size_t left)
{
    if (s[0] == '\n' || s[0] == '\r')
        return 1;
    return left >= 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9) ? 3 : 0;
}

static const char *const blanks[] = {NULL, " ", "\xc2\xa0", "\xe2\x80\x82", " \xef\xbb\xbf"};

static bool reference_accepts(const unsigned char *in, const unsigned char *out, size_t len)
{
    if (!utf8(in, len) || !utf8(out, len))
        return false;
    for (size_t i = 0, n; i < len; i += n) {
        n = terminator(in + i, len - i);
        if (n && memcmp(in + i, out + i, n))
            return false;
        n = char_len(in + i, len - i);
    }
    bool after_unchanged = false;
    for (size_t i = 0, n; i < len; i += n) {
        n = char_len(out + i, len - i);
        bool same = !memcmp(in + i, out + i, n);
        bool blank = (n == 1 && out[i] == ' ') || (n == 2 && !memcmp(out + i, blanks[2], 2)) ||
                     (n == 3 && (!memcmp(out + i, blanks[3], 3) || !memcmp(out + i, "\xef\xbb\xbf", 3)));
        if (!same && !blank && !(n == 1 && out[i] == ';' && (i == 0 || after_unchanged)))
            return false;
        after_unchanged = same;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t len = size / 2;
    const unsigned char *in = data, *plan = data + len;
    unsigned char *out = malloc(len + 1);
    memcpy(out, plan, len);
    if (utf8(in, len)) {
        for (size_t i = 0, n; i < len; i += n) {
            n = char_len(in + i, len - i);
            switch (plan[i] % 8) {
            case 1:
            case 2:
                memcpy(out + i, blanks[n], n);
                break;
            case 3:
                out[i] = ';';
                if (n > 1)
                    memcpy(out + i + 1, blanks[n - 1], n - 1); /* the rest blanked */
                break;
            case 4:
                out[i] = plan[i]; /* a corrupted byte */
                memcpy(out + i + 1, in + i + 1, n - 1);
                break;
            default:
                memcpy(out + i, in + i, n);
            }
        }
    }
    size_t at;
    enum ptc_strip_violation v = ptc__strip_check((const char *)in, len, (const char *)out, len, &at);
    bool expected = reference_accepts(in, out, len);
    fuzz_check((v == PTC_STRIP_NONE) == expected, "checker: %s at %zu; reference %s", ptc__strip_violation_text(v),
               at, expected ? "accepts" : "refuses");
    free(out);
    return 0;
}

/* Raw stdout/stderr bytes become result text: valid UTF-8 only. Sequences split across reads are
 * carried over; invalid bytes become U+FFFD so the result stays valid JSON. */
#include "utf8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid sequence starting at s (n bytes available): >0 valid length, 0 incomplete
 * but possibly valid, -1 invalid first byte(s). */
static int sequence_length(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    int need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlongs */
        if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    } else
        return -1;
    for (int i = 1; i < need; i++) {
        if ((size_t)i >= n)
            return 0;
        unsigned char lo_i = i == 1 ? lo : 0x80, hi_i = i == 1 ? hi : 0xBF;
        if (s[i] < lo_i || s[i] > hi_i)
            return -1;
    }
    return need;
}

int ptc__utf8_sanitize(struct ptc_utf8_carry *carry, const char *bytes, size_t len, bool at_eof,
                       char **ret_text, size_t *ret_len)
{
    size_t total = carry->len + len;
    unsigned char *in = malloc(total ? total : 1);
    /* Each input byte yields at most 3 output bytes (U+FFFD). */
    char *out = malloc(total * 3 + 1);
    if (!in || !out) {
        free(in);
        free(out);
        return -ENOMEM;
    }
    memcpy(in, carry->bytes, carry->len);
    memcpy(in + carry->len, bytes, len);
    carry->len = 0;
    size_t i = 0, o = 0;
    while (i < total) {
        int n = sequence_length(in + i, total - i);
        if (n > 0) {
            memcpy(out + o, in + i, (size_t)n);
            o += (size_t)n;
            i += (size_t)n;
        } else if (n == 0 && !at_eof) {
            memcpy(carry->bytes, in + i, total - i);
            carry->len = total - i;
            break;
        } else {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += 1;
        }
    }
    free(in);
    out[o] = '\0';
    *ret_text = out;
    *ret_len = o;
    return 0;
}

size_t ptc__utf8_prefix(const char *text, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t cut = max;
    /* Back up over continuation bytes so the cut never splits a character. */
    while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80)
        cut--;
    return cut;
}

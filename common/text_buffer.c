/* See dsh_text_buffer.h. */
#include "dsh_text_buffer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dsh_text_buffer_write(void *buffer, unsigned char *bytes, size_t size)
{
    struct dsh_text_buffer *b = buffer;
    if (b->len + size + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + size + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return 0;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, size);
    b->len += size;
    b->data[b->len] = '\0';
    return 1;
}

size_t dsh_utf8_cut(const char *text, size_t len, size_t max)
{
    size_t n = len < max ? len : max, start = n;
    while (start > 0 && ((unsigned char)text[start - 1] & 0xC0) == 0x80)
        start--;
    if (start == 0)
        return n; /* no lead byte: not UTF-8 to begin with */
    unsigned char lead = (unsigned char)text[start - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return n - (start - 1) < need ? start - 1 : n;
}

void dsh_utf8_vformat(char *buf, size_t size, const char *fmt, va_list ap)
{
    vsnprintf(buf, size, fmt, ap);
    buf[dsh_utf8_cut(buf, strlen(buf), size)] = '\0';
}

/* See dsh_text_buffer.h. */
#include "dsh_text_buffer.h"

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

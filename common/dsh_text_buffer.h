/* A growing NUL-terminated text buffer. dsh_text_buffer_write has the shape of libyaml's output
 * handler (yaml_emitter_set_output(&e, dsh_text_buffer_write, &buf)) without depending on it. */
#ifndef DSH_TEXT_BUFFER_H
#define DSH_TEXT_BUFFER_H

#include <stddef.h>

/* Zero-initialized it is empty; data is NUL-terminated once anything was appended. The owner
 * frees data. */
struct dsh_text_buffer {
    char *data;
    size_t len;
    size_t cap;
};

/* Appends bytes[0..size): 1 on success, 0 when out of memory (the buffer keeps what it had). */
int dsh_text_buffer_write(void *buffer, unsigned char *bytes, size_t size);

#endif

/* A growing NUL-terminated text buffer. dsh_text_buffer_write has the shape of libyaml's output
 * handler (yaml_emitter_set_output(&e, dsh_text_buffer_write, &buf)) without depending on it. */
#ifndef DSH_TEXT_BUFFER_H
#define DSH_TEXT_BUFFER_H

#include <stdarg.h>
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

/* The length of text[0..len) cut to at most max bytes without ending inside a UTF-8 sequence, so
 * a shortened message quoting UTF-8 text is UTF-8 too (a JSON peer refuses it otherwise). */
size_t dsh_utf8_cut(const char *text, size_t len, size_t max);

/* vsnprintf into buf[0..size), then cut with dsh_utf8_cut: a message however long stays UTF-8
 * when what it quotes is. */
void dsh_utf8_vformat(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif

/* Whole files and whole buffers (dshh_text_file.c). */
#ifndef DSHH_TEXT_FILE_H
#define DSHH_TEXT_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* The whole file at path ("-": stdin), NUL-terminated, its length in *ret_len; NULL with errno. */
char *dshh__read_text_file(const char *path, size_t *ret_len);
/* Whether the len bytes of text are UTF-8. */
bool dshh__is_utf8(const char *text, size_t len);
/* Writes all of buf to fd, retrying on EINTR/partial writes. */
int dshh__write_all(int fd, const char *buf, size_t len);

#endif

/* Newline-delimited input with a bounded line length (dshh_lines.c). */
#ifndef DSHH_LINES_H
#define DSHH_LINES_H

#include <stdbool.h>
#include <stddef.h>

struct dshh_lines {
    char *buf;
    size_t len, cap;
    size_t max; /* longest accepted line; set before the first feed */
    bool discarding; /* dropping the rest of an over-long line */
};
/* fn gets each complete line (not NUL-terminated, without its newline), or line NULL once for a
 * line that was dropped (longer than max, or out of memory). */
typedef void (*dshh_line_fn)(void *arg, const char *line, size_t len);
void dshh__lines_feed(struct dshh_lines *lines, const char *data, size_t n, dshh_line_fn fn, void *arg);
/* At EOF: a last line without its newline. */
void dshh__lines_finish(struct dshh_lines *lines, dshh_line_fn fn, void *arg);
/* One read of fd fed to lines; false at EOF or a read error (after finishing the last line). */
bool dshh__lines_read(struct dshh_lines *lines, int fd, dshh_line_fn fn, void *arg);
void dshh__lines_free(struct dshh_lines *lines);

#endif

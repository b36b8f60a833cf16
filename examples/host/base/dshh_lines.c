/* Newline-delimited input: splits what an fd delivers into lines, bounded in length. Used by
 * --serve (stdin), dsh mcp (stdin) and its downstream MCP servers (their stdout). */
#include "dshh_lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void drop_line(struct dshh_lines *lines, dshh_line_fn fn, void *arg)
{
    lines->discarding = true;
    lines->len = 0;
    fn(arg, NULL, 0);
}

void dshh__lines_feed(struct dshh_lines *lines, const char *data, size_t n, dshh_line_fn fn, void *arg)
{
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(data + i, '\n', n - i);
        size_t chunk = nl ? (size_t)(nl - (data + i)) : n - i;
        if (!lines->discarding && lines->len + chunk > lines->max)
            drop_line(lines, fn, arg);
        if (!lines->discarding && lines->len + chunk + 1 > lines->cap) {
            size_t cap = (lines->len + chunk + 1) * 2;
            char *b = realloc(lines->buf, cap);
            if (!b) {
                drop_line(lines, fn, arg);
            } else {
                lines->buf = b;
                lines->cap = cap;
            }
        }
        if (!lines->discarding) {
            memcpy(lines->buf + lines->len, data + i, chunk);
            lines->len += chunk;
        }
        i += chunk;
        if (nl) {
            i++;
            if (!lines->discarding)
                fn(arg, lines->buf ? lines->buf : "", lines->len);
            lines->discarding = false;
            lines->len = 0;
        }
    }
}

bool dshh__lines_read(struct dshh_lines *lines, int fd, dshh_line_fn fn, void *arg)
{
    char chunk[65536];
    /* One read per wakeup: the fd may be blocking (stdin shares its file description) and a
     * level-triggered readiness guarantees this read does not block. */
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n > 0) {
        dshh__lines_feed(lines, chunk, (size_t)n, fn, arg);
        return true;
    }
    dshh__lines_finish(lines, fn, arg);
    return false;
}

void dshh__lines_finish(struct dshh_lines *lines, dshh_line_fn fn, void *arg)
{
    if (lines->len && !lines->discarding)
        fn(arg, lines->buf, lines->len); /* a last line without its newline */
    lines->len = 0;
    lines->discarding = false;
}

void dshh__lines_free(struct dshh_lines *lines)
{
    free(lines->buf);
    *lines = (struct dshh_lines){.max = lines->max};
}

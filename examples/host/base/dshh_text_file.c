/* Reading a program or script file (or "-" for stdin) whole; writing a buffer whole. */
#include "dshh_text_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *dshh__read_text_file(const char *path, size_t *ret_len)
{
    int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            char *b = realloc(buf, cap *= 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            free(buf);
            buf = NULL;
        } else if (n == 0) {
            buf[len] = '\0';
            *ret_len = len;
            break;
        } else {
            len += (size_t)n;
        }
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return buf;
}

/* RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF. */
bool dshh__is_utf8(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text, *end = s + len;
    while (s < end) {
        unsigned c = *s;
        size_t n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 4;
        if (n == 4 || (size_t)(end - s) <= n)
            return false;
        unsigned cp = n == 0 ? c : n == 1 ? c & 0x1f : n == 2 ? c & 0x0f : c & 0x07;
        for (size_t i = 1; i <= n; i++) {
            if ((s[i] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i] & 0x3f);
        }
        static const unsigned min[] = {0, 0x80, 0x800, 0x10000};
        if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        s += n + 1;
    }
    return true;
}

int dshh__write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reading a program or script file (or "-" for stdin) whole. */
#include "dshh.h"

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

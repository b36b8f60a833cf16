/* Writing one value into a /proc control file (uid_map, setgroups, pid_max, ...). */
#include "proc_write.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int dshx__proc_write(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    return n < 0 ? -e : 0;
}

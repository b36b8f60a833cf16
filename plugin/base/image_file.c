/* Image file probing: PNG/JPEG pixel sizes read from host files with bounded reads (the header
 * checks are common/image_probe.c's, shared with hosts that re-check the bytes they send). */
#include "image_file.h"
#include "dsh_abi.h"
#include "dsh_image_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_at(void *ctx, uint64_t offset, unsigned char *buf, size_t len)
{
    int fd = *(const int *)ctx;
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)(offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

int ptc__image_open(const char *host_path, char *why, size_t why_len)
{
    int fd = open(host_path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        snprintf(why, why_len, "%s", strerror(errno));
        return rc;
    }
    return fd;
}

int ptc__image_open_for_reading(int path_fd, char *why, size_t why_len)
{
    struct stat st;
    if (fstat(path_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "not a regular file");
        return -EINVAL;
    }
    /* The fd's /proc link opens that very inode, not a name. */
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", path_fd);
    int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int rc = -errno;
        snprintf(why, why_len, "%s", strerror(errno));
        return rc;
    }
    return fd;
}

int ptc__image_size_of(int fd, uint32_t *ret_width, uint32_t *ret_height, char *why, size_t why_len)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_len, "not a regular file");
        return DSH_E_REQUEST_INVALID;
    }
    int format = dsh_image_probe(read_at, &fd, (uint64_t)st.st_size, ret_width, ret_height, why, why_len);
    if (format > 0)
        return 0;
    return format == DSH_IMAGE_OTHER ? DSH_E_UNSUPPORTED : DSH_E_REQUEST_INVALID;
}

/* Image file probing: PNG/JPEG pixel sizes read from host files with bounded reads. */
#include "image_file.h"
#include "dsh_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* JPEG headers before the frame header (EXIF, ICC) can be large, but never this large. */
#define JPEG_SCAN_LIMIT (64u << 20)

static int why_fail(char *why, size_t why_len, int code, const char *text)
{
    snprintf(why, why_len, "%s", text);
    return code;
}

/* Reads exactly len bytes at offset; -1 on short read. */
static int read_at(int fd, uint64_t offset, unsigned char *buf, size_t len)
{
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

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t be16(const unsigned char *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static int png_size(int fd, uint32_t *w, uint32_t *h, char *why, size_t why_len)
{
    unsigned char b[24];
    /* signature(8) length(4) "IHDR"(4) width(4) height(4) */
    if (read_at(fd, 0, b, sizeof b) != 0 || be32(b + 8) != 13 || memcmp(b + 12, "IHDR", 4) != 0)
        return why_fail(why, why_len, DSH_E_REQUEST_INVALID, "malformed PNG: no IHDR chunk");
    *w = be32(b + 16);
    *h = be32(b + 20);
    if (*w == 0 || *h == 0 || *w > INT32_MAX || *h > INT32_MAX)
        return why_fail(why, why_len, DSH_E_REQUEST_INVALID, "malformed PNG: invalid dimensions");
    return 0;
}

static bool is_sof(unsigned marker)
{
    /* C0-CF are frame headers except DHT (C4), JPG (C8) and DAC (CC). */
    return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

static int jpeg_size(int fd, uint64_t size, uint32_t *w, uint32_t *h, char *why, size_t why_len)
{
    uint64_t pos = 2;
    unsigned char b[9];
    while (pos < size && pos < JPEG_SCAN_LIMIT) {
        if (read_at(fd, pos, b, 2) != 0 || b[0] != 0xFF)
            break;
        if (b[1] == 0xFF) { /* fill byte */
            pos++;
            continue;
        }
        unsigned marker = b[1];
        if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) { /* no length */
            pos += 2;
            continue;
        }
        if (marker == 0xD9 || marker == 0xDA) /* EOI or SOS before any frame header */
            break;
        if (read_at(fd, pos + 2, b, 2) != 0 || be16(b) < 2)
            break;
        uint32_t seg = be16(b);
        if (is_sof(marker)) {
            if (seg < 8 || read_at(fd, pos + 2, b, 7) != 0)
                break;
            *h = be16(b + 3);
            *w = be16(b + 5);
            if (*w == 0 || *h == 0)
                return why_fail(why, why_len, DSH_E_REQUEST_INVALID, "malformed JPEG: invalid dimensions");
            return 0;
        }
        pos += 2 + (uint64_t)seg;
    }
    return why_fail(why, why_len, DSH_E_REQUEST_INVALID, "malformed JPEG: no frame header");
}

/* O_NONBLOCK: a FIFO in place of the file must not block the host thread. */
int ptc__image_open(const char *host_path, char *why, size_t why_len)
{
    int fd = open(host_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
    unsigned char magic[8];
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return why_fail(why, why_len, DSH_E_REQUEST_INVALID, "not a regular file");
    if (read_at(fd, 0, magic, sizeof magic) != 0)
        return why_fail(why, why_len, DSH_E_UNSUPPORTED, "not a PNG or JPEG file");
    if (memcmp(magic, "\x89PNG\r\n\x1a\n", 8) == 0)
        return png_size(fd, ret_width, ret_height, why, why_len);
    if (magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF)
        return jpeg_size(fd, (uint64_t)st.st_size, ret_width, ret_height, why, why_len);
    return why_fail(why, why_len, DSH_E_UNSUPPORTED, "not a PNG or JPEG file");
}

/* PNG and JPEG headers: format and pixel size with bounded reads (dsh_image_probe.h). */
#include "dsh_image_probe.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* JPEG headers before the frame header (EXIF, ICC) can be large, but never this large. */
#define JPEG_SCAN_LIMIT (64u << 20)

static int why_fail(char *why, size_t why_len, int outcome, const char *text)
{
    snprintf(why, why_len, "%s", text);
    return outcome;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t be16(const unsigned char *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static int png_size(dsh_image_read_fn read, void *ctx, uint32_t *w, uint32_t *h, char *why, size_t why_len)
{
    unsigned char b[24];
    /* signature(8) length(4) "IHDR"(4) width(4) height(4) */
    if (read(ctx, 0, b, sizeof b) != 0 || be32(b + 8) != 13 || memcmp(b + 12, "IHDR", 4) != 0)
        return why_fail(why, why_len, DSH_IMAGE_MALFORMED, "malformed PNG: no IHDR chunk");
    *w = be32(b + 16);
    *h = be32(b + 20);
    if (*w == 0 || *h == 0 || *w > INT32_MAX || *h > INT32_MAX)
        return why_fail(why, why_len, DSH_IMAGE_MALFORMED, "malformed PNG: invalid dimensions");
    return DSH_IMAGE_PNG;
}

static bool is_sof(unsigned marker)
{
    /* C0-CF are frame headers except DHT (C4), JPG (C8) and DAC (CC). */
    return marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
}

static int jpeg_size(dsh_image_read_fn read, void *ctx, uint64_t size, uint32_t *w, uint32_t *h, char *why,
                     size_t why_len)
{
    uint64_t pos = 2;
    unsigned char b[9];
    while (pos < size && pos < JPEG_SCAN_LIMIT) {
        if (read(ctx, pos, b, 2) != 0 || b[0] != 0xFF)
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
        if (read(ctx, pos + 2, b, 2) != 0 || be16(b) < 2)
            break;
        uint32_t seg = be16(b);
        if (is_sof(marker)) {
            if (seg < 8 || read(ctx, pos + 2, b, 7) != 0)
                break;
            *h = be16(b + 3);
            *w = be16(b + 5);
            if (*w == 0 || *h == 0)
                return why_fail(why, why_len, DSH_IMAGE_MALFORMED, "malformed JPEG: invalid dimensions");
            return DSH_IMAGE_JPEG;
        }
        pos += 2 + (uint64_t)seg;
    }
    return why_fail(why, why_len, DSH_IMAGE_MALFORMED, "malformed JPEG: no frame header");
}

int dsh_image_probe(dsh_image_read_fn read, void *ctx, uint64_t size, uint32_t *ret_width, uint32_t *ret_height,
                    char *why, size_t why_len)
{
    unsigned char magic[8];
    if (read(ctx, 0, magic, sizeof magic) != 0)
        return why_fail(why, why_len, DSH_IMAGE_OTHER, "not a PNG or JPEG file");
    if (memcmp(magic, "\x89PNG\r\n\x1a\n", 8) == 0)
        return png_size(read, ctx, ret_width, ret_height, why, why_len);
    if (magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF)
        return jpeg_size(read, ctx, size, ret_width, ret_height, why, why_len);
    return why_fail(why, why_len, DSH_IMAGE_OTHER, "not a PNG or JPEG file");
}

struct bytes {
    const unsigned char *data;
    size_t len;
};

static int read_bytes(void *ctx, uint64_t offset, unsigned char *buf, size_t len)
{
    const struct bytes *b = ctx;
    if (offset > b->len || len > b->len - offset)
        return -1;
    memcpy(buf, b->data + offset, len);
    return 0;
}

int dsh_image_probe_bytes(const unsigned char *data, size_t len, uint32_t *ret_width, uint32_t *ret_height,
                          char *why, size_t why_len)
{
    struct bytes b = {data, len};
    return dsh_image_probe(read_bytes, &b, len, ret_width, ret_height, why, why_len);
}

const char *dsh_image_mime_type(int format)
{
    switch (format) {
#define DSH_IMAGE_FORMAT_MIME(name, mime)                                                    \
    case DSH_IMAGE_##name:                                                                         \
        return mime;
        DSH_IMAGE_FORMAT_TABLE(DSH_IMAGE_FORMAT_MIME)
#undef DSH_IMAGE_FORMAT_MIME
    default:
        return NULL;
    }
}

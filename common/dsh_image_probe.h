/* What a PNG or JPEG file's header says: its format and pixel size (PNG: IHDR; JPEG: the first
 * SOFn), read through a callback, so one set of checks serves a file read with pread (a
 * registration) and bytes already in memory (a host about to send them). */
#ifndef DSH_IMAGE_PROBE_H
#define DSH_IMAGE_PROBE_H

#include <stddef.h>
#include <stdint.h>

/* The image formats: X(name, MIME type). */
#define DSH_IMAGE_FORMAT_TABLE(X)                                                                  \
    X(PNG, "image/png")                                                                     \
    X(JPEG, "image/jpeg")

enum dsh_image_format {
    DSH_IMAGE_NONE = 0,
#define DSH_IMAGE_FORMAT_ENUM(name, mime) DSH_IMAGE_##name,
    DSH_IMAGE_FORMAT_TABLE(DSH_IMAGE_FORMAT_ENUM)
#undef DSH_IMAGE_FORMAT_ENUM
};

/* Outcomes of a probe besides a format (negative, so a format is always > 0). */
#define DSH_IMAGE_OTHER (-1)     /* not a PNG or JPEG file */
#define DSH_IMAGE_MALFORMED (-2) /* the header is broken or gives an invalid size */

/* Reads exactly len bytes at offset into buf: 0, or -1 for a short read. */
typedef int (*dsh_image_read_fn)(void *ctx, uint64_t offset, unsigned char *buf, size_t len);

/* The format of a file of size bytes with its pixel size in *ret_width, *ret_height, or
 * DSH_IMAGE_OTHER / DSH_IMAGE_MALFORMED with why filled (one sentence, no trailing period). */
int dsh_image_probe(dsh_image_read_fn read, void *ctx, uint64_t size, uint32_t *ret_width, uint32_t *ret_height,
                    char *why, size_t why_len);
/* The same for bytes in memory. */
int dsh_image_probe_bytes(const unsigned char *data, size_t len, uint32_t *ret_width, uint32_t *ret_height,
                          char *why, size_t why_len);
/* "image/png" or "image/jpeg" for a format, else NULL. */
const char *dsh_image_mime_type(int format);

#endif

/* dsh_image_probe_bytes: the checks a host makes on image bytes before it sends them (format
 * from the magic, pixel size from the header), every read bounded by the buffer. */
#include "dsh_image_probe.h"

#include <criterion/criterion.h>
#include <string.h>

static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                    0, 0, 0x01, 0x2c, /* 300 */ 0, 0, 0, 0x40 /* 64 */, 8, 0, 0, 0, 0};
/* SOI, APP0 (16 bytes), SOF0 with 480 rows of 640 columns, EOI. */
static const unsigned char jpeg[] = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J',  'F',  'I',  'F',  0,    1,    1,
                                     0,    0,    1,    0,    1,    0,    0,    0xff, 0xc0, 0x00, 0x0b, 0x08, 0x01,
                                     0xe0, 0x02, 0x80, 0x01, 0x01, 0x11, 0x00, 0xff, 0xd9};

Test(image_probe, png_and_jpeg_give_format_size_and_mime_type)
{
    uint32_t w = 0, h = 0;
    char why[128] = "";
    cr_expect_eq(dsh_image_probe_bytes(png, sizeof png, &w, &h, why, sizeof why), DSH_IMAGE_PNG);
    cr_expect_eq(w, 300);
    cr_expect_eq(h, 64);
    cr_expect_str_eq(dsh_image_mime_type(DSH_IMAGE_PNG), "image/png");
    cr_expect_eq(dsh_image_probe_bytes(jpeg, sizeof jpeg, &w, &h, why, sizeof why), DSH_IMAGE_JPEG);
    cr_expect_eq(w, 640);
    cr_expect_eq(h, 480);
    cr_expect_str_eq(dsh_image_mime_type(DSH_IMAGE_JPEG), "image/jpeg");
    cr_expect_null(dsh_image_mime_type(DSH_IMAGE_OTHER));
}

Test(image_probe, other_bytes_and_cut_headers_are_refused_within_the_buffer)
{
    uint32_t w, h;
    char why[128];
    cr_expect_eq(dsh_image_probe_bytes((const unsigned char *)"root:x:0:0::/root:/bin/sh\n", 27, &w, &h, why, sizeof why),
                 DSH_IMAGE_OTHER);
    cr_expect_str_eq(why, "not a PNG or JPEG file");
    cr_expect_eq(dsh_image_probe_bytes(png, 7, &w, &h, why, sizeof why), DSH_IMAGE_OTHER);
    /* The magic alone is not an image: the header must be inside the bytes. */
    cr_expect_eq(dsh_image_probe_bytes(png, 20, &w, &h, why, sizeof why), DSH_IMAGE_MALFORMED);
    cr_expect_str_eq(why, "malformed PNG: no IHDR chunk");
    cr_expect_eq(dsh_image_probe_bytes(jpeg, 26, &w, &h, why, sizeof why), DSH_IMAGE_MALFORMED);
    cr_expect_str_eq(why, "malformed JPEG: no frame header");
    unsigned char zero[sizeof png];
    memcpy(zero, png, sizeof zero);
    memset(zero + 16, 0, 4);
    cr_expect_eq(dsh_image_probe_bytes(zero, sizeof zero, &w, &h, why, sizeof why), DSH_IMAGE_MALFORMED);
    cr_expect_str_eq(why, "malformed PNG: invalid dimensions");
}

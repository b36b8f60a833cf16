/* Image readers: PNG (IHDR) and JPEG (SOFn) pixel sizes, other formats and malformed files, and
 * the per-environment registry. Fixtures are written by the tests. */
#include "image_file.h"
#include "image.h"
#include "dsh_abi.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static const char *fixture(const unsigned char *bytes, size_t len)
{
    snprintf(path, sizeof path, "/tmp/ptc-img-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, bytes, len), (ssize_t)len);
    close(fd);
    return path;
}

/* What the plugin does with a host file: open it O_PATH, re-open that file for reading, then
 * probe the open file. */
static int probe(const char *host_path, uint32_t *w, uint32_t *h, char *why, size_t why_len)
{
    int path_fd = ptc__image_open(host_path, why, why_len);
    if (path_fd < 0)
        return path_fd;
    int fd = ptc__image_open_for_reading(path_fd, why, why_len);
    close(path_fd);
    if (fd < 0)
        return fd;
    int rc = ptc__image_size_of(fd, w, h, why, why_len);
    close(fd);
    return rc;
}

static int size_of(const unsigned char *bytes, size_t len, uint32_t *w, uint32_t *h)
{
    char why[128];
    int rc = probe(fixture(bytes, len), w, h, why, sizeof why);
    unlink(path);
    return rc;
}

static const unsigned char png_head[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                         0, 0, 0x01, 0x2c, /* 300 */ 0, 0, 0, 0x40 /* 64 */, 8, 6, 0, 0, 0};

Test(images, png_ihdr)
{
    uint32_t w = 0, h = 0;
    cr_expect_eq(size_of(png_head, sizeof png_head, &w, &h), 0);
    cr_expect_eq(w, 300);
    cr_expect_eq(h, 64);
}

Test(images, png_without_ihdr_or_with_zero_size_is_malformed)
{
    uint32_t w, h;
    unsigned char bad[sizeof png_head];
    memcpy(bad, png_head, sizeof bad);
    bad[12] = 'X';
    cr_expect_eq(size_of(bad, sizeof bad, &w, &h), DSH_E_REQUEST_INVALID);
    memcpy(bad, png_head, sizeof bad);
    memset(bad + 16, 0, 4);
    cr_expect_eq(size_of(bad, sizeof bad, &w, &h), DSH_E_REQUEST_INVALID);
    cr_expect_eq(size_of(png_head, 20, &w, &h), DSH_E_REQUEST_INVALID); /* truncated */
}

Test(images, jpeg_skips_segments_and_fill_bytes_to_the_frame_header)
{
    static const unsigned char jpeg[] = {
        0xFF, 0xD8,                                     /* SOI */
        0xFF, 0xE1, 0x00, 0x06, 'E', 'x', 'i', 'f',     /* APP1 */
        0xFF, 0xFF,                                     /* fill */
        0xFF, 0xDB, 0x00, 0x03, 0x00,                   /* DQT */
        0xFF, 0xC2, 0x00, 0x0b, 0x08, 0x01, 0xE0, 0x02, 0x80, 0x01, 0x01, 0x11, 0x00, /* SOF2 480x640 */
        0xFF, 0xD9};
    uint32_t w = 0, h = 0;
    cr_expect_eq(size_of(jpeg, sizeof jpeg, &w, &h), 0);
    cr_expect_eq(w, 640);
    cr_expect_eq(h, 480);
}

Test(images, jpeg_without_frame_header_is_malformed)
{
    static const unsigned char sos_first[] = {0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0xFF, 0xD9};
    static const unsigned char dht_only[] = {0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x09, 0, 0, 0, 0, 0, 0, 0};
    static const unsigned char runaway[] = {0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF, 0x00, 0x00};
    uint32_t w, h;
    cr_expect_eq(size_of(sos_first, sizeof sos_first, &w, &h), DSH_E_REQUEST_INVALID);
    cr_expect_eq(size_of(dht_only, sizeof dht_only, &w, &h), DSH_E_REQUEST_INVALID);
    cr_expect_eq(size_of(runaway, sizeof runaway, &w, &h), DSH_E_REQUEST_INVALID);
}

Test(images, other_formats_are_unsupported)
{
    static const unsigned char gif[] = "GIF89a\x01\x00\x01\x00";
    uint32_t w, h;
    cr_expect_eq(size_of(gif, sizeof gif - 1, &w, &h), DSH_E_UNSUPPORTED);
    cr_expect_eq(size_of((const unsigned char *)"ab", 2, &w, &h), DSH_E_UNSUPPORTED);
}

Test(images, missing_files_and_directories_fail)
{
    uint32_t w, h;
    char why[128];
    cr_expect_lt(probe("/nonexistent/x.png", &w, &h, why, sizeof why), 0);
    cr_expect_eq(probe("/tmp", &w, &h, why, sizeof why), -EINVAL);
    cr_expect_str_eq(why, "not a regular file");
}

static struct ptc_image *record(const char *id, uint32_t w)
{
    struct ptc_image *image = calloc(1, sizeof *image);
    image->attachment_id = strdup(id);
    image->path = strdup("/w/x.png");
    image->width = w;
    image->height = 1;
    return image;
}

Test(images, registry_keeps_the_first_record_of_an_id_and_describes_from_it)
{
    struct ptc_image *list = NULL;
    struct dsh_error err = {0};
    cr_expect_eq(ptc__images_add(&list, record("a", 1), &err), 0);
    cr_expect_eq(ptc__images_add(&list, record("b", 2), &err), 0);
    /* The same file again is the same Image; another file under a held id is refused. */
    cr_expect_eq(ptc__images_add(&list, record("a", 1), &err), 1);
    cr_expect_eq(ptc__images_add(&list, record("a", 3), &err), DSH_E_REQUEST_INVALID);
    cr_expect(strstr(err.message, "attachment id \"a\" is already registered for /w/x.png (1x1), not /w/x.png (3x1)"),
              "%s", err.message);
    cr_expect_eq(ptc__images_find(list, "a")->width, 1);
    cr_expect_eq(ptc__images_find(list, "b")->width, 2);
    cr_expect_null(ptc__images_find(list, "c"));
    json_object *d = ptc__image_descriptor(ptc__images_find(list, "a"), "image");
    cr_expect_str_eq(json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                     "{\"type\":\"image\",\"attachmentId\":\"a\",\"path\":\"/w/x.png\",\"width\":1,\"height\":1}");
    json_object_put(d);
    /* The host is also told which file it was, as fstat saw it at registration. */
    struct ptc_image *c = record("c", 5);
    c->dev = 2049;
    c->ino = UINT64_MAX;
    c->size = 77;
    d = ptc__image_host_descriptor(c, "image");
    cr_expect_str_eq(json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                     "{\"type\":\"image\",\"attachmentId\":\"c\",\"path\":\"/w/x.png\",\"width\":5,\"height\":1,"
                     "\"dev\":\"2049\",\"ino\":\"18446744073709551615\",\"size\":77}");
    json_object_put(d);
    cr_expect_eq(ptc__images_add(&list, c, &err), 0);
    /* Another file (another inode) at the same path and pixel size is another file. */
    struct ptc_image *other = record("c", 5);
    other->dev = 2049;
    other->ino = 12;
    other->size = 77;
    cr_expect_eq(ptc__images_add(&list, other, &err), DSH_E_REQUEST_INVALID);
    ptc__images_clear(&list);
    cr_expect_null(list);
}

Test(images, shape_check)
{
    const char *bad[] = {"{}", "[1]", "[{\"attachmentId\":\"\",\"path\":\"/a\"}]", "[{\"attachmentId\":\"a\",\"path\":\"rel\"}]",
                         "[{\"attachmentId\":\"a\",\"path\":\"/a\",\"extra\":1}]", NULL};
    for (size_t i = 0; bad[i]; i++) {
        json_object *v = json_tokener_parse(bad[i]);
        cr_expect_eq(ptc__images_check_shape(v, NULL), DSH_E_REQUEST_INVALID, "%s", bad[i]);
        json_object_put(v);
    }
    json_object *ok = json_tokener_parse("[{\"attachmentId\":\"a\",\"path\":\"/a\"}]");
    cr_expect_eq(ptc__images_check_shape(ok, NULL), 0);
    json_object_put(ok);
}

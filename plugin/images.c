/* Registered images: PNG/JPEG pixel sizes read from host files with bounded reads, the mapping
 * into the execution world, and the per-environment registry. */
#include "images.h"
#include "internal.h"
#include "env.h"

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
static int open_image(const char *host_path, char *why, size_t why_len)
{
    int fd = open(host_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int rc = -errno;
        snprintf(why, why_len, "%s", strerror(errno));
        return rc;
    }
    return fd;
}

static int image_size_of(int fd, uint32_t *ret_width, uint32_t *ret_height, char *why, size_t why_len)
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

int ptc__image_size(const char *host_path, uint32_t *ret_width, uint32_t *ret_height, char *why,
                    size_t why_len)
{
    int fd = open_image(host_path, why, why_len);
    if (fd < 0)
        return fd;
    int rc = image_size_of(fd, ret_width, ret_height, why, why_len);
    close(fd);
    return rc;
}

void ptc__image_free(struct ptc_image *image)
{
    if (!image)
        return;
    free(image->attachment_id);
    free(image->path);
    free(image);
}

void ptc__images_clear(struct ptc_image **list)
{
    while (*list) {
        struct ptc_image *next = (*list)->next;
        ptc__image_free(*list);
        *list = next;
    }
}

int ptc__image_load(struct dsh_instance *inst, const char *attachment_id, const char *host_path,
                    struct ptc_image **ret_image, struct dsh_error *err)
{
    if (!attachment_id || !*attachment_id || !host_path || host_path[0] != '/')
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "an image needs a non-empty attachmentId and an absolute path");
    /* Visibility first: nothing is read from a file the execution world cannot see, so errors
     * never tell a program about the host's other files. */
    char world[PATH_MAX];
    const struct dsh_fs_service *fs = inst->services.fs;
    int n = fs->map_host_path(fs->ctx, host_path, world, sizeof world);
    if (n < 0)
        return ptc__fail(err, n, "image %s: the execution world cannot see %s: %s", attachment_id, host_path,
                         dsh_strerror(n));
    if ((size_t)n >= sizeof world)
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "image %s: mapped path is too long", attachment_id);
    char why[256];
    int fd = open_image(host_path, why, sizeof why);
    if (fd < 0)
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "image %s (%s): %s", attachment_id, host_path, why);
    /* The file opened must be one the world can see, also if the path changed since the check
     * (a symlink swapped in by the program). */
    char proc[64], opened[PATH_MAX], scratch[PATH_MAX];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(proc, opened, sizeof opened - 1);
    if (len > 0)
        opened[len] = '\0';
    if (len <= 0 || (size_t)len >= sizeof opened - 1 || fs->map_host_path(fs->ctx, opened, scratch, sizeof scratch) < 0) {
        close(fd);
        return ptc__fail(err, DSH_E_NOT_MAPPED, "image %s: the execution world cannot see %s: %s", attachment_id,
                         host_path, dsh_strerror(DSH_E_NOT_MAPPED));
    }
    uint32_t w = 0, h = 0;
    int rc = image_size_of(fd, &w, &h, why, sizeof why);
    close(fd);
    if (rc != 0)
        return ptc__fail(err, rc < -4096 ? rc : DSH_E_REQUEST_INVALID, "image %s (%s): %s", attachment_id,
                         host_path, why);
    struct ptc_image *image = calloc(1, sizeof *image);
    if (image) {
        image->attachment_id = strdup(attachment_id);
        image->path = strdup(world);
    }
    if (!image || !image->attachment_id || !image->path) {
        ptc__image_free(image);
        return ptc__fail(err, -ENOMEM, "out of memory");
    }
    image->width = w;
    image->height = h;
    *ret_image = image;
    return 0;
}

int ptc__images_add(struct ptc_image **list, struct ptc_image *image, struct dsh_error *err)
{
    const struct ptc_image *known = ptc__images_find(*list, image->attachment_id);
    if (!known) {
        image->next = *list;
        *list = image;
        return 0;
    }
    bool same = strcmp(known->path, image->path) == 0 && known->width == image->width && known->height == image->height;
    if (!same)
        ptc__fail(err, DSH_E_REQUEST_INVALID,
                  "attachment id \"%s\" is already registered for %s (%" PRIu32 "x%" PRIu32 "), not %s (%" PRIu32 "x%" PRIu32 ")",
                  known->attachment_id, known->path, known->width, known->height, image->path, image->width,
                  image->height);
    ptc__image_free(image);
    return same ? 1 : DSH_E_REQUEST_INVALID;
}

const struct ptc_image *ptc__images_find(const struct ptc_image *list, const char *attachment_id)
{
    for (; list; list = list->next)
        if (strcmp(list->attachment_id, attachment_id) == 0)
            return list;
    return NULL;
}

json_object *ptc__image_descriptor(const struct ptc_image *image, const char *type)
{
    json_object *d = json_object_new_object();
    if (type)
        json_object_object_add(d, "type", json_object_new_string(type));
    json_object_object_add(d, "attachmentId", json_object_new_string(image->attachment_id));
    json_object_object_add(d, "path", json_object_new_string(image->path));
    json_object_object_add(d, "width", json_object_new_int64(image->width));
    json_object_object_add(d, "height", json_object_new_int64(image->height));
    return d;
}

int ptc__images_check_shape(json_object *images, struct dsh_error *err)
{
    if (!json_object_is_type(images, json_type_array))
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "images must be an array");
    for (size_t i = 0; i < json_object_array_length(images); i++) {
        json_object *e = json_object_array_get_idx(images, i), *id, *path;
        if (!json_object_is_type(e, json_type_object) || !json_object_object_get_ex(e, "attachmentId", &id) ||
            !json_object_is_type(id, json_type_string) || json_object_get_string_len(id) == 0 ||
            !json_object_object_get_ex(e, "path", &path) || !json_object_is_type(path, json_type_string) ||
            json_object_get_string(path)[0] != '/')
            return ptc__fail(err, DSH_E_REQUEST_INVALID,
                             "images[%zu] must be {attachmentId: non-empty string, path: absolute host path}", i);
        json_object_object_foreach(e, key, val)
        {
            (void)val;
            if (strcmp(key, "attachmentId") && strcmp(key, "path"))
                return ptc__fail(err, DSH_E_REQUEST_INVALID, "images[%zu] has unknown field \"%s\"", i, key);
        }
    }
    return 0;
}

int ptc__images_check_files(struct dsh_instance *inst, json_object *images, struct dsh_error *err)
{
    for (size_t i = 0; i < json_object_array_length(images); i++) {
        json_object *e = json_object_array_get_idx(images, i);
        struct ptc_image *image = NULL;
        int rc = ptc__image_load(inst, json_object_get_string(json_object_object_get(e, "attachmentId")),
                                 json_object_get_string(json_object_object_get(e, "path")), &image, err);
        if (rc != 0)
            return rc;
        ptc__image_free(image);
    }
    return 0;
}

int ptc__env_register_image(struct ptc_env *env, struct ptc_image *image, struct dsh_error *err)
{
    json_object *frame = ptc__image_descriptor(image, "image-register");
    int rc = ptc__images_add(&env->images, image, err);
    if (rc == 0)
        rc = ptc__env_send(env, frame);
    json_object_put(frame);
    return rc < 0 ? rc : 0;
}

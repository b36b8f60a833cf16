/* Image records: an attachment id with its execution-world path and pixel size, loaded from a
 * host file the execution world can see, and the checks of a request's or spec's `images`. */
#include "image.h"
#include "image_file.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void ptc__image_free(struct ptc_image *image)
{
    if (!image)
        return;
    free(image->attachment_id);
    free(image->path);
    free(image);
}

int ptc__image_load(struct ptc_host *host, const char *attachment_id, const char *host_path,
                    struct ptc_image **ret_image, struct dsh_error *err)
{
    if (!attachment_id || !*attachment_id || !host_path || host_path[0] != '/')
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "an image needs a non-empty attachmentId and an absolute path");
    /* Visibility first: nothing is read from a file the execution world cannot see, so errors
     * never tell a program about the host's other files. */
    char world[PATH_MAX];
    const struct dsh_fs_service *fs = host->services.fs;
    int n = fs->map_host_path(fs->ctx, host_path, world, sizeof world);
    if (n < 0)
        return ptc__fail(err, n, "image %s: the execution world cannot see %s: %s", attachment_id, host_path,
                         dsh_strerror(n));
    if ((size_t)n >= sizeof world)
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "image %s: mapped path is too long", attachment_id);
    char why[256];
    int path_fd = ptc__image_open(host_path, why, sizeof why);
    if (path_fd < 0)
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "image %s (%s): %s", attachment_id, host_path, why);
    /* The file the name led to must be one the world can see, also if the path changed since the
     * check (a symlink swapped in by the program); it is recorded under that file's own name. */
    char proc[64], opened[PATH_MAX];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", path_fd);
    ssize_t len = readlink(proc, opened, sizeof opened - 1);
    if (len > 0)
        opened[len] = '\0';
    if (len <= 0 || (size_t)len >= sizeof opened - 1 || opened[0] != '/' ||
        (n = fs->map_host_path(fs->ctx, opened, world, sizeof world)) < 0 || (size_t)n >= sizeof world) {
        close(path_fd);
        return ptc__fail(err, DSH_E_NOT_MAPPED, "image %s: the execution world cannot see %s: %s", attachment_id,
                         host_path, dsh_strerror(DSH_E_NOT_MAPPED));
    }
    int fd = ptc__image_open_for_reading(path_fd, why, sizeof why);
    close(path_fd);
    if (fd < 0)
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "image %s (%s): %s", attachment_id, host_path, why);
    uint32_t w = 0, h = 0;
    struct stat st;
    int rc = fstat(fd, &st) != 0 ? -errno : ptc__image_size_of(fd, &w, &h, why, sizeof why);
    close(fd);
    if (rc < 0 && rc > -4096)
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "image %s (%s): %s", attachment_id, host_path, strerror(-rc));
    if (rc != 0)
        return ptc__fail(err, rc, "image %s (%s): %s", attachment_id, host_path, why);
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
    image->dev = (uint64_t)st.st_dev;
    image->ino = (uint64_t)st.st_ino;
    image->size = (uint64_t)st.st_size;
    *ret_image = image;
    return 0;
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

json_object *ptc__image_host_descriptor(const struct ptc_image *image, const char *type)
{
    json_object *d = ptc__image_descriptor(image, type);
    char number[24];
    /* Decimal strings: a device or inode number may not fit a JSON reader's double. */
    snprintf(number, sizeof number, "%" PRIu64, image->dev);
    json_object_object_add(d, "dev", json_object_new_string(number));
    snprintf(number, sizeof number, "%" PRIu64, image->ino);
    json_object_object_add(d, "ino", json_object_new_string(number));
    json_object_object_add(d, "size", json_object_new_int64((int64_t)image->size));
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

int ptc__images_check_files(struct ptc_host *host, json_object *images, struct dsh_error *err)
{
    for (size_t i = 0; i < json_object_array_length(images); i++) {
        json_object *e = json_object_array_get_idx(images, i);
        struct ptc_image *image = NULL;
        int rc = ptc__image_load(host, json_object_get_string(json_object_object_get(e, "attachmentId")),
                                 json_object_get_string(json_object_object_get(e, "path")), &image, err);
        if (rc != 0)
            return rc;
        ptc__image_free(image);
    }
    return 0;
}

void ptc__images_clear(struct ptc_image **list)
{
    while (*list) {
        struct ptc_image *next = (*list)->next;
        ptc__image_free(*list);
        *list = next;
    }
}

const struct ptc_image *ptc__images_find(const struct ptc_image *list, const char *attachment_id)
{
    for (; list; list = list->next)
        if (strcmp(list->attachment_id, attachment_id) == 0)
            return list;
    return NULL;
}

int ptc__images_add(struct ptc_image **list, struct ptc_image *image, struct dsh_error *err)
{
    const struct ptc_image *known = ptc__images_find(*list, image->attachment_id);
    if (!known) {
        image->next = *list;
        *list = image;
        return 0;
    }
    bool same = strcmp(known->path, image->path) == 0 && known->width == image->width &&
                known->height == image->height && known->dev == image->dev && known->ino == image->ino &&
                known->size == image->size;
    if (!same)
        ptc__fail(err, DSH_E_REQUEST_INVALID,
                  "attachment id \"%s\" is already registered for %s (%" PRIu32 "x%" PRIu32 "), not %s (%" PRIu32 "x%" PRIu32 ")",
                  known->attachment_id, known->path, known->width, known->height, image->path, image->width,
                  image->height);
    ptc__image_free(image);
    return same ? 1 : DSH_E_REQUEST_INVALID;
}

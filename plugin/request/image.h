/* Image records: an attachment id with its execution-world path and pixel size (the child never
 * supplies path or size), and the checks of a request's or spec's `images`. */
#ifndef PTC_IMAGE_H
#define PTC_IMAGE_H

#include "ptc_host.h"

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

struct ptc_image {
    struct ptc_image *next; /* links a list of records (an environment's registry) */
    char *attachment_id;
    char *path; /* execution-world path */
    uint32_t width, height;
    /* The file registered (fstat of the fd the size was read from), so a host that sends its
     * bytes later opens that file and no other (ABI.md, "JSON shapes"). */
    uint64_t dev, ino, size;
};

/* Reads the size and maps host_path into the execution world: fills a new record (transfer full,
 * free with ptc__image_free). */
int ptc__image_load(struct ptc_host *host, const char *attachment_id, const char *host_path,
                    struct ptc_image **ret_image, struct dsh_error *err);
void ptc__image_free(struct ptc_image *image);
/* {"attachmentId","path","width","height"} (+ "type" when type is non-NULL): what the child is
 * told. */
json_object *ptc__image_descriptor(const struct ptc_image *image, const char *type);
/* The same plus the file's identity {"dev","ino"} (decimal strings) and "size": what the host is
 * told (output entries, registerImage). */
json_object *ptc__image_host_descriptor(const struct ptc_image *image, const char *type);
/* Checks a spec/request `images` value: [{attachmentId: non-empty string, path: absolute}]. */
int ptc__images_check_shape(json_object *images, struct dsh_error *err);
/* Loads every entry of a shape-checked `images` array (resolve: fail early on bad files). */
int ptc__images_check_files(struct ptc_host *host, json_object *images, struct dsh_error *err);

/* Lists of records (an environment's registry). */
/* Adds image to a list (ownership taken). An id keeps its first record, since Images the
 * program holds carry its metadata: the same file again (world path, pixel size and file
 * identity) returns 1, another file DSH_E_REQUEST_INVALID (err names both); either way image is freed. 0: added. */
int ptc__images_add(struct ptc_image **list, struct ptc_image *image, struct dsh_error *err);
const struct ptc_image *ptc__images_find(const struct ptc_image *list, const char *attachment_id);
/* Frees a whole list. */
void ptc__images_clear(struct ptc_image **list);

#endif

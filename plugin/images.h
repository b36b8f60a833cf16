/* Registered images: pixel sizes of stored PNG/JPEG files and the per-environment registry that
 * the child's `image` frames are checked against (the child never supplies path or size). */
#ifndef PTC_IMAGES_H
#define PTC_IMAGES_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

struct dsh_instance;
struct dsh_error;

struct ptc_image {
    struct ptc_image *next;
    char *attachment_id;
    char *path; /* execution-world path */
    uint32_t width, height;
};

/* Pixel size of a PNG (IHDR) or JPEG (first SOFn) file, with bounded reads. Returns 0,
 * DSH_E_UNSUPPORTED (another format), DSH_E_REQUEST_INVALID (malformed) or a negative errno
 * (open/read failure); why names the reason. */
int ptc__image_size(const char *host_path, uint32_t *ret_width, uint32_t *ret_height, char *why,
                    size_t why_len);

/* Reads the size and maps host_path into the execution world: fills a new record (transfer full,
 * free with ptc__image_free). */
int ptc__image_load(struct dsh_instance *inst, const char *attachment_id, const char *host_path,
                    struct ptc_image **ret_image, struct dsh_error *err);
void ptc__image_free(struct ptc_image *image);
/* Frees a whole registry list. */
void ptc__images_clear(struct ptc_image **list);
/* Adds image to the registry (ownership taken). An id keeps its first record, since Images the
 * program holds carry its metadata: the same file again (world path and size) returns 1, another
 * file DSH_E_REQUEST_INVALID (err names both); either way image is freed. 0: added. */
int ptc__images_add(struct ptc_image **list, struct ptc_image *image, struct dsh_error *err);
const struct ptc_image *ptc__images_find(const struct ptc_image *list, const char *attachment_id);

/* {"attachmentId","path","width","height"} (+ "type" when type is non-NULL). */
json_object *ptc__image_descriptor(const struct ptc_image *image, const char *type);
/* Checks a spec/request `images` value: [{attachmentId: non-empty string, path: absolute}]. */
int ptc__images_check_shape(json_object *images, struct dsh_error *err);
/* Loads every entry of a shape-checked `images` array (resolve: fail early on bad files). */
int ptc__images_check_files(struct dsh_instance *inst, json_object *images, struct dsh_error *err);

struct ptc_env;
/* Records image in env's registry (ownership taken; see ptc__images_add) and, when it is new,
 * queues {"type":"image-register",...} to the child, so frames queued later (a binding reply)
 * reach the child after it. Returns 0, DSH_E_REQUEST_INVALID (err filled) for another file under
 * a registered id, or the ptc__env_send status when the frame cannot be queued. */
int ptc__env_register_image(struct ptc_env *env, struct ptc_image *image, struct dsh_error *err);

#endif

/* An environment's image registry (images.c): the images registered in its process, against
 * which the child's `image` frames are checked. The list itself is request/image.c's. */
#ifndef PTC_ENV_IMAGES_H
#define PTC_ENV_IMAGES_H

#include "image.h"

struct ptc_env;

/* Records image in env's registry (ownership taken; see ptc__images_add) and, when it is new,
 * queues {"type":"image-register",...} to the child, so frames queued later (a binding reply)
 * reach the child after it. Returns 0, DSH_E_REQUEST_INVALID (err filled) for another file under
 * a registered id, or the ptc__env_send status when the frame cannot be queued. */
int ptc__env_register_image(struct ptc_env *env, struct ptc_image *image, struct dsh_error *err);
/* The image env registered under attachment_id, or NULL. */
const struct ptc_image *ptc__env_find_image(const struct ptc_env *env, const char *attachment_id);

#endif

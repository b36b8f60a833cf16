/* An environment's image registry: the images registered in its process, against which the
 * child's `image` frames are checked. They live as long as the process. */
#include "images.h"
#include "env_private.h"

#include <stdlib.h>
#include <string.h>

int ptc__env_register_image(struct ptc_env *env, struct ptc_image *image, struct dsh_error *err)
{
    json_object *frame = ptc__image_descriptor(image, ptc__frame_type_name(PTC_FRAME_IMAGE_REGISTER));
    int rc = ptc__images_add(&env->images, image, err);
    if (rc == 0)
        rc = ptc__env_send(env, frame);
    json_object_put(frame);
    return rc < 0 ? rc : 0;
}

const struct ptc_image *ptc__env_find_image(const struct ptc_env *env, const char *attachment_id)
{
    return ptc__images_find(env->images, attachment_id);
}

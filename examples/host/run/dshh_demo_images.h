/* tools.registerImage of the demo namespace (dshh_demo_images.c). */
#ifndef DSHH_DEMO_IMAGES_H
#define DSHH_DEMO_IMAGES_H

#include "dshh_host.h"

struct json_object;
/* tools.registerImage({path, attachmentId?}) -> attachmentId */
void dshh__demo_register_image(struct dshh_host *host, dsh_run_id run, uint64_t call,
                               struct json_object *arg);

#endif

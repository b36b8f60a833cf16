/* The provider table: the only exported symbol, dsh_provider_entry, and the calls it lists
 * (instance.c; readable_roots needs no instance: request/own_files.c). */
#include "instance.h"
#include "own_files.h"

static const struct dsh_provider provider = {
    .struct_size = sizeof(struct dsh_provider),
    .abi_major = DSH_ABI_MAJOR,
    .abi_minor = DSH_ABI_MINOR,
    .name = PTC_NAME,
    .version = PTC_VERSION,
    .load = ptc__instance_load,
    .resolve = ptc__instance_resolve,
    .run = ptc__instance_run,
    .release = ptc__instance_release,
    .registerEnvironmentInitializer = ptc__instance_register_initializer,
    .get_fd = ptc__instance_get_fd,
    .dispatch = ptc__instance_dispatch,
    .cancel = ptc__instance_cancel,
    .reply = ptc__instance_reply,
    .describe = ptc__instance_describe,
    .unload = ptc__instance_unload,
    .unregisterEnvironmentInitializer = ptc__instance_unregister_initializer,
    .free_text = ptc__instance_free_text,
    .wait = ptc__instance_wait,
    .registerImage = ptc__instance_register_image,
    .readable_roots = ptc__own_readable_roots,
};

__attribute__((visibility("default"))) const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major)
{
    return host_abi_major == DSH_ABI_MAJOR ? &provider : NULL;
}

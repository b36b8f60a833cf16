/* One loaded provider row (instance.c): the layers it is made of, the environment initializers,
 * describe, and the calls of the provider table (host-abi/ABI.md), for the language (language.h)
 * its entry file passes. node_entry.c (Node) and python/python_entry.c (Python) list them. */
#ifndef PTC_INSTANCE_H
#define PTC_INSTANCE_H

#include "dsh_provider.h"
#include "ptc_host.h"
#include "ptc_run.h"
#include "run_frames.h"

struct ptc_initializer {
    struct ptc_initializer *next;
    dsh_registration id;
    char *program;
};

struct dsh_instance {
    struct ptc_host host;
    struct ptc_envs envs;
    struct ptc_pool pool;
    struct ptc_strippers strippers;
    struct ptc_runs runs;
    struct ptc_initializer *initializers; /* oldest first */
    dsh_registration next_registration;
    bool unloading;
};

struct ptc_language;

int ptc__instance_load(const struct ptc_language *language, const char *config_yaml, size_t config_len,
                       const struct dsh_services *services, struct dsh_instance **ret_instance,
                       struct dsh_error *ret_error);
void ptc__instance_unload(struct dsh_instance *inst);
int ptc__instance_resolve(struct dsh_instance *inst, const char *request_json, size_t request_len,
                          char **ret_spec_json, size_t *ret_spec_len, struct dsh_error *ret_error);
int ptc__instance_run(struct dsh_instance *inst, const char *spec_json, size_t spec_len,
                      const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run, struct dsh_error *ret_error);
int ptc__instance_release(struct dsh_instance *inst, const char *owner, dsh_released_fn on_released, void *userdata,
                          struct dsh_error *ret_error);
int ptc__instance_register_initializer(struct dsh_instance *inst, const char *program, size_t program_len,
                                       dsh_registration *ret_registration, struct dsh_error *ret_error);
int ptc__instance_unregister_initializer(struct dsh_instance *inst, dsh_registration registration,
                                         struct dsh_error *ret_error);
int ptc__instance_get_fd(struct dsh_instance *inst);
int ptc__instance_dispatch(struct dsh_instance *inst);
int ptc__instance_wait(struct dsh_instance *inst, int timeout_ms);
int ptc__instance_cancel(struct dsh_instance *inst, dsh_run_id id, const char *reason);
int ptc__instance_pause_output(struct dsh_instance *inst, dsh_run_id id, bool paused);
int ptc__instance_reply(struct dsh_instance *inst, dsh_run_id id, uint64_t call, bool ok, const char *text,
                        size_t len);
int ptc__instance_describe(struct dsh_instance *inst, char **ret_json, size_t *ret_len, struct dsh_error *ret_error);
int ptc__instance_register_image(struct dsh_instance *inst, dsh_run_id run, const char *attachment_id,
                                 const char *host_path, char **ret_descriptor_json, size_t *ret_len,
                                 struct dsh_error *ret_error);
void ptc__instance_free_text(char *text);

/* describe()'s per-call guidance of the Node runtime. */
extern const char ptc__node_per_call_instructions[];

/* The provider table of a language: every call above, `load` being the language's wrapper and
 * `readable_roots` its own files' directories (request/own_files.h). */
#define PTC_PROVIDER_TABLE(provider_name, load_fn, roots_fn)                       \
    {                                                                              \
        .struct_size = sizeof(struct dsh_provider),                                \
        .abi_major = DSH_ABI_MAJOR,                                                \
        .abi_minor = DSH_ABI_MINOR,                                                \
        .name = provider_name,                                                     \
        .version = PTC_VERSION,                                                    \
        .load = load_fn,                                                           \
        .resolve = ptc__instance_resolve,                                          \
        .run = ptc__instance_run,                                                  \
        .release = ptc__instance_release,                                          \
        .registerEnvironmentInitializer = ptc__instance_register_initializer,      \
        .get_fd = ptc__instance_get_fd,                                            \
        .dispatch = ptc__instance_dispatch,                                        \
        .cancel = ptc__instance_cancel,                                            \
        .reply = ptc__instance_reply,                                              \
        .describe = ptc__instance_describe,                                        \
        .unload = ptc__instance_unload,                                            \
        .unregisterEnvironmentInitializer = ptc__instance_unregister_initializer,  \
        .free_text = ptc__instance_free_text,                                      \
        .wait = ptc__instance_wait,                                                \
        .registerImage = ptc__instance_register_image,                             \
        .readable_roots = roots_fn,                                                \
        .pause_output = ptc__instance_pause_output,                                \
    }

#endif

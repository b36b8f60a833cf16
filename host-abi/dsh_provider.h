/* dsh host ABI v1 -- the provider table a plugin exports through dsh_provider_entry().
 *
 * Thread rule: call every function of one instance from one thread at a time; the provider creates
 * no threads, installs no signal handlers, and calls the host back only inside dispatch() (or
 * wait()).
 */
#ifndef DSH_PROVIDER_H
#define DSH_PROVIDER_H

#include "dsh_abi.h"
#include "dsh_services.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dsh_instance; /* opaque, one per loaded provider row */

typedef uint64_t dsh_run_id;       /* never 0 for a live run; ids are not reused by an instance */
typedef uint64_t dsh_registration; /* environment initializer registration */

struct dsh_run_callbacks {
    DSH_RECORD_HEADER;
    /* The program called global.name(...args). args_json is a JSON array (transfer none, valid
     * during the call). Answer later, exactly once, with reply(); once the run is done, reply()
     * returns DSH_E_NOT_FOUND and the answer is dropped. */
    void (*on_call)(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                    const char *name, const char *args_json, size_t args_len);
    /* Called exactly once for every run that run() accepted, after the managed process range is
     * quiescent (or its cleanup failed). result_json: transfer none, valid during the call. The
     * run id is dead once on_done returns. */
    void (*on_done)(void *userdata, dsh_run_id run, const char *result_json, size_t result_len);
    void *userdata;

    /* ---- appended in 1.1 (read only when struct_size covers it) ---- */
    /* Optional (NULL = not wanted): one output entry as the ledger accepts it, inside dispatch(),
     * in the order the program wrote it and before on_done: {"type":"text","text":...} or an image
     * descriptor. Output the ledger discards is never reported; the result still carries the
     * complete output. entry_json: transfer none, valid during the call. */
    void (*on_output)(void *userdata, dsh_run_id run, const char *entry_json, size_t entry_len);

    /* ---- appended in 1.5 ---- */
    /* Optional (NULL = on_done as before): when set, the provider calls it instead of on_done and
     * hands the result over: result_json is transfer full (NUL-terminated, free with the
     * provider's free_text), so a host that queues it for a slow reader keeps it without a copy.
     * on_done stays required: a provider before 1.5 calls it, and this one does when it cannot
     * allocate the result (the fixed out-of-memory result). */
    void (*on_done_owned)(void *userdata, dsh_run_id run, char *result_json, size_t result_len);
};

typedef void (*dsh_released_fn)(void *userdata, const char *owner, int status);

struct dsh_provider {
    DSH_STRUCT_HEADER;
    const char *name;    /* static, e.g. "@deepseek-ai/dsh-ptc-runtime-node" */
    const char *version; /* static, semantic version of the provider */

    /* Validates config_yaml (one row's `config` mapping as a YAML document; empty = defaults)
     * and creates an instance that borrows services until unload(). */
    int (*load)(const char *config_yaml, size_t config_len, const struct dsh_services *services,
                struct dsh_instance **ret_instance, struct dsh_error *ret_error);

    /* Fills every default of a request (schemas/request.json) and returns the resolved spec
     * (schemas/spec.json). *ret_spec_json: transfer full, NUL-terminated, free with free_text. */
    int (*resolve)(struct dsh_instance *instance, const char *request_json, size_t request_len,
                   char **ret_spec_json, size_t *ret_spec_len, struct dsh_error *ret_error);

    /* Starts a resolved spec. Never invents defaults: a missing field is DSH_E_REQUEST_INVALID.
     * callbacks are copied. On success on_done is called exactly once later; on error never. */
    int (*run)(struct dsh_instance *instance, const char *spec_json, size_t spec_len,
               const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run,
               struct dsh_error *ret_error);

    /* Ends the retained environment of owner (transfer none). on_released(status) is called once,
     * inside dispatch(), when the range is quiescent (status 0) or cleanup failed (negative; the
     * owner stays blocked and release may be retried). */
    int (*release)(struct dsh_instance *instance, const char *owner, dsh_released_fn on_released,
                   void *userdata, struct dsh_error *ret_error);

    /* persistent-in-memory only, before the first run is admitted: program (transfer none) runs
     * once in every new environment. */
    int (*registerEnvironmentInitializer)(struct dsh_instance *instance, const char *program,
                                          size_t program_len, dsh_registration *ret_registration,
                                          struct dsh_error *ret_error);

    /* Loop integration: one pollable fd (EPOLLIN when dispatch() has work); stable for the
     * instance's lifetime. */
    int (*get_fd)(struct dsh_instance *instance);
    /* Non-blocking: does all ready work and runs host callbacks. Returns 0 or a negative status. */
    int (*dispatch)(struct dsh_instance *instance);
    /* Requests cancellation; the run still ends through on_done (kind "abort"). reason: transfer
     * none, may be NULL. DSH_E_NOT_FOUND for an unknown or finished run. */
    int (*cancel)(struct dsh_instance *instance, dsh_run_id run, const char *reason);
    /* Settles a binding call: ok with a JSON value (json NULL = undefined), or an error with a
     * UTF-8 message. Text is transfer none. */
    int (*reply)(struct dsh_instance *instance, dsh_run_id run, uint64_t call, bool ok,
                 const char *text, size_t text_len);
    /* schemas/describe.json: program format, timeout descriptor, executionInstructions.
     * *ret_json: transfer full, free with free_text. */
    int (*describe)(struct dsh_instance *instance, char **ret_json, size_t *ret_len,
                    struct dsh_error *ret_error);
    /* Cancels every run, releases every environment, waits for quiescence (blocking), then frees
     * the instance. Pending on_done callbacks are delivered before it returns. Accepts NULL. */
    void (*unload)(struct dsh_instance *instance);

    /* ---- appended in 1.0 after the design-card order ---- */
    int (*unregisterEnvironmentInitializer)(struct dsh_instance *instance,
                                            dsh_registration registration,
                                            struct dsh_error *ret_error);
    /* Frees text returned with transfer full by this provider. Accepts NULL. */
    void (*free_text)(char *text);
    /* Blocking convenience for simple hosts: waits up to timeout_ms (-1 = forever) for the fd to
     * become ready, then dispatches. Returns 0 or a negative status. */
    int (*wait)(struct dsh_instance *instance, int timeout_ms);
    /* Registers a stored image file (host path, transfer none) as attachment_id for an active
     * run: the provider reads its pixel size (PNG, JPEG), maps the path into the execution world
     * and makes it an `Image` value the program can reach (`Image.get(attachment_id)`) and display
     * with inspect(). Registrations live until the process ends or its owner is released.
     * *ret_descriptor_json (transfer full, free_text; may be NULL): {attachmentId, path, width,
     * height} and, since 1.4, the registered file's dev, ino (decimal strings) and size (ABI.md,
     * "Images a host reads"). Spec field `images` registers images before the program starts. */
    int (*registerImage)(struct dsh_instance *instance, dsh_run_id run, const char *attachment_id,
                         const char *host_path, char **ret_descriptor_json, size_t *ret_len,
                         struct dsh_error *ret_error);

    /* ---- appended in 1.1 ---- */
    /* Host directories that hold the provider's own files (its bootstrap, its default Node.js),
     * which the execution world must be able to read: a NULL-terminated array of absolute paths,
     * static, valid until dlclose. Needs no instance: a host passes it to its services (the Linux
     * services' extra_readable_roots) before load(). */
    const char *const *(*readable_roots)(void);

    /* ---- appended in 1.5 ---- */
    /* Flow control for a host whose reader is slower than the program writes (ABI.md, "Output
     * flow control"): while paused the provider reads nothing more from the run's process (its
     * output, binding calls, its result), so the program blocks once the kernel buffers between
     * them fill; its deadline still runs. Resumed by paused = false, and implicitly once the run
     * has an outcome (a deadline, a cancel, its result): what a stop leaves is always read.
     * 0, or DSH_E_NOT_FOUND for an unknown or finished run. */
    int (*pause_output)(struct dsh_instance *instance, dsh_run_id run, bool paused);
};

/* The one exported symbol. Returns NULL when host_abi_major is not supported. */
const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major);

typedef const struct dsh_provider *(*dsh_provider_entry_fn)(uint32_t host_abi_major);

#ifdef __cplusplus
}
#endif

#endif /* DSH_PROVIDER_H */

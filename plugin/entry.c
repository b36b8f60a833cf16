/* The provider table and the instance lifecycle: dsh_provider_entry, load, unload, loop
 * integration and the small synchronous calls. Runs live in run.c. */
#include "internal.h"
#include "own_files.h"
#include "env.h"
#include "run.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ptc__log(struct dsh_instance *inst, int level, const char *fmt, ...)
{
    const struct dsh_logger *logger = inst->services.logger;
    if (!logger)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    logger->log(logger->ctx, level, text);
}

static bool service_ok(const void *service, size_t min_size)
{
    /* Every service starts with DSH_STRUCT_HEADER. */
    const struct {
        DSH_STRUCT_HEADER;
    } *header = service;
    return header && header->abi_major == DSH_ABI_MAJOR && header->struct_size >= min_size;
}

static int load(const char *config_yaml, size_t config_len, const struct dsh_services *services,
                struct dsh_instance **ret_instance, struct dsh_error *ret_error)
{
    /* Hosts built before the `runtime` field was appended pass a shorter bundle. */
    if (!services || !ret_instance || services->struct_size < offsetof(struct dsh_services, runtime))
        return ptc__fail(ret_error, -EINVAL, "load needs a services bundle and ret_instance");
    if (!service_ok(services->fs, sizeof *services->fs) ||
        !service_ok(services->subprocess, sizeof *services->subprocess) ||
        !service_ok(services->sandbox, sizeof *services->sandbox) ||
        !service_ok(services->sandbox_policy, sizeof *services->sandbox_policy))
        return ptc__fail(ret_error, DSH_E_CONFIG_INVALID,
                         "the runtime requires the fs, subprocess, sandbox and sandboxPolicy services (ABI v%d)",
                         DSH_ABI_MAJOR);
    struct dsh_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return ptc__fail(ret_error, -ENOMEM, "out of memory");
    struct dsh_diagnostics diags;
    int rc = ptc_config_parse(config_yaml ? config_yaml : "", config_yaml ? config_len : 0, &inst->config, &diags);
    if (rc < 0) {
        char *text = NULL;
        dsh_diagnostics_join(&diags, &text);
        ptc__fail(ret_error, DSH_E_CONFIG_INVALID, "%s", text ? text : "invalid configuration");
        free(text);
        dsh_diagnostics_release(&diags);
        free(inst);
        return DSH_E_CONFIG_INVALID;
    }
    dsh_diagnostics_release(&diags);
    /* The configured syntax and lifetime are resolved once, at load. */
    switch (inst->config.execution_mode) {
    case PTC_EXECUTION_PER_CALL:
        inst->program_format = "async-function";
        break;
    case PTC_EXECUTION_VM_SCRIPT:
        inst->program_format = "vm-script";
        inst->retains_state = inst->config.script_persistence;
        break;
    case PTC_EXECUTION_PERSISTENT_IN_MEMORY:
        inst->program_format = inst->config.repl_scoped ? "scoped-repl" : "repl";
        inst->retains_state = true;
        break;
    }
    inst->services = *services;
    if ((rc = ptc__loop_init(&inst->loop)) < 0) {
        ptc_config_destroy(&inst->config);
        free(inst);
        return ptc__fail(ret_error, rc, "cannot create the event loop: %s", dsh_strerror(rc));
    }
    if ((rc = ptc__owners_subscribe(inst)) < 0) {
        ptc__loop_destroy(&inst->loop);
        ptc_config_destroy(&inst->config);
        free(inst);
        return ptc__fail(ret_error, rc, "cannot subscribe to sandbox mode changes: %s", dsh_strerror(rc));
    }
    *ret_instance = inst;
    return 0;
}

char *ptc__initializer_source(struct dsh_instance *inst)
{
    size_t total = 0;
    for (struct ptc_initializer *i = inst->initializers; i; i = i->next)
        total += strlen(i->program) + 1;
    if (!total)
        return NULL;
    char *joined = malloc(total + 1), *p = joined;
    if (!joined)
        return NULL;
    /* Registration order: the list is kept oldest first. */
    for (struct ptc_initializer *i = inst->initializers; i; i = i->next) {
        size_t n = strlen(i->program);
        memcpy(p, i->program, n);
        p[n] = '\n';
        p += n + 1;
    }
    *p = '\0';
    return joined;
}

static void unload(struct dsh_instance *inst)
{
    if (!inst)
        return;
    inst->unloading = true;
    ptc__owners_unsubscribe(inst);
    for (struct ptc_run *run = inst->runs; run; run = run->next)
        ptc__run_cancel(run, "the provider is unloading");
    for (struct ptc_env *env = inst->envs; env; env = env->next)
        if (!env->run)
            ptc__env_terminate(env, NULL);
    /* Deliver every pending result; cleanup waits for quiescence. Environments whose cleanup
     * failed stay listed: their handles are released below, which kills and waits. */
    for (;;) {
        bool pending = inst->runs != NULL;
        for (struct ptc_env *env = inst->envs; env && !pending; env = env->next)
            pending = !env->cleanup_failed;
        if (!pending)
            break;
        ptc__loop_wait(&inst->loop, 100);
    }
    while (inst->envs)
        ptc__env_destroy(inst->envs);
    ptc__loop_dispatch(&inst->loop);
    while (inst->initializers) {
        struct ptc_initializer *i = inst->initializers;
        inst->initializers = i->next;
        free(i->program);
        free(i);
    }
    ptc__loop_destroy(&inst->loop);
    ptc_config_destroy(&inst->config);
    free(inst);
}

static int resolve(struct dsh_instance *inst, const char *request_json, size_t request_len,
                   char **ret_spec_json, size_t *ret_spec_len, struct dsh_error *ret_error)
{
    if (!inst || !request_json || !ret_spec_json)
        return ptc__fail(ret_error, -EINVAL, "resolve needs an instance, a request and ret_spec_json");
    if (inst->unloading)
        return ptc__fail(ret_error, DSH_E_DISPOSED, "the instance is unloading");
    return ptc__resolve(inst, request_json, request_len, ret_spec_json, ret_spec_len, ret_error);
}

static int run(struct dsh_instance *inst, const char *spec_json, size_t spec_len,
               const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run, struct dsh_error *ret_error)
{
    if (!inst || !spec_json || !ret_run)
        return ptc__fail(ret_error, -EINVAL, "run needs an instance, a spec and ret_run");
    if (inst->unloading)
        return ptc__fail(ret_error, DSH_E_DISPOSED, "the instance is unloading");
    return ptc__run_start(inst, spec_json, spec_len, callbacks, ret_run, ret_error);
}

static int release(struct dsh_instance *inst, const char *owner, dsh_released_fn on_released, void *userdata,
                   struct dsh_error *ret_error)
{
    if (!inst || !owner || !on_released)
        return ptc__fail(ret_error, -EINVAL, "release needs an instance, an owner and on_released");
    return ptc__owners_release(inst, owner, on_released, userdata, ret_error);
}

static int register_initializer(struct dsh_instance *inst, const char *program, size_t program_len,
                                dsh_registration *ret_registration, struct dsh_error *ret_error)
{
    if (!inst || !program || !ret_registration)
        return ptc__fail(ret_error, -EINVAL, "registerEnvironmentInitializer needs an instance, a program and ret_registration");
    if (inst->config.execution_mode != PTC_EXECUTION_PERSISTENT_IN_MEMORY)
        return ptc__fail(ret_error, DSH_E_WRONG_MODE,
                         "environment initializers are only available with executionMode persistent-in-memory");
    if (inst->admitted_any)
        return ptc__fail(ret_error, DSH_E_TOO_LATE, "initializers must be registered before the first run is admitted");
    if (memchr(program, '\0', program_len))
        return ptc__fail(ret_error, DSH_E_REQUEST_INVALID, "the initializer contains a NUL byte");
    struct ptc_initializer *init = calloc(1, sizeof *init);
    if (!init || !(init->program = strndup(program, program_len))) {
        free(init);
        return ptc__fail(ret_error, -ENOMEM, "out of memory");
    }
    init->id = ++inst->next_registration;
    struct ptc_initializer **tail = &inst->initializers;
    while (*tail)
        tail = &(*tail)->next;
    *tail = init;
    *ret_registration = init->id;
    return 0;
}

static int unregister_initializer(struct dsh_instance *inst, dsh_registration registration,
                                  struct dsh_error *ret_error)
{
    if (!inst)
        return ptc__fail(ret_error, -EINVAL, "no instance");
    for (struct ptc_initializer **link = &inst->initializers; *link; link = &(*link)->next)
        if ((*link)->id == registration) {
            struct ptc_initializer *gone = *link;
            *link = gone->next;
            free(gone->program);
            free(gone);
            return 0;
        }
    return ptc__fail(ret_error, DSH_E_NOT_FOUND, "no such initializer registration");
}

static int get_fd(struct dsh_instance *inst)
{
    return inst ? inst->loop.epoll_fd : -EINVAL;
}

static int dispatch(struct dsh_instance *inst)
{
    return inst ? ptc__loop_dispatch(&inst->loop) : -EINVAL;
}

static int wait_and_dispatch(struct dsh_instance *inst, int timeout_ms)
{
    return inst ? ptc__loop_wait(&inst->loop, timeout_ms) : -EINVAL;
}

static int cancel(struct dsh_instance *inst, dsh_run_id id, const char *reason)
{
    struct ptc_run *r = inst ? ptc__run_find(inst, id) : NULL;
    if (!r || r->outcome_selected)
        return DSH_E_NOT_FOUND;
    return ptc__run_cancel(r, reason);
}

static int reply(struct dsh_instance *inst, dsh_run_id id, uint64_t call, bool ok, const char *text, size_t len)
{
    struct ptc_run *r = inst ? ptc__run_find(inst, id) : NULL;
    if (!r)
        return DSH_E_NOT_FOUND;
    return ptc__run_reply(r, call, ok, text, len);
}

/* Model guidance per program format; every mode repeats the output rule. */
#define OUTPUT_RULE "Use inspect(...values) to display output. Do not use console. "
#define TOOLS_RULE                                                                                 \
    "Call host tools with await, for example `const r = await tools.search({ query: \"x\" })`; a " \
    "failed call throws an error whose member property names the function. Node APIs are "        \
    "available under the session's file sandbox. "

static const char per_call_instructions[] =
    "Write the program as the body of an async function in TypeScript (erasable type syntax only: "
    "no enum, namespace values or parameter properties). Top-level await and return work; the "
    "returned value must be plain JSON. " TOOLS_RULE OUTPUT_RULE
    "Every call runs in a fresh process: no variables survive between calls.";

static const char script_instructions[] =
    "Write the program as a Script in erasable TypeScript: top-level declarations and await work, "
    "and the value of the final expression is awaited and returned as plain JSON. Top-level return "
    "and static import/export are not supported; load modules with `await import(...)`. " TOOLS_RULE
    OUTPUT_RULE "Every call runs in a fresh process: no variables survive between calls.";

static const char retained_script_instructions[] =
    "Write the program as a Script in erasable TypeScript: top-level declarations and await work, "
    "and the value of the final expression is awaited and returned as plain JSON. Top-level return "
    "and static import/export are not supported; load modules with `await import(...)`. " TOOLS_RULE
    OUTPUT_RULE
    "Top-level declarations, functions and objects survive between your calls until the "
    "environment is released, the sandbox mode changes or the process fails; a missing variable "
    "raises a ReferenceError, so recreate it. Await asynchronous work before the program ends.";

static const char scoped_repl_instructions[] =
    "Each call is a strict TypeScript script (erasable types) in a retained context. It starts "
    "with copies of the top-level names left by earlier calls and may declare any of them again; "
    "`var count = count + 1` adds to the earlier value. The last top-level expression is the "
    "result; a Promise result is not awaited, so await it. Top-level return, eval, new Function, "
    "require and static imports are not available; load modules with `await import(...)`. "
    TOOLS_RULE "Always await tool calls: callbacks of a finished call cannot use tools later. "
    OUTPUT_RULE "Variables are memory only: they are lost when the environment is released, the "
    "sandbox mode changes or the process fails.";

static const char repl_instructions[] =
    "Each call is a Node REPL input in erasable TypeScript: non-strict; assigning to an undeclared "
    "name creates a global kept between calls; redeclaring an existing let, const or class fails, "
    "so assign to it or choose a new name. A leading `{ ... }` is a block; parenthesize an object "
    "literal to return it. Top-level await works; top-level return does not. The value of the last "
    "expression is the result. " TOOLS_RULE
    "Always await tool calls: callbacks of a finished call cannot use tools later. " OUTPUT_RULE
    "Variables are memory only: they are lost when the environment is released, the sandbox mode "
    "changes or the process fails.";

static const char *instructions_for(const struct dsh_instance *inst)
{
    if (strcmp(inst->program_format, "vm-script") == 0)
        return inst->retains_state ? retained_script_instructions : script_instructions;
    if (strcmp(inst->program_format, "scoped-repl") == 0)
        return scoped_repl_instructions;
    if (strcmp(inst->program_format, "repl") == 0)
        return repl_instructions;
    return per_call_instructions;
}

static int describe(struct dsh_instance *inst, char **ret_json, size_t *ret_len, struct dsh_error *ret_error)
{
    if (!inst || !ret_json)
        return ptc__fail(ret_error, -EINVAL, "describe needs an instance and ret_json");
    json_object *d = json_object_new_object(), *timeout = json_object_new_object();
    json_object_object_add(d, "name", json_object_new_string(PTC_NAME));
    json_object_object_add(d, "version", json_object_new_string(PTC_VERSION));
    json_object_object_add(d, "executionMode", json_object_new_string(ptc_execution_mode_name(inst->config.execution_mode)));
    json_object_object_add(d, "programFormat", json_object_new_string(inst->program_format));
    json_object_object_add(d, "retainsState", json_object_new_boolean(inst->retains_state));
    json_object_object_add(timeout, "defaultMs", json_object_new_int64(inst->config.timeout_ms));
    json_object_object_add(timeout, "maxMs", json_object_new_int64(inst->config.max_timeout_ms));
    json_object_object_add(d, "timeout", timeout);
    json_object_object_add(d, "executionInstructions", json_object_new_string(instructions_for(inst)));
    const char *text = json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    *ret_json = strdup(text);
    json_object_put(d);
    if (!*ret_json)
        return ptc__fail(ret_error, -ENOMEM, "out of memory");
    if (ret_len)
        *ret_len = strlen(*ret_json);
    return 0;
}

static int register_image(struct dsh_instance *inst, dsh_run_id run, const char *attachment_id,
                          const char *host_path, char **ret_descriptor_json, size_t *ret_len,
                          struct dsh_error *ret_error)
{
    if (!inst || !attachment_id || !host_path)
        return ptc__fail(ret_error, -EINVAL, "registerImage needs an instance, attachment_id and host_path");
    struct ptc_run *r = ptc__run_find(inst, run);
    /* Only a run whose program was submitted: the child must know it before the next reply. */
    if (!r || r->outcome_selected || !r->env || !r->code_started)
        return ptc__fail(ret_error, DSH_E_NOT_FOUND, "run %llu is not executing a program",
                         (unsigned long long)run);
    struct ptc_image *image = NULL;
    int rc = ptc__image_load(inst, attachment_id, host_path, &image, ret_error);
    if (rc != 0)
        return rc;
    json_object *d = ptc__image_descriptor(image, NULL);
    rc = ptc__env_register_image(r->env, image, ret_error);
    if (rc < 0) {
        json_object_put(d);
        if (rc == DSH_E_REQUEST_INVALID)
            return rc;
        return ptc__fail(ret_error, rc == -E2BIG ? DSH_E_LIMIT : rc, "image-register could not be queued: %s",
                         dsh_strerror(rc));
    }
    if (ret_descriptor_json) {
        *ret_descriptor_json = strdup(json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        if (!*ret_descriptor_json) {
            json_object_put(d);
            return ptc__fail(ret_error, -ENOMEM, "out of memory");
        }
        if (ret_len)
            *ret_len = strlen(*ret_descriptor_json);
    }
    json_object_put(d);
    return 0;
}

static void free_text(char *text)
{
    free(text);
}

static const struct dsh_provider provider = {
    .struct_size = sizeof(struct dsh_provider),
    .abi_major = DSH_ABI_MAJOR,
    .abi_minor = DSH_ABI_MINOR,
    .name = PTC_NAME,
    .version = PTC_VERSION,
    .load = load,
    .resolve = resolve,
    .run = run,
    .release = release,
    .registerEnvironmentInitializer = register_initializer,
    .get_fd = get_fd,
    .dispatch = dispatch,
    .cancel = cancel,
    .reply = reply,
    .describe = describe,
    .unload = unload,
    .unregisterEnvironmentInitializer = unregister_initializer,
    .free_text = free_text,
    .wait = wait_and_dispatch,
    .registerImage = register_image,
    .readable_roots = ptc__own_readable_roots,
};

__attribute__((visibility("default"))) const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major)
{
    return host_abi_major == DSH_ABI_MAJOR ? &provider : NULL;
}

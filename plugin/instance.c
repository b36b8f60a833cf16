/* One loaded provider row: load and unload, the calls of the provider table (argument checks,
 * then the layer that owns the work), environment initializers and describe. */
#include "instance.h"
#include "language.h"
#include "dsh_program_format.h"
#include "owners.h"
#include "resolve.h"
#include "dsh_list.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The initializer source the run layer sends to a new environment (struct ptc_runs_source). */
static char *initializer_source(void *ctx)
{
    struct dsh_instance *inst = ctx;
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

int ptc__instance_load(const struct ptc_language *language, const char *config_yaml, size_t config_len,
                       const struct dsh_services *services, struct dsh_instance **ret_instance,
                       struct dsh_error *ret_error)
{
    if (!services || !ret_instance)
        return ptc__fail(ret_error, -EINVAL, "load needs a services bundle and ret_instance");
    struct dsh_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return ptc__fail(ret_error, -ENOMEM, "out of memory");
    int rc = ptc__host_init(&inst->host, language, config_yaml, config_len, services, ret_error);
    if (rc < 0) {
        free(inst);
        return rc;
    }
    /* The configured syntax and lifetime are resolved once, at load. */
    const struct ptc_config *config = &inst->host.config;
    const char *format = dsh_program_format_of_mode(ptc_execution_mode_name(config->execution_mode), config->repl_scoped);
    bool retains = config->execution_mode == PTC_EXECUTION_PERSISTENT_IN_MEMORY ||
                   (config->execution_mode == PTC_EXECUTION_VM_SCRIPT && config->script_persistence);
    ptc__envs_init(&inst->envs, &inst->host);
    ptc__pool_init(&inst->pool, &inst->envs, format, (unsigned)config->prewarm_processes,
                   (unsigned)config->prewarm_total_processes, (uint64_t)config->prewarm_idle_ms);
    ptc__strippers_init(&inst->strippers, &inst->host);
    ptc__runs_init(&inst->runs, &inst->host, &inst->envs, &inst->pool, &inst->strippers, format, retains,
                   (struct ptc_runs_source){initializer_source, inst});
    if ((rc = ptc__owners_subscribe(&inst->runs)) < 0) {
        ptc__host_destroy(&inst->host);
        free(inst);
        return ptc__fail(ret_error, rc, "cannot subscribe to sandbox mode changes: %s", dsh_strerror(rc));
    }
    ptc__owners_watch_expiry(&inst->runs);
    /* Programs are stripped outside their process (a retained one's when it may have types):
     * warm the default session's stripper now. */
    ptc__strippers_prestart(&inst->strippers);
    *ret_instance = inst;
    return 0;
}

void ptc__instance_unload(struct dsh_instance *inst)
{
    if (!inst)
        return;
    inst->unloading = true;
    ptc__owners_unsubscribe(&inst->runs);
    ptc__runs_cancel_all(&inst->runs, "the provider is unloading");
    ptc__pool_close(&inst->pool);
    for (struct ptc_env *env = ptc__envs_next(&inst->envs, NULL); env; env = ptc__envs_next(&inst->envs, env))
        ptc__env_terminate_unattached(env);
    ptc__strippers_shutdown(&inst->strippers);
    /* Deliver every pending result; cleanup waits for quiescence. Environments whose cleanup
     * failed stay listed: their handles are released below, which kills and waits. */
    while (ptc__runs_active(&inst->runs) || ptc__envs_closing(&inst->envs) || ptc__strippers_closing(&inst->strippers))
        ptc__loop_wait(&inst->host.loop, 100);
    ptc__envs_destroy_all(&inst->envs);
    ptc__strippers_destroy_all(&inst->strippers);
    ptc__loop_dispatch(&inst->host.loop);
    ptc__owners_forget_notices(&inst->runs);
    ptc__runs_destroy(&inst->runs);
    while (inst->initializers) {
        struct ptc_initializer *i = inst->initializers;
        inst->initializers = i->next;
        free(i->program);
        free(i);
    }
    ptc__host_destroy(&inst->host);
    free(inst);
}

int ptc__instance_resolve(struct dsh_instance *inst, const char *request_json, size_t request_len,
                          char **ret_spec_json, size_t *ret_spec_len, struct dsh_error *ret_error)
{
    if (!inst || !request_json || !ret_spec_json)
        return ptc__fail(ret_error, -EINVAL, "resolve needs an instance, a request and ret_spec_json");
    if (inst->unloading)
        return ptc__fail(ret_error, DSH_E_DISPOSED, "the instance is unloading");
    return ptc__resolve(&inst->host, request_json, request_len, ret_spec_json, ret_spec_len, ret_error);
}

int ptc__instance_run(struct dsh_instance *inst, const char *spec_json, size_t spec_len,
                      const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run, struct dsh_error *ret_error)
{
    if (!inst || !spec_json || !ret_run)
        return ptc__fail(ret_error, -EINVAL, "run needs an instance, a spec and ret_run");
    if (inst->unloading)
        return ptc__fail(ret_error, DSH_E_DISPOSED, "the instance is unloading");
    return ptc__run_start(&inst->runs, spec_json, spec_len, callbacks, ret_run, ret_error);
}

int ptc__instance_release(struct dsh_instance *inst, const char *owner, dsh_released_fn on_released, void *userdata,
                          struct dsh_error *ret_error)
{
    if (!inst || !owner || !on_released)
        return ptc__fail(ret_error, -EINVAL, "release needs an instance, an owner and on_released");
    return ptc__owners_release(&inst->runs, owner, on_released, userdata, ret_error);
}

int ptc__instance_register_initializer(struct dsh_instance *inst, const char *program, size_t program_len,
                                       dsh_registration *ret_registration, struct dsh_error *ret_error)
{
    if (!inst || !program || !ret_registration)
        return ptc__fail(ret_error, -EINVAL, "registerEnvironmentInitializer needs an instance, a program and ret_registration");
    if (!inst->host.language->retaining_modes)
        return ptc__fail(ret_error, DSH_E_WRONG_MODE, "%s has no environment initializers: it runs per call only",
                         inst->host.language->provider_name);
    if (inst->host.config.execution_mode != PTC_EXECUTION_PERSISTENT_IN_MEMORY)
        return ptc__fail(ret_error, DSH_E_WRONG_MODE,
                         "environment initializers are only available with executionMode persistent-in-memory");
    if (inst->runs.admitted_any)
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

int ptc__instance_unregister_initializer(struct dsh_instance *inst, dsh_registration registration,
                                         struct dsh_error *ret_error)
{
    if (!inst)
        return ptc__fail(ret_error, -EINVAL, "no instance");
    DSH_LIST_FOREACH_LINK(link, &inst->initializers)
        if ((*link)->id == registration) {
            struct ptc_initializer *gone = *link;
            DSH_LIST_UNLINK(link);
            free(gone->program);
            free(gone);
            return 0;
        }
    return ptc__fail(ret_error, DSH_E_NOT_FOUND, "no such initializer registration");
}

int ptc__instance_get_fd(struct dsh_instance *inst)
{
    return inst ? inst->host.loop.epoll_fd : -EINVAL;
}

int ptc__instance_dispatch(struct dsh_instance *inst)
{
    return inst ? ptc__loop_dispatch(&inst->host.loop) : -EINVAL;
}

int ptc__instance_wait(struct dsh_instance *inst, int timeout_ms)
{
    return inst ? ptc__loop_wait(&inst->host.loop, timeout_ms) : -EINVAL;
}

int ptc__instance_cancel(struct dsh_instance *inst, dsh_run_id id, const char *reason)
{
    return inst ? ptc__runs_cancel(&inst->runs, id, reason) : DSH_E_NOT_FOUND;
}

int ptc__instance_pause_output(struct dsh_instance *inst, dsh_run_id id, bool paused)
{
    return inst ? ptc__runs_pause_output(&inst->runs, id, paused) : DSH_E_NOT_FOUND;
}

int ptc__instance_reply(struct dsh_instance *inst, dsh_run_id id, uint64_t call, bool ok, const char *text,
                        size_t len)
{
    return inst ? ptc__runs_reply(&inst->runs, id, call, ok, text, len) : DSH_E_NOT_FOUND;
}

int ptc__instance_register_image(struct dsh_instance *inst, dsh_run_id run, const char *attachment_id,
                                 const char *host_path, char **ret_descriptor_json, size_t *ret_len,
                                 struct dsh_error *ret_error)
{
    if (!inst || !attachment_id || !host_path)
        return ptc__fail(ret_error, -EINVAL, "registerImage needs an instance, attachment_id and host_path");
    return ptc__runs_register_image(&inst->runs, run, attachment_id, host_path, ret_descriptor_json, ret_len,
                                    ret_error);
}

void ptc__instance_free_text(char *text)
{
    free(text);
}

/* Model guidance per program format; every mode repeats the output rule. */
#define OUTPUT_RULE "Use inspect(...values) to display output. Do not use console. "
#define TOOLS_RULE                                                                                 \
    "Call host tools with await, for example `const r = await tools.search({ query: \"x\" })`; a " \
    "failed call throws an error whose member property names the function. Node APIs are "        \
    "available under the session's file sandbox. "

const char ptc__node_per_call_instructions[] =
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
    switch (dsh_program_format_parse(inst->runs.program_format)) {
    case DSH_PROGRAM_FORMAT_VM_SCRIPT:
        return inst->runs.retains_state ? retained_script_instructions : script_instructions;
    case DSH_PROGRAM_FORMAT_SCOPED_REPL:
        return scoped_repl_instructions;
    case DSH_PROGRAM_FORMAT_REPL:
        return repl_instructions;
    default:
        return inst->host.language->per_call_instructions;
    }
}

int ptc__instance_describe(struct dsh_instance *inst, char **ret_json, size_t *ret_len, struct dsh_error *ret_error)
{
    if (!inst || !ret_json)
        return ptc__fail(ret_error, -EINVAL, "describe needs an instance and ret_json");
    const struct ptc_config *config = &inst->host.config;
    const struct ptc_language *language = inst->host.language;
    json_object *d = json_object_new_object();
    json_object_object_add(d, "name", json_object_new_string(language->provider_name));
    json_object_object_add(d, "language", json_object_new_string(language->program_language));
    json_object_object_add(d, "version", json_object_new_string(PTC_VERSION));
    json_object_object_add(d, "executionMode", json_object_new_string(ptc_execution_mode_name(config->execution_mode)));
    json_object_object_add(d, "programFormat", json_object_new_string(inst->runs.program_format));
    json_object_object_add(d, "retainsState", json_object_new_boolean(inst->runs.retains_state));
    /* A language without per-call overrides has no timeout choice to describe. */
    if (language->timeout_overrides) {
        json_object *timeout = json_object_new_object();
        json_object_object_add(timeout, "defaultMs", json_object_new_int64(config->timeout_ms));
        json_object_object_add(timeout, "maxMs", json_object_new_int64(config->max_timeout_ms));
        json_object_object_add(d, "timeout", timeout);
    }
    json_object_object_add(d, "executionInstructions", json_object_new_string(instructions_for(inst)));
    const char *text = json_object_to_json_string_ext(d, DSH_JSON_PRINT_FLAGS);
    *ret_json = strdup(text);
    json_object_put(d);
    if (!*ret_json)
        return ptc__fail(ret_error, -ENOMEM, "out of memory");
    if (ret_len)
        *ret_len = strlen(*ret_json);
    return 0;
}

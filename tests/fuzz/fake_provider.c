/* A fault-free double of a provider for fuzzing a host (fuzz_host.h's targets): the real table
 * shape (host-abi/dsh_provider.h, ABI 1.5), no process. A run whose program contains "call" makes
 * one binding call tools.echo([1]), one that is "bind GLOBAL FUNCTION [ARGUMENTS]" calls that
 * binding (with [{}] unless ARGUMENTS is one JSON value); either ends when the call is answered.
 * "output" writes one output entry first. Every run ends with exactly one on_done, delivered
 * inside dispatch(), also when it is cancelled or the instance unloads. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_provider.h"

struct fake_run {
    dsh_run_id id;
    struct dsh_run_callbacks cb;
    bool call, output, called, answered, cancelled;
    char *global, *function, *arguments; /* of the call; tools.echo([1]) when NULL */
    struct fake_run *next;
};

struct dsh_instance {
    int fd;
    dsh_run_id last;
    struct fake_run *runs;
    dsh_released_fn released_fn;
    void *released_userdata;
    char *released_owner;
};

static void wake(struct dsh_instance *inst)
{
    uint64_t one = 1;
    (void)!write(inst->fd, &one, sizeof one);
}

static int load(const char *config_yaml, size_t config_len, const struct dsh_services *services,
                struct dsh_instance **ret_instance, struct dsh_error *ret_error)
{
    (void)config_yaml, (void)config_len, (void)services, (void)ret_error;
    struct dsh_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return -ENOMEM;
    inst->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    *ret_instance = inst;
    return 0;
}

static int refuse(struct dsh_error *err, const char *message)
{
    return dsh_error_setf(err, DSH_E_REQUEST_INVALID, "%s", message);
}

static int resolve(struct dsh_instance *inst, const char *request, size_t len, char **ret_spec, size_t *ret_len,
                   struct dsh_error *err)
{
    (void)inst;
    json_object *req = dsh_json_parse_strict(request, len);
    bool ok = dsh_json_get_text(req, "program") != NULL;
    json_object_put(req);
    if (!ok)
        return refuse(err, "the request has no program");
    *ret_spec = strndup(request, len);
    *ret_len = len;
    return *ret_spec ? 0 : -ENOMEM;
}

static int run(struct dsh_instance *inst, const char *spec, size_t len, const struct dsh_run_callbacks *cb,
               dsh_run_id *ret_run, struct dsh_error *err)
{
    json_object *s = dsh_json_parse_strict(spec, len);
    const char *program = dsh_json_get_text(s, "program");
    if (!program) {
        json_object_put(s);
        return refuse(err, "the spec has no program");
    }
    struct fake_run *r = calloc(1, sizeof *r);
    r->id = ++inst->last;
    r->cb = *cb;
    r->call = strstr(program, "call") != NULL;
    char global[64], function[64];
    int end = 0;
    if (sscanf(program, "bind %63s %63s %n", global, function, &end) == 2) {
        const char *arguments = end ? program + end : "";
        r->call = true;
        r->global = strdup(global);
        r->function = strdup(function);
        r->arguments = strdup(dsh_json_is_value(arguments, strlen(arguments), DSH_JSON_VALUE_MAX_DEPTH, NULL)
                                  ? arguments
                                  : "[{}]");
    }
    r->output = strstr(program, "output") != NULL && DSH_HAS(cb, on_output) && cb->on_output;
    json_object_put(s);
    r->next = inst->runs;
    inst->runs = r;
    *ret_run = r->id;
    wake(inst);
    return 0;
}

static struct fake_run *find(struct dsh_instance *inst, dsh_run_id id)
{
    for (struct fake_run *r = inst->runs; r; r = r->next)
        if (r->id == id)
            return r;
    return NULL;
}

static void finish(struct dsh_instance *inst, struct fake_run *r)
{
    for (struct fake_run **p = &inst->runs; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    static const char ok[] = "{\"ok\":true,\"value\":[1,-0,\"x\"],\"output\":[],\"sandbox\":{\"mode\":\"read-only\","
                             "\"denied\":false,\"enforcement\":\"none\",\"capabilities\":{}}}";
    static const char aborted[] = "{\"ok\":false,\"error\":{\"kind\":\"abort\",\"message\":\"cancelled\"},\"output\":[],"
                                  "\"sandbox\":{\"mode\":\"read-only\",\"denied\":false,\"enforcement\":\"none\","
                                  "\"capabilities\":{}}}";
    if (r->cancelled)
        r->cb.on_done(r->cb.userdata, r->id, aborted, sizeof aborted - 1);
    else
        r->cb.on_done(r->cb.userdata, r->id, ok, sizeof ok - 1);
    free(r->global);
    free(r->function);
    free(r->arguments);
    free(r);
}

static int dispatch(struct dsh_instance *inst)
{
    uint64_t n;
    (void)!read(inst->fd, &n, sizeof n);
    if (inst->released_fn) {
        dsh_released_fn fn = inst->released_fn;
        char *owner = inst->released_owner;
        inst->released_fn = NULL;
        inst->released_owner = NULL;
        fn(inst->released_userdata, owner, 0);
        free(owner);
    }
    for (struct fake_run *r = inst->runs, *next; r; r = next) {
        next = r->next;
        if (r->output) {
            static const char entry[] = "{\"type\":\"text\",\"text\":\"x\\n\"}";
            r->output = false;
            r->cb.on_output(r->cb.userdata, r->id, entry, sizeof entry - 1);
        }
        if (r->call && !r->called && !r->cancelled) {
            r->called = true;
            if (r->global)
                r->cb.on_call(r->cb.userdata, r->id, 1, r->global, r->function, r->arguments, strlen(r->arguments));
            else
                r->cb.on_call(r->cb.userdata, r->id, 1, "tools", "echo", "[1]", 3);
            /* The host may have answered or cancelled inside on_call, and other runs wait: look
             * again from the next dispatch. */
            wake(inst);
            return 0;
        }
        if (!r->call || r->answered || r->cancelled) {
            finish(inst, r);
            wake(inst);
            return 0;
        }
    }
    return 0;
}

static int cancel(struct dsh_instance *inst, dsh_run_id id, const char *reason)
{
    (void)reason;
    struct fake_run *r = find(inst, id);
    if (!r)
        return DSH_E_NOT_FOUND;
    r->cancelled = true;
    wake(inst);
    return 0;
}

static int reply(struct dsh_instance *inst, dsh_run_id id, uint64_t call, bool ok, const char *text, size_t len)
{
    (void)ok;
    struct fake_run *r = find(inst, id);
    if (!r || call != 1 || !r->called || r->answered)
        return DSH_E_NOT_FOUND;
    if (text && ok && !dsh_json_is_value(text, len, DSH_JSON_VALUE_MAX_DEPTH, NULL))
        abort(); /* a host passed on a reply value that is not one JSON value */
    r->answered = true;
    wake(inst);
    return 0;
}

static int release(struct dsh_instance *inst, const char *owner, dsh_released_fn fn, void *userdata,
                   struct dsh_error *err)
{
    if (inst->released_fn)
        return dsh_error_setf(err, DSH_E_OWNER_BUSY, "a release is in progress");
    inst->released_fn = fn;
    inst->released_userdata = userdata;
    inst->released_owner = strdup(owner);
    wake(inst);
    return 0;
}

static int describe(struct dsh_instance *inst, char **ret_json, size_t *ret_len, struct dsh_error *err)
{
    (void)inst, (void)err;
    static const char text[] = "{\"programFormat\":\"async-function\",\"timeout\":{\"defaultMs\":1000,\"maxMs\":2000},"
                               "\"executionInstructions\":\"fake\"}";
    *ret_json = strdup(text);
    *ret_len = sizeof text - 1;
    return *ret_json ? 0 : -ENOMEM;
}

static void unload(struct dsh_instance *inst)
{
    if (!inst)
        return;
    while (inst->runs) {
        inst->runs->cancelled = true;
        finish(inst, inst->runs);
    }
    if (inst->released_fn)
        inst->released_fn(inst->released_userdata, inst->released_owner, 0);
    free(inst->released_owner);
    close(inst->fd);
    free(inst);
}

static int get_fd(struct dsh_instance *inst)
{
    return inst->fd;
}

static void free_text(char *text)
{
    free(text);
}

static int wait_for(struct dsh_instance *inst, int timeout_ms)
{
    (void)timeout_ms;
    return dispatch(inst);
}

static const char *const *readable_roots(void)
{
    static const char *const none[] = {NULL};
    return none;
}

static int pause_output(struct dsh_instance *inst, dsh_run_id id, bool paused)
{
    (void)paused;
    return find(inst, id) ? 0 : DSH_E_NOT_FOUND;
}

/* No images here: a registration is refused as a provider without the format would refuse it. */
static int register_image(struct dsh_instance *inst, dsh_run_id id, const char *attachment_id, const char *host_path,
                          char **ret_descriptor_json, size_t *ret_len, struct dsh_error *err)
{
    (void)attachment_id, (void)host_path, (void)ret_descriptor_json, (void)ret_len;
    if (!find(inst, id))
        return dsh_error_setf(err, DSH_E_NOT_FOUND, "no such run");
    return dsh_error_setf(err, DSH_E_UNSUPPORTED, "the fuzzing double registers no images");
}

static const struct dsh_provider table = {
    .struct_size = sizeof table,
    .abi_major = DSH_ABI_MAJOR,
    .abi_minor = DSH_ABI_MINOR,
    .name = "@deepseek-ai/dsh-ptc-runtime-node",
    .version = "0.0.0-fuzz",
    .load = load,
    .resolve = resolve,
    .run = run,
    .release = release,
    .get_fd = get_fd,
    .dispatch = dispatch,
    .cancel = cancel,
    .reply = reply,
    .describe = describe,
    .unload = unload,
    .free_text = free_text,
    .wait = wait_for,
    .registerImage = register_image,
    .readable_roots = readable_roots,
    .pause_output = pause_output,
};

__attribute__((visibility("default"))) const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major)
{
    return host_abi_major == DSH_ABI_MAJOR ? &table : NULL;
}

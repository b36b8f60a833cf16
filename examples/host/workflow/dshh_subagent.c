/* The reference subagent providers. "nested": a child's prompt is a TypeScript program run as a
 * second run of the same runtime instance, with the host's demo tools, under the session's
 * sandbox. "command": the child runs a configured argv template with the prompt as one argument,
 * from inside such a nested run (so it is confined the same way). Its value becomes the child's
 * text (or structured output when a schema is given), a failed program a failed child. No model
 * is needed, so workflows are real and testable. */
#include "dshh_subagent.h"

#include "dsh_json_strict.h"
#include "dsh_list.h"
#include "dshh_demo_tools.h"
#include "dshh_native_bindings.h"
#include "dshh_request.h"

#include <errno.h>
#include <stdio.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

struct child {
    struct dshh_subagents *owner;
    dsh_subagent_id id;
    dsh_run_id run;
    bool running;     /* the nested run has not ended */
    bool disposing;   /* dispose() came; on_disposed follows the result */
    bool ignore_cancel; /* fault injection (model "fault:publish-after-cancel") */
    char *schema;     /* options.schema JSON text, or NULL */
    struct dsh_subagent_callbacks cb;
    struct dshh_demo_pending *pending;
    struct child *next;
};

struct dshh_subagents {
    struct dshh_host *host;
    FILE *trace;
    struct dsh_subagent_provider vtable;
    dsh_subagent_id next_id;
    struct child *children;
    char **command; /* "command": the argv template (NULL-terminated), else NULL */
};

static void trace(struct dshh_subagents *s, const char *step, dsh_subagent_id id)
{
    if (s->trace) {
        fprintf(s->trace, "{\"subagent\":\"%s\",\"child\":%llu}\n", step, (unsigned long long)id);
        fflush(s->trace);
    }
}

static struct child *find(struct dshh_subagents *s, dsh_subagent_id id)
{
    for (struct child *c = s->children; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

static void drop(struct child *c)
{
    DSH_LIST_REMOVE(&c->owner->children, c);
    free(c->schema);
    free(c);
}

/* Releases a finished child and reports on_disposed (possibly inside dispose(), which the ABI
 * allows): no loop timer, so an engine that waits with the runtime's wait() still sees it. */
static void release_child(void *arg)
{
    struct child *c = arg;
    struct dsh_subagent_callbacks cb = c->cb;
    dsh_subagent_id id = c->id;
    trace(c->owner, "disposed", id);
    drop(c);
    cb.on_disposed(cb.userdata, id);
}

static void on_call(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                    const char *name, const char *args_json, size_t args_len)
{
    struct child *c = userdata;
    if (dshh__host_native_call(c->owner->host, run, call, global, name, args_json, args_len))
        return;
    if (!strcmp(global, DSHH_DEMO_GLOBAL)) {
        dshh__demo_call(c->owner->host, run, call, name, args_json, args_len, &c->pending);
        return;
    }
    const char *msg = "subagent: no binding with this name";
    c->owner->host->provider->reply(c->owner->host->instance, run, call, false, msg, strlen(msg));
}

/* The JSON type name of v as a schema `type` would say it. */
static bool matches_type(json_object *v, const char *type)
{
    switch (json_object_get_type(v)) {
    case json_type_object: return !strcmp(type, "object");
    case json_type_array: return !strcmp(type, "array");
    case json_type_string: return !strcmp(type, "string");
    case json_type_boolean: return !strcmp(type, "boolean");
    case json_type_int: return !strcmp(type, "integer") || !strcmp(type, "number");
    case json_type_double: return !strcmp(type, "number");
    default: return !strcmp(type, "null");
    }
}

/* Output JSON of a published child, or NULL with *why set when the value does not fit. */
static char *output_of(struct child *c, json_object *result, const char **why)
{
    json_object *value = NULL, *out = json_object_new_object(), *output;
    bool has_value = json_object_object_get_ex(result, "value", &value);
    if (c->schema) {
        json_object *schema = dsh_json_parse_strict_value(c->schema, strlen(c->schema)), *type;
        /* Structured output: the value itself; a schema's top-level type is checked. */
        if (!has_value || (json_object_object_get_ex(schema, "type", &type) &&
                           json_object_is_type(type, json_type_string) &&
                           !matches_type(value, json_object_get_string(type)))) {
            *why = "the child's value does not match the schema";
            json_object_put(schema);
            json_object_put(out);
            return NULL;
        }
        json_object_put(schema);
        json_object_object_add(out, "value", json_object_get(value));
    } else if (has_value && json_object_is_type(value, json_type_string)) {
        json_object_object_add(out, "text", json_object_get(value));
    } else if (has_value) {
        json_object_object_add(out, "text", json_object_new_string(json_object_to_json_string_ext(
                                                value, DSH_JSON_PRINT_FLAGS)));
    } else {
        /* No value: the text the program printed. */
        size_t n = 0;
        char *text = calloc(1, 1);
        if (json_object_object_get_ex(result, "output", &output))
            for (size_t i = 0; text && i < json_object_array_length(output); i++) {
                json_object *e = json_object_array_get_idx(output, i), *t;
                if (!json_object_object_get_ex(e, "text", &t))
                    continue;
                size_t k = (size_t)json_object_get_string_len(t);
                char *grown = realloc(text, n + k + 1);
                if (!grown)
                    break;
                text = grown;
                memcpy(text + n, json_object_get_string(t), k + 1);
                n += k;
            }
        json_object_object_add(out, "text", json_object_new_string(text ? text : ""));
        free(text);
    }
    char *s = strdup(json_object_to_json_string_ext(out, DSH_JSON_PRINT_FLAGS));
    json_object_put(out);
    return s;
}

static void on_done(void *userdata, dsh_run_id run, const char *result_json, size_t result_len)
{
    (void)run;
    struct child *c = userdata;
    struct dshh_subagents *s = c->owner;
    dshh__demo_cancel(s->host, &c->pending);
    c->running = false;
    json_object *result = dsh_json_parse_strict_value(result_json, result_len), *ok, *err, *kind, *msg;
    const char *why = NULL;
    char *output = NULL;
    if (json_object_object_get_ex(result, "ok", &ok) && json_object_get_boolean(ok))
        output = output_of(c, result, &why);
    char failure[1024];
    if (!output && !why) {
        json_object_object_get_ex(result, "error", &err);
        json_object_object_get_ex(err, "kind", &kind);
        json_object_object_get_ex(err, "message", &msg);
        snprintf(failure, sizeof failure, "%s: %s", kind ? json_object_get_string(kind) : "error",
                 msg ? json_object_get_string(msg) : "the child failed");
        why = failure;
    }
    json_object_put(result);
    bool disposing = c->disposing;
    trace(s, output ? "published" : "failed", c->id);
    /* Copy first: the engine disposes the child from inside on_result. */
    struct dsh_subagent_callbacks cb = c->cb;
    dsh_subagent_id id = c->id;
    if (output)
        cb.on_result(cb.userdata, id, 0, output, strlen(output));
    else
        cb.on_result(cb.userdata, id, -1, why, strlen(why));
    free(output);
    /* dispose() before the result: release now that the run is over. */
    if (disposing && (c = find(s, id)))
        release_child(c);
}

/* The nested program of a "command" child. The argv goes in as JSON data, each element exactly
 * "{prompt}" replaced by the prompt: execFile passes it as one argument, never to a shell. */
static char *command_program(struct dshh_subagents *s, const char *prompt, size_t prompt_len,
                             bool schema)
{
    json_object *argv = json_object_new_array();
    for (size_t i = 0; s->command[i]; i++)
        json_object_array_add(argv, !strcmp(s->command[i], DSHH_PROMPT_PLACEHOLDER)
                                        ? json_object_new_string_len(prompt, (int)prompt_len)
                                        : json_object_new_string(s->command[i]));
    const char *lit = json_object_to_json_string_ext(argv, DSH_JSON_PRINT_FLAGS);
    static const char body[] =
        "const { execFile } = await import('node:child_process');\n"
        "const out = await new Promise((resolve, reject) => execFile(__argv[0], __argv.slice(1),\n"
        "  { maxBuffer: 16 * 1024 * 1024 }, (e, stdout, stderr) => e\n"
        "    ? reject(new Error(`${__argv[0]}: ${e.code === undefined || e.code === null ? 'signal ' + e.signal : 'exit ' + e.code}: ${String(stderr).slice(0, 2000)}`))\n"
        "    : resolve(stdout)));\n"
        "return __schema ? JSON.parse(out) : out;\n";
    size_t len = strlen(lit) + sizeof body + 64;
    char *program = malloc(len);
    if (program)
        snprintf(program, len, "const __argv = %s;\nconst __schema = %s;\n%s", lit,
                 schema ? "true" : "false", body);
    json_object_put(argv);
    return program;
}

static int start(void *ctx, const char *prompt, size_t prompt_len, const char *options_json,
                 size_t options_len, const struct dsh_subagent_callbacks *callbacks,
                 dsh_subagent_id *ret_child, struct dsh_error *ret_error)
{
    struct dshh_subagents *s = ctx;
    json_object *opts = dsh_json_parse_strict_value(options_json, options_len), *v;
    struct child *c = calloc(1, sizeof *c);
    if (!c) {
        json_object_put(opts);
        return -ENOMEM;
    }
    c->owner = s;
    c->cb = *callbacks;
    /* Test-only fault injection: a child that ignores cancel() and publishes afterwards, so
     * tests can check that the engine still awaits its result and disposal. */
    c->ignore_cancel = json_object_object_get_ex(opts, "model", &v) &&
                       !strcmp(json_object_get_string(v), "fault:publish-after-cancel");
    if (json_object_object_get_ex(opts, "schema", &v))
        c->schema = strdup(json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS));
    json_object *req = json_object_new_object();
    if (s->command) {
        char *program = command_program(s, prompt, prompt_len, c->schema != NULL);
        json_object_object_add(req, "program", json_object_new_string(program ? program : "throw new Error('out of memory')"));
        free(program);
    } else {
        json_object_object_add(req, "program", json_object_new_string_len(prompt, (int)prompt_len));
    }
    if (json_object_object_get_ex(opts, "sessionId", &v))
        json_object_object_add(req, "sessionId", json_object_get(v));
    if (json_object_object_get_ex(opts, "cwd", &v)) /* children work where the workflow does */
        json_object_object_add(req, "cwd", json_object_get(v));
    json_object *bindings = json_object_new_array();
    if (s->host->demo_tools && !s->command)
        dshh__add_demo_bindings(bindings);
    if (!s->command)
        dshh__native_declare(s->host->native, bindings);
    json_object_object_add(req, "bindings", bindings);
    json_object_put(opts);
    const char *text = json_object_to_json_string_ext(req, DSH_JSON_PRINT_FLAGS);
    struct dsh_run_callbacks rcb = {.struct_size = sizeof rcb, .on_call = on_call, .on_done = on_done,
                                    .userdata = c};
    int rc = dshh__start_run(s->host, text, strlen(text), &rcb, &c->run, ret_error);
    json_object_put(req);
    if (rc < 0) {
        free(c->schema);
        free(c);
        return rc;
    }
    c->running = true;
    c->id = ++s->next_id;
    c->next = s->children;
    s->children = c;
    *ret_child = c->id;
    trace(s, "started", c->id);
    return 0;
}

static int cancel(void *ctx, dsh_subagent_id id, const char *reason)
{
    struct dshh_subagents *s = ctx;
    struct child *c = find(s, id);
    if (!c)
        return DSH_E_NOT_FOUND;
    trace(s, "cancel", id);
    if (c->running && !c->ignore_cancel)
        s->host->provider->cancel(s->host->instance, c->run, reason);
    return 0;
}

static int dispose(void *ctx, dsh_subagent_id id)
{
    struct dshh_subagents *s = ctx;
    struct child *c = find(s, id);
    if (!c || c->disposing)
        return DSH_E_NOT_FOUND;
    c->disposing = true;
    if (c->running) /* the result still comes; disposal follows it (on_done) */
        return s->host->provider->cancel(s->host->instance, c->run, "the child was disposed");
    release_child(c);
    return 0;
}

int dshh__subagents_new_command(struct dshh_host *host, FILE *trace_out, const char *const *argv,
                                struct dshh_subagents **ret)
{
    size_t n = 0;
    while (argv[n])
        n++;
    if (n == 0 || dshh__subagents_new(host, trace_out, ret) < 0)
        return -1;
    struct dshh_subagents *s = *ret;
    s->vtable.name = DSHH_SUBAGENT_COMMAND;
    if (!(s->command = calloc(n + 1, sizeof *s->command)))
        goto fail;
    for (size_t i = 0; i < n; i++)
        if (!(s->command[i] = strdup(argv[i])))
            goto fail;
    return 0;
fail:
    dshh__subagents_free(s);
    *ret = NULL;
    return -1;
}

int dshh__subagents_new(struct dshh_host *host, FILE *trace_out, struct dshh_subagents **ret)
{
    struct dshh_subagents *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->host = host;
    s->trace = trace_out;
    s->vtable = (struct dsh_subagent_provider){.struct_size = sizeof s->vtable,
                                               .abi_major = DSH_ABI_MAJOR,
                                               .abi_minor = DSH_ABI_MINOR,
                                               .name = DSHH_SUBAGENT_NESTED,
                                               .ctx = s,
                                               .start = start,
                                               .cancel = cancel,
                                               .dispose = dispose};
    *ret = s;
    return 0;
}

const struct dsh_subagent_provider *dshh__subagents_vtable(struct dshh_subagents *s)
{
    return &s->vtable;
}

void dshh__subagents_free(struct dshh_subagents *s)
{
    if (!s)
        return;
    while (s->children)
        drop(s->children);
    for (size_t i = 0; s->command && s->command[i]; i++)
        free(s->command[i]);
    free(s->command);
    free(s);
}

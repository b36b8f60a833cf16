/* The `tools` namespace of the dsh-demo-tools row: real bindings for examples and tests.
 *   echo(x)          -> x
 *   add({a, b})      -> a + b
 *   sleep({ms})      -> null after ms (a loop timer: the host keeps serving meanwhile)
 *   fail({message})  -> rejects with message
 *   registerImage({path, attachmentId?}) -> attachmentId (dshh_demo_images.c)
 */
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_list.h"
#include "dshh_demo_tools.h"

#include "dshh_demo_images.h"
#include "dshh_names.h"

#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const dshh__demo_functions[] = {"echo", "add", "sleep", "fail", "registerImage", NULL};

bool dshh__add_demo_bindings(json_object *bindings)
{
    size_t n = json_object_array_length(bindings);
    for (size_t i = 0; i < n; i++) {
        json_object *ns = json_object_array_get_idx(bindings, i);
        const char *g;
        /* A client namespace with the same global wins over the demo one. */
        if ((g = dsh_json_get_text(ns, "global")) && !strcmp(g, DSHH_DEMO_GLOBAL))
            return false;
    }
    json_object *ns = json_object_new_object();
    json_object *fns = json_object_new_array();
    for (size_t i = 0; dshh__demo_functions[i]; i++)
        json_object_array_add(fns, json_object_new_string(dshh__demo_functions[i]));
    json_object_object_add(ns, "global", json_object_new_string(DSHH_DEMO_GLOBAL));
    json_object_object_add(ns, "functions", fns);
    json_object_array_add(bindings, ns);
    return true;
}

struct dshh_demo_pending {
    struct dshh_demo_pending *next;
    struct dshh_demo_pending **list;
    struct dshh_host *host;
    dsh_run_id run;
    uint64_t call;
    int64_t timer;
};

static void reply_json(struct dshh_host *host, dsh_run_id run, uint64_t call, json_object *v)
{
    const char *text = json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS);
    /* NOT_FOUND only means the run ended first; the answer is simply dropped. */
    host->provider->reply(host->instance, run, call, true, text, strlen(text));
}

static void reject(struct dshh_host *host, dsh_run_id run, uint64_t call, const char *message)
{
    host->provider->reply(host->instance, run, call, false, message, strlen(message));
}

static bool get_number(json_object *obj, const char *key, json_object **ret)
{
    return json_object_is_type(obj, json_type_object) &&
           json_object_object_get_ex(obj, key, ret) &&
           (json_object_is_type(*ret, json_type_int) || json_object_is_type(*ret, json_type_double));
}

static void add(struct dshh_host *host, dsh_run_id run, uint64_t call, json_object *arg)
{
    json_object *a, *b;
    if (!get_number(arg, "a", &a) || !get_number(arg, "b", &b)) {
        reject(host, run, call, "tools.add expects {a: number, b: number}");
        return;
    }
    json_object *sum;
    long long r;
    if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int) &&
        !__builtin_add_overflow(json_object_get_int64(a), json_object_get_int64(b), &r) &&
        r <= (1LL << 53) && r >= -(1LL << 53))
        sum = json_object_new_int64(r);
    else
        sum = json_object_new_double(json_object_get_double(a) + json_object_get_double(b));
    if (!isfinite(json_object_get_double(sum)))
        reject(host, run, call, "tools.add: the sum is not a finite number");
    else
        reply_json(host, run, call, sum);
    json_object_put(sum);
}

static void sleep_done(void *arg)
{
    struct dshh_demo_pending *p = arg;
    DSH_LIST_REMOVE(p->list, p);
    p->host->provider->reply(p->host->instance, p->run, p->call, true, "null", 4);
    free(p);
}

static void sleep_(struct dshh_host *host, dsh_run_id run, uint64_t call, json_object *arg,
                   struct dshh_demo_pending **pending)
{
    json_object *ms;
    double d = 0;
    if (!get_number(arg, "ms", &ms) || !isfinite(d = json_object_get_double(ms)) || d < 0 ||
        d > INT_MAX) {
        reject(host, run, call, "tools.sleep expects {ms: number} with 0 <= ms <= 2147483647");
        return;
    }
    struct dshh_demo_pending *p = calloc(1, sizeof(*p));
    if (!p) {
        reject(host, run, call, "tools.sleep: out of memory");
        return;
    }
    *p = (struct dshh_demo_pending){.list = pending, .host = host, .run = run, .call = call};
    p->timer = dshh__loop_add_timer(host->loop, (uint32_t)ceil(d), sleep_done, p);
    if (p->timer < 0) {
        free(p);
        reject(host, run, call, "tools.sleep: no timer available");
        return;
    }
    p->next = *pending;
    *pending = p;
}

void dshh__demo_call(struct dshh_host *host, dsh_run_id run, uint64_t call, const char *name,
                     const char *args_json, size_t args_len, struct dshh_demo_pending **pending)
{
    /* The provider's args text is a strict JSON array of values nested as deep as the runtime
     * allows (DSH_JSON_VALUE_MAX_DEPTH): the first argument is found by the scanner, echoed as its
     * text, and built into a tree only for the tools that read it (small: a node budget). A text
     * that is no array rejects the call rather than answering as if no argument had been passed. */
    const char *end = args_json + args_len, *p = args_json;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    if (p == end || *p != '[' || !dsh_json_is_value(args_json, args_len, DSH_JSON_VALUE_MAX_DEPTH + 1, NULL)) {
        reject(host, run, call, "the demo tools could not read the call's arguments");
        return;
    }
    for (p++; p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'); p++)
        ;
    struct dsh_json_extent extent = {0, 0};
    const char *arg0_end = *p == ']' ? NULL : dsh_json_scan_value(p, end, DSH_JSON_VALUE_MAX_DEPTH, &extent);
    bool has_arg0 = arg0_end != NULL;
    if (!strcmp(name, "echo")) {
        host->provider->reply(host->instance, run, call, true, has_arg0 ? p : NULL,
                              has_arg0 ? (size_t)(arg0_end - p) : 0); /* no argument: undefined */
        return;
    }
    if (has_arg0 && (extent.nodes > DSH_JSON_ENVELOPE_MAX_NODES || extent.depth > DSH_JSON_MAX_DEPTH)) {
        reject(host, run, call, "the demo tools take small arguments (echo excepted)");
        return;
    }
    json_object *args = dsh_json_parse_strict_value(args_json, args_len);
    json_object *arg0 = has_arg0 ? json_object_array_get_idx(args, 0) : NULL;
    if (!strcmp(name, "add")) {
        add(host, run, call, arg0);
    } else if (!strcmp(name, "sleep")) {
        sleep_(host, run, call, arg0, pending);
    } else if (!strcmp(name, "registerImage")) {
        dshh__demo_register_image(host, run, call, arg0);
    } else if (!strcmp(name, "fail")) {
        const char *message = dsh_json_get_string(arg0, "message", NULL);
        reject(host, run, call, message ? message : "tools.fail was called");
    } else {
        reject(host, run, call, "no such demo tool");
    }
    json_object_put(args);
}

void dshh__demo_cancel(struct dshh_host *host, struct dshh_demo_pending **pending)
{
    while (*pending) {
        struct dshh_demo_pending *p = *pending;
        *pending = p->next;
        dshh__loop_cancel_timer(host->loop, p->timer);
        free(p);
    }
}

/* The engine table behind dsh_workflow_entry: load, unload and loop integration. Runs live in
 * run.c, children in children.c. */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

void wf__wake(struct dsh_workflow *engine)
{
    uint64_t one = 1;
    /* A full counter still leaves the fd readable, which is all we need. */
    if (write(engine->efd, &one, sizeof one) < 0 && errno != EAGAIN)
        return;
}

const struct dsh_subagent_provider *wf__find_provider(struct dsh_workflow *engine, const char *name)
{
    for (size_t i = 0; engine->subagents[i]; i++)
        if (!name || !strcmp(engine->subagents[i]->name, name))
            return engine->subagents[i];
    return NULL;
}

/* The guest library is an async-function body: only a per-call runtime runs it. */
static int check_runtime_format(const struct dsh_runtime_service *rt, struct dsh_error *err)
{
    char *json = NULL;
    size_t len = 0;
    struct dsh_error derr = {0};
    int rc = rt->provider->describe(rt->instance, &json, &len, &derr);
    if (rc < 0)
        return wf__fail(err, DSH_E_CONFIG_INVALID, "the lent runtime cannot describe itself: %s",
                        derr.message);
    json_object *d = json_tokener_parse(json), *f;
    bool ok = json_object_object_get_ex(d, "programFormat", &f) &&
              !strcmp(json_object_get_string(f), "async-function");
    json_object_put(d);
    rt->provider->free_text(json);
    if (!ok)
        return wf__fail(err, DSH_E_UNSUPPORTED,
                        "the lent runtime must run async-function programs (executionMode: per-call)");
    return 0;
}

static int load(const char *config_yaml, size_t config_len, const struct dsh_services *services,
                const struct dsh_subagent_provider *const *subagents, struct dsh_workflow **ret_engine,
                struct dsh_error *ret_error)
{
    if (!services || !ret_engine)
        return wf__fail(ret_error, -EINVAL, "load needs services and ret_engine");
    if (services->struct_size < offsetof(struct dsh_services, runtime) + sizeof(void *) ||
        !services->runtime || services->runtime->abi_major != DSH_ABI_MAJOR ||
        !services->runtime->provider || !services->runtime->instance)
        return wf__fail(ret_error, DSH_E_CONFIG_INVALID,
                        "dsh-workflow-ptc needs services->runtime (a loaded PTC runtime)");
    size_t n = 0;
    while (subagents && subagents[n]) {
        if (subagents[n]->abi_major != DSH_ABI_MAJOR || !subagents[n]->name || !subagents[n]->start ||
            !subagents[n]->cancel || !subagents[n]->dispose)
            return wf__fail(ret_error, DSH_E_CONFIG_INVALID, "subagent provider %zu is incomplete", n);
        n++;
    }
    struct wf_config config;
    int rc = wf__config_parse(config_yaml, config_len, &config, ret_error);
    if (rc < 0)
        return rc;
    if ((rc = check_runtime_format(services->runtime, ret_error)) < 0)
        return rc;
    struct dsh_workflow *e = calloc(1, sizeof *e);
    if (!e || !(e->subagents = calloc(n + 1, sizeof *e->subagents))) {
        free(e);
        return wf__fail(ret_error, -ENOMEM, "out of memory");
    }
    memcpy(e->subagents, subagents, n * sizeof *e->subagents);
    e->config = config;
    e->rt = services->runtime->provider;
    e->rt_inst = services->runtime->instance;
    e->logger = services->logger;
    e->next_id = 1;
    e->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (e->efd < 0) {
        rc = -errno;
        free(e->subagents);
        free(e);
        return wf__fail(ret_error, rc, "eventfd: %s", strerror(-rc));
    }
    *ret_engine = e;
    return 0;
}

static int get_fd(struct dsh_workflow *engine)
{
    return engine ? engine->efd : -EINVAL;
}

static int dispatch(struct dsh_workflow *engine)
{
    if (!engine)
        return -EINVAL;
    uint64_t count;
    if (read(engine->efd, &count, sizeof count) < 0 && errno != EAGAIN)
        return -errno;
    wf__deliver_done(engine);
    return 0;
}

static void unload(struct dsh_workflow *engine)
{
    if (!engine)
        return;
    for (struct wf_run *r = engine->runs; r; r = r->next)
        wf__cancel(engine, r->id, "the workflow engine is unloading");
    /* Children and PTC runs end through the runtime, which the host no longer dispatches. */
    while (engine->runs) {
        wf__deliver_done(engine);
        if (engine->runs)
            engine->rt->wait(engine->rt_inst, 100);
    }
    close(engine->efd);
    free(engine->subagents);
    free(engine);
}

static void free_text(char *text)
{
    free(text);
}

static const struct dsh_workflow_engine engine_table = {
    .struct_size = sizeof(struct dsh_workflow_engine),
    .abi_major = DSH_ABI_MAJOR,
    .abi_minor = DSH_ABI_MINOR,
    .name = "dsh-workflow-ptc",
    .version = "0.1.0",
    .load = load,
    .start = wf__start,
    .cancel = wf__cancel,
    .get_fd = get_fd,
    .dispatch = dispatch,
    .unload = unload,
    .free_text = free_text,
};

__attribute__((visibility("default"))) const struct dsh_workflow_engine *
dsh_workflow_entry(uint32_t host_abi_major)
{
    return host_abi_major == DSH_ABI_MAJOR ? &engine_table : NULL;
}

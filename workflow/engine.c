/* See engine.h. The engine's fd is an epoll set holding its own eventfd (results that are due)
 * and the lent runtime's fd, so a host polls one fd and calls only dispatch(), which dispatches
 * the runtime too (nested event sources, as sd-event nests an epoll fd). */
#include "engine.h"

#include "config.h"
#include "dsh_list.h"
#include "wf_run.h"

#include <errno.h>
#include <json-c/json.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* One live run in the engine's list. */
struct wf_slot {
    struct wf_run *run;
    struct wf_slot *next;
};

struct dsh_workflow {
    struct wf_config config;
    const struct dsh_provider *rt;                  /* the lent runtime's table */
    struct dsh_instance *rt_inst;                   /* and its instance */
    const struct dsh_subagent_provider **subagents; /* NULL-terminated copy of the array */
    struct wf_run_env run_env;
    int epoll_fd; /* what get_fd returns */
    int wake_fd;  /* eventfd: a result is due */
    dsh_workflow_run next_id;
    struct wf_slot *runs;
};

static void wake(void *userdata)
{
    struct dsh_workflow *e = userdata;
    uint64_t one = 1;
    /* A full counter still leaves the fd readable, which is all we need. */
    if (write(e->wake_fd, &one, sizeof one) < 0 && errno != EAGAIN)
        return;
}

static const struct wf_run_hooks run_hooks = {.due = wake};

/* The guest library is an async-function body: only a per-call runtime runs it. */
static int check_runtime_format(const struct dsh_runtime_service *rt, struct dsh_error *err)
{
    char *json = NULL;
    size_t len = 0;
    struct dsh_error derr = {0};
    int rc = rt->provider->describe(rt->instance, &json, &len, &derr);
    if (rc < 0)
        return dsh_error_setf(err, DSH_E_CONFIG_INVALID,
                              "the lent runtime cannot describe itself: %s", derr.message);
    json_object *d = dsh_json_parse_strict_value(json, strlen(json));
    /* The guest is JavaScript: a runtime of another program language cannot run it. */
    const char *format = dsh_json_get_text(d, "programFormat"), *lang = dsh_json_get_text(d, "language");
    bool ok = format && !strcmp(format, "async-function") &&
              (!dsh_json_has(d, "language") || (lang && !strcmp(lang, "typescript")));
    json_object_put(d);
    rt->provider->free_text(json);
    if (!ok)
        return dsh_error_setf(
            err, DSH_E_UNSUPPORTED,
            "the lent runtime must run TypeScript async-function programs (the Node runtime, executionMode: per-call)");
    return 0;
}

static int check_services(const struct dsh_services *services,
                          const struct dsh_subagent_provider *const *subagents, size_t *ret_n,
                          struct dsh_error *err)
{
    if (services->struct_size < offsetof(struct dsh_services, runtime) + sizeof(void *) ||
        !services->runtime || services->runtime->abi_major != DSH_ABI_MAJOR ||
        !services->runtime->provider || !services->runtime->instance)
        return dsh_error_setf(err, DSH_E_CONFIG_INVALID,
                              "dsh-workflow-ptc needs services->runtime (a loaded PTC runtime)");
    size_t n = 0;
    while (subagents && subagents[n]) {
        const struct dsh_subagent_provider *s = subagents[n];
        if (s->abi_major != DSH_ABI_MAJOR || !s->name || !s->start || !s->cancel || !s->dispose)
            return dsh_error_setf(err, DSH_E_CONFIG_INVALID, "subagent provider %zu is incomplete",
                                  n);
        n++;
    }
    *ret_n = n;
    return 0;
}

static void engine_free(struct dsh_workflow *e)
{
    if (e->wake_fd >= 0)
        close(e->wake_fd);
    if (e->epoll_fd >= 0)
        close(e->epoll_fd);
    free(e->subagents);
    wf__config_release(&e->config);
    free(e);
}

static int watch(int epoll_fd, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* The epoll set behind get_fd: the wake eventfd and the runtime's fd. */
static int open_fds(struct dsh_workflow *e, struct dsh_error *err)
{
    e->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    e->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (e->epoll_fd < 0 || e->wake_fd < 0)
        return dsh_error_setf(err, -errno, "epoll/eventfd: %s", strerror(errno));
    int rt_fd = e->rt->get_fd(e->rt_inst);
    if (rt_fd < 0)
        return dsh_error_setf(err, DSH_E_CONFIG_INVALID, "the lent runtime has no pollable fd");
    int rc = watch(e->epoll_fd, e->wake_fd);
    if (rc == 0)
        rc = watch(e->epoll_fd, rt_fd);
    return rc < 0 ? dsh_error_setf(err, rc, "epoll_ctl: %s", strerror(-rc)) : 0;
}

int wf__engine_load(const char *config_yaml, size_t config_len, const struct dsh_services *services,
                    const struct dsh_subagent_provider *const *subagents,
                    struct dsh_workflow **ret_engine, struct dsh_error *ret_error)
{
    if (!services || !ret_engine)
        return dsh_error_setf(ret_error, -EINVAL, "load needs services and ret_engine");
    size_t n = 0;
    int rc = check_services(services, subagents, &n, ret_error);
    struct wf_config config;
    if (rc == 0)
        rc = wf__config_parse(config_yaml, config_len, &config, ret_error);
    if (rc == 0 && (rc = check_runtime_format(services->runtime, ret_error)) < 0)
        wf__config_release(&config);
    if (rc < 0)
        return rc;
    struct dsh_workflow *e = calloc(1, sizeof *e);
    if (!e || !(e->subagents = calloc(n + 1, sizeof *e->subagents))) {
        free(e);
        wf__config_release(&config);
        return dsh_error_setf(ret_error, -ENOMEM, "out of memory");
    }
    memcpy(e->subagents, subagents, n * sizeof *e->subagents);
    e->config = config;
    e->rt = services->runtime->provider;
    e->rt_inst = services->runtime->instance;
    e->run_env = (struct wf_run_env){.rt = e->rt,
                                     .rt_inst = e->rt_inst,
                                     .config = &e->config,
                                     .providers = e->subagents,
                                     .hooks = &run_hooks,
                                     .userdata = e};
    e->next_id = 1;
    e->epoll_fd = e->wake_fd = -1;
    if ((rc = open_fds(e, ret_error)) < 0) {
        engine_free(e);
        return rc;
    }
    *ret_engine = e;
    return 0;
}

static struct wf_slot *find_slot(struct dsh_workflow *e, dsh_workflow_run id)
{
    for (struct wf_slot *s = e->runs; s; s = s->next)
        if (wf__run_id(s->run) == id)
            return s;
    return NULL;
}

int wf__engine_start(struct dsh_workflow *engine, const char *request_json, size_t request_len,
                     const struct dsh_workflow_callbacks *callbacks, dsh_workflow_run *ret_run,
                     struct dsh_error *err)
{
    if (!engine || !request_json || !callbacks || !ret_run || !callbacks->on_event ||
        !callbacks->on_done)
        return dsh_error_setf(err, -EINVAL,
                              "start needs an engine, a request, callbacks and ret_run");
    struct wf_slot *slot = calloc(1, sizeof *slot);
    if (!slot)
        return dsh_error_setf(err, -ENOMEM, "out of memory");
    int rc = wf__run_start(&engine->run_env, engine->next_id, request_json, request_len, callbacks,
                           &slot->run, err);
    if (rc < 0) {
        free(slot);
        return rc;
    }
    *ret_run = engine->next_id++;
    slot->next = engine->runs;
    engine->runs = slot;
    return 0;
}

int wf__engine_cancel(struct dsh_workflow *engine, dsh_workflow_run id, const char *reason)
{
    struct wf_slot *slot = engine ? find_slot(engine, id) : NULL;
    return slot ? wf__run_cancel(slot->run, reason) : DSH_E_NOT_FOUND;
}

int wf__engine_get_fd(struct dsh_workflow *engine)
{
    return engine ? engine->epoll_fd : -EINVAL;
}

/* Delivers the results that are due. */
static void deliver_due(struct dsh_workflow *e)
{
    for (;;) {
        struct wf_slot *due = NULL;
        DSH_LIST_FOREACH_LINK(link, &e->runs)
            if (wf__run_due((*link)->run)) {
                due = *link;
                DSH_LIST_UNLINK(link); /* unlinked first: the id is dead inside on_done */
                break;
            }
        if (!due)
            return;
        wf__run_finish(due->run); /* on_done may start or cancel other runs: look again */
        free(due);
    }
}

int wf__engine_dispatch(struct dsh_workflow *engine)
{
    if (!engine)
        return -EINVAL;
    struct epoll_event evs[2];
    int n = epoll_wait(engine->epoll_fd, evs, 2, 0);
    if (n < 0 && errno != EINTR)
        return -errno;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (evs[i].data.fd == engine->wake_fd) {
            uint64_t count;
            if (read(engine->wake_fd, &count, sizeof count) < 0 && errno != EAGAIN)
                rc = -errno;
        } else {
            /* The runtime's callbacks (PTC runs, subagent runs of the same instance) run here. */
            int r = engine->rt->dispatch(engine->rt_inst);
            if (r < 0)
                rc = r;
        }
    }
    deliver_due(engine);
    return rc;
}

void wf__engine_unload(struct dsh_workflow *engine)
{
    if (!engine)
        return;
    for (struct wf_slot *s = engine->runs; s; s = s->next)
        wf__run_cancel(s->run, "the workflow engine is unloading");
    /* Children and PTC runs end through the runtime, which the host no longer dispatches. */
    while (engine->runs) {
        deliver_due(engine);
        if (engine->runs)
            engine->rt->wait(engine->rt_inst, 100);
    }
    engine_free(engine);
}

void wf__engine_free_text(char *text)
{
    free(text);
}

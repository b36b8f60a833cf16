/* A host outside the project, built only with
 *   cc host.c $(pkg-config --cflags --libs dsh-host-abi dsh-linux-services)
 * against an installed prefix: loads the plugin named by argv[1] (pkg-config --variable=provider
 * dsh-host-abi), lends it the Linux services, runs argv[2] with a `tools.add` binding this host
 * answers, and prints the result JSON. Exit 0 when the run ended ok. */
#include "dsh_linux_services.h"
#include "dsh_provider.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct state {
    const struct dsh_provider *p;
    struct dsh_instance *inst;
    int done;
    int ok;
};

static void on_call(void *userdata, dsh_run_id run, uint64_t call, const char *global,
                    const char *name, const char *args_json, size_t args_len)
{
    struct state *s = userdata;
    long a = 0, b = 0;
    char value[64];
    (void)args_len;
    if (strcmp(global, "tools") == 0 && strcmp(name, "add") == 0 &&
        sscanf(args_json, "[{\"a\":%ld,\"b\":%ld}]", &a, &b) == 2) {
        snprintf(value, sizeof value, "%ld", a + b);
        s->p->reply(s->inst, run, call, true, value, strlen(value));
    } else {
        const char *msg = "this host answers only tools.add({a, b})";
        s->p->reply(s->inst, run, call, false, msg, strlen(msg));
    }
}

static void on_done(void *userdata, dsh_run_id run, const char *result_json, size_t result_len)
{
    struct state *s = userdata;
    (void)run;
    printf("%.*s\n", (int)result_len, result_json);
    s->ok = strncmp(result_json, "{\"ok\":true", 10) == 0;
    s->done = 1;
}

static int fail(const char *what, int rc, const struct dsh_error *err)
{
    fprintf(stderr, "host: %s: %s (%s)\n", what, err && err->message[0] ? err->message : dsh_strerror(rc),
            dsh_error_name(rc) ? dsh_error_name(rc) : "error");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: host PLUGIN.so PROGRAM\n");
        return 2;
    }
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    dsh_provider_entry_fn entry = so ? (dsh_provider_entry_fn)dlsym(so, "dsh_provider_entry") : NULL;
    struct state s = {.p = entry ? entry(DSH_ABI_MAJOR) : NULL};
    if (!s.p || s.p->struct_size < offsetof(struct dsh_provider, readable_roots) + sizeof(void *)) {
        fprintf(stderr, "host: %s is not a provider of host ABI 1.1: %s\n", argv[1], so ? "" : dlerror());
        return 2;
    }
    /* The plugin's own files must be visible in the execution world: it names their directories. */
    struct dsh_linux_services_options o = {
        .struct_size = sizeof o,
        .extra_readable_roots = s.p->readable_roots(),
    };
    struct dsh_linux_services *ls;
    struct dsh_error err = {0};
    int rc = dsh_linux_services_create(&o, &ls, &err);
    if (rc < 0)
        return fail("services", rc, &err);
    struct dsh_services services = {
        .struct_size = sizeof services, .abi_major = DSH_ABI_MAJOR, .abi_minor = DSH_ABI_MINOR,
        .fs = dsh_linux_fs(ls), .subprocess = dsh_linux_subprocess(ls),
        .sandbox = dsh_linux_sandbox(ls), .sandbox_policy = dsh_linux_sandbox_policy(ls)};
    if ((rc = s.p->load("", 0, &services, &s.inst, &err)) < 0)
        return fail("load", rc, &err);
    char request[4096], *spec;
    size_t spec_len;
    snprintf(request, sizeof request,
             "{\"program\": \"%s\", \"bindings\": [{\"global\": \"tools\", \"functions\": [\"add\"]}]}",
             argv[2]);
    struct dsh_run_callbacks cb = {.struct_size = sizeof cb, .on_call = on_call, .on_done = on_done,
                                   .userdata = &s};
    dsh_run_id run;
    if ((rc = s.p->resolve(s.inst, request, strlen(request), &spec, &spec_len, &err)) < 0)
        return fail("resolve", rc, &err);
    rc = s.p->run(s.inst, spec, spec_len, &cb, &run, &err);
    s.p->free_text(spec);
    if (rc < 0)
        return fail("run", rc, &err);
    while (!s.done && (rc = s.p->wait(s.inst, -1)) >= 0) {
    }
    s.p->unload(s.inst);
    dsh_linux_services_destroy(ls);
    dlclose(so);
    return s.ok ? 0 : 1;
}

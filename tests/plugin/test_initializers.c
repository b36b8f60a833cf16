/* registerEnvironmentInitializer through the real plugin core and the reference services:
 * persistent-in-memory only, only before the first run, and registrations can be removed. */
#include "dsh_linux_services.h"
#include "dsh_provider.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major);

struct fixture {
    struct dsh_linux_services *services;
    struct dsh_services bundle;
    const struct dsh_provider *p;
    struct dsh_instance *inst;
    char *result;
};

static void load(struct fixture *f, const char *config)
{
    char cwd[4096];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    const char *readable[] = {TEST_BOOTSTRAP_DIR, NULL};
    struct dsh_linux_services_options o = {
        .struct_size = sizeof o,
        .launcher_path = TEST_LAUNCHER_PATH,
        .default_mode = "read-only",
        .workspace_root = cwd,
        .extra_readable_roots = readable,
    };
    struct dsh_error err = {0};
    cr_assert_eq(dsh_linux_services_create(&o, &f->services, &err), 0, "%s", err.message);
    f->bundle = (struct dsh_services){
        .struct_size = sizeof f->bundle,
        .abi_major = DSH_ABI_MAJOR,
        .fs = dsh_linux_fs(f->services),
        .subprocess = dsh_linux_subprocess(f->services),
        .sandbox = dsh_linux_sandbox(f->services),
        .sandbox_policy = dsh_linux_sandbox_policy(f->services),
    };
    f->p = dsh_provider_entry(DSH_ABI_MAJOR);
    /* The core is linked into this test rather than loaded from the plugin's directory, so it
     * cannot find its bootstrap beside itself: the launch names it. */
    char full[8192];
    snprintf(full, sizeof full,
             "%slaunch: {kind: node-script, executable: '%s', bootstrapPath: '%s/process.js'}\n",
             config, TEST_NODE, TEST_BOOTSTRAP_DIR);
    cr_assert_eq(f->p->load(full, strlen(full), &f->bundle, &f->inst, &err), 0, "%s", err.message);
}

static void unload(struct fixture *f)
{
    f->p->unload(f->inst);
    dsh_linux_services_destroy(f->services);
    free(f->result);
}

static void on_call(void *ud, dsh_run_id run, uint64_t call, const char *g, const char *n, const char *a, size_t l)
{
    (void)ud, (void)run, (void)call, (void)g, (void)n, (void)a, (void)l;
}

static void on_done(void *ud, dsh_run_id run, const char *json, size_t len)
{
    (void)run;
    ((struct fixture *)ud)->result = strndup(json, len);
}

static void run_program(struct fixture *f, const char *program, const char *owner)
{
    char request[512], *spec = NULL;
    size_t spec_len;
    struct dsh_error err = {0};
    snprintf(request, sizeof request, "{\"program\":\"%s\",\"stateOwner\":\"%s\"}", program, owner);
    cr_assert_eq(f->p->resolve(f->inst, request, strlen(request), &spec, &spec_len, &err), 0, "%s", err.message);
    struct dsh_run_callbacks cb = {.struct_size = sizeof cb, .on_call = on_call, .on_done = on_done, .userdata = f};
    dsh_run_id id;
    cr_assert_eq(f->p->run(f->inst, spec, spec_len, &cb, &id, &err), 0, "%s", err.message);
    f->p->free_text(spec);
    while (!f->result)
        cr_assert_geq(f->p->wait(f->inst, 1000), 0);
}

Test(initializers, rejected_outside_persistent_in_memory, .timeout = 60)
{
    struct fixture f = {0};
    load(&f, "executionMode: vm-script\nscriptPersistence: true\n");
    dsh_registration r;
    cr_expect_eq(f.p->registerEnvironmentInitializer(f.inst, "1", 1, &r, NULL), DSH_E_WRONG_MODE);
    unload(&f);
}

Test(initializers, removed_registration_does_not_run_and_late_registration_is_rejected, .timeout = 60)
{
    struct fixture f = {0};
    load(&f, "executionMode: persistent-in-memory\n");
    dsh_registration kept, removed;
    const char *a = "inspect('kept ran')", *b = "inspect('removed ran')";
    cr_assert_eq(f.p->registerEnvironmentInitializer(f.inst, a, strlen(a), &kept, NULL), 0);
    cr_assert_eq(f.p->registerEnvironmentInitializer(f.inst, b, strlen(b), &removed, NULL), 0);
    cr_expect_eq(f.p->unregisterEnvironmentInitializer(f.inst, removed, NULL), 0);
    cr_expect_eq(f.p->unregisterEnvironmentInitializer(f.inst, removed, NULL), DSH_E_NOT_FOUND);
    run_program(&f, "1", "o");
    cr_expect(strstr(f.result, "kept ran") != NULL, "%s", f.result);
    cr_expect(strstr(f.result, "removed ran") == NULL, "%s", f.result);
    dsh_registration late;
    cr_expect_eq(f.p->registerEnvironmentInitializer(f.inst, "1", 1, &late, NULL), DSH_E_TOO_LATE);
    unload(&f);
}

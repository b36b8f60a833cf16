/* registerEnvironmentInitializer through the real plugin core and the reference services:
 * persistent-in-memory only, only before the first run, and registrations can be removed. */
#include "loaded_provider.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fixture {
    struct loaded_provider lp;
    const struct dsh_provider *p;
    struct dsh_instance *inst;
};

static void load(struct fixture *f, const char *config)
{
    loaded_provider_open(&f->lp, config);
    f->p = f->lp.p;
    f->inst = f->lp.inst;
}

static void run_program(struct fixture *f, const char *program, const char *owner)
{
    char request[512], *spec = NULL;
    size_t spec_len;
    struct dsh_error err = {0};
    snprintf(request, sizeof request, "{\"program\":\"%s\",\"stateOwner\":\"%s\"}", program, owner);
    cr_assert_eq(f->p->resolve(f->inst, request, strlen(request), &spec, &spec_len, &err), 0, "%s", err.message);
    struct dsh_run_callbacks cb = {.struct_size = sizeof cb, .on_call = loaded_provider_ignore_call, .on_done = loaded_provider_keep_result, .userdata = f};
    dsh_run_id id;
    cr_assert_eq(f->p->run(f->inst, spec, spec_len, &cb, &id, &err), 0, "%s", err.message);
    f->p->free_text(spec);
    while (!f->lp.result)
        cr_assert_geq(f->p->wait(f->inst, 1000), 0);
}

Test(initializers, rejected_outside_persistent_in_memory, .timeout = 60)
{
    struct fixture f = {0};
    load(&f, "executionMode: vm-script\nscriptPersistence: true\n");
    dsh_registration r;
    cr_expect_eq(f.p->registerEnvironmentInitializer(f.inst, "1", 1, &r, NULL), DSH_E_WRONG_MODE);
    loaded_provider_close(&f.lp);
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
    cr_expect(strstr(f.lp.result, "kept ran") != NULL, "%s", f.lp.result);
    cr_expect(strstr(f.lp.result, "removed ran") == NULL, "%s", f.lp.result);
    dsh_registration late;
    cr_expect_eq(f.p->registerEnvironmentInitializer(f.inst, "1", 1, &late, NULL), DSH_E_TOO_LATE);
    loaded_provider_close(&f.lp);
}

/* See loaded_provider.h. */
#include "loaded_provider.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major);

void loaded_provider_open(struct loaded_provider *lp, const char *config)
{
    loaded_provider_open_with_stripper(lp, config, TEST_BOOTSTRAP_DIR "/stripper.js");
}

void loaded_provider_open_with_stripper(struct loaded_provider *lp, const char *config, const char *stripper_path)
{
    lp->result = NULL;
    char cwd[4096];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    const char *readable[] = {TEST_BOOTSTRAP_DIR, TEST_PLUGIN_TESTS_DIR, NULL};
    struct dsh_linux_services_options o = {
        .struct_size = sizeof o,
        .launcher_path = TEST_LAUNCHER_PATH,
        .default_mode = "read-only",
        .workspace_root = cwd,
        .extra_readable_roots = readable,
    };
    struct dsh_error err = {0};
    cr_assert_eq(dsh_linux_services_create(&o, &lp->services, &err), 0, "%s", err.message);
    lp->bundle = (struct dsh_services){
        .struct_size = sizeof lp->bundle,
        .abi_major = DSH_ABI_MAJOR,
        .fs = dsh_linux_fs(lp->services),
        .subprocess = dsh_linux_subprocess(lp->services),
        .sandbox = dsh_linux_sandbox(lp->services),
        .sandbox_policy = dsh_linux_sandbox_policy(lp->services),
    };
    lp->p = dsh_provider_entry(DSH_ABI_MAJOR);
    /* The core is linked into the test rather than loaded from the plugin's directory, so it
     * cannot find its bootstrap beside itself: the launch names it. */
    char full[8192];
    snprintf(full, sizeof full,
             "%slaunch: {kind: node-script, executable: '%s', bootstrapPath: '%s/process.js', stripperPath: '%s'}\n",
             config, TEST_NODE, TEST_BOOTSTRAP_DIR, stripper_path);
    cr_assert_eq(lp->p->load(full, strlen(full), &lp->bundle, &lp->inst, &err), 0, "%s", err.message);
}

void loaded_provider_close(struct loaded_provider *lp)
{
    lp->p->unload(lp->inst);
    dsh_linux_services_destroy(lp->services);
    free(lp->result);
    lp->result = NULL;
}

void loaded_provider_ignore_call(void *ud, dsh_run_id run, uint64_t call, const char *global,
                                 const char *name, const char *args, size_t len)
{
    (void)ud, (void)run, (void)call, (void)global, (void)name, (void)args, (void)len;
}

void loaded_provider_keep_result(void *ud, dsh_run_id run, const char *json, size_t len)
{
    (void)run;
    struct loaded_provider *lp = ud;
    free(lp->result);
    lp->result = strndup(json, len);
}

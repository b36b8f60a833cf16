/* The real provider loaded over the reference Linux services, for plugin tests that run programs
 * through the ABI (read-only mode, the test's cwd as workspace). */
#ifndef TEST_LOADED_PROVIDER_H
#define TEST_LOADED_PROVIDER_H

#include "dsh_linux_services.h"
#include "dsh_provider.h"

struct loaded_provider {
    struct dsh_linux_services *services;
    struct dsh_services bundle;
    const struct dsh_provider *p;
    struct dsh_instance *inst;
    char *result; /* the last run's result JSON, kept by loaded_provider_keep_result */
};

/* Loads config (a provider row's YAML, each line ending in a newline; the launch is added); fails
 * the test on error. The type stripper is bootstrap/stripper.js. */
void loaded_provider_open(struct loaded_provider *lp, const char *config);
/* The same with the launch's stripperPath (the stripper's fault-injection double's wrappers); this
 * test folder is readable for the execution world too. */
void loaded_provider_open_with_stripper(struct loaded_provider *lp, const char *config, const char *stripper_path);
void loaded_provider_close(struct loaded_provider *lp); /* frees result too */

/* Run callbacks for tests whose userdata points at a struct whose first member is the
 * loaded_provider: calls are left unanswered, on_done keeps the result JSON. */
void loaded_provider_ignore_call(void *ud, dsh_run_id run, uint64_t call, const char *global,
                                 const char *name, const char *args, size_t len);
void loaded_provider_keep_result(void *ud, dsh_run_id run, const char *json, size_t len);

#endif

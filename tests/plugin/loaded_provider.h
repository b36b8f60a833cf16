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
};

/* Loads config (a provider row's YAML, each line ending in a newline; the launch is added); fails
 * the test on error. */
void loaded_provider_open(struct loaded_provider *lp, const char *config);
void loaded_provider_close(struct loaded_provider *lp);

#endif

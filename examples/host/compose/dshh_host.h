/* The services and the provider instance of a composition (dshh_host.c, the only writer of
 * struct dshh_host). */
#ifndef DSHH_HOST_H
#define DSHH_HOST_H

#include "dsh_provider.h"
#include "dshh_loop.h"
#include "dshh_profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dshh_host {
    struct dshh_loop *loop;
    struct dsh_linux_services *services_impl;
    struct svc_values *svc_values; /* option strings the services may borrow */
    struct dsh_services services;
    struct dsh_logger logger;
    void *dl;
    const struct dsh_provider *provider;
    struct dsh_instance *instance;
    const char *provider_path;
    bool demo_tools;   /* the demo-tools row is enabled */
    struct dshh_native_set *native; /* the enabled dsh-native-bindings rows (dshh_native_bindings.h) */
    bool verbose;
    int dispatch_error; /* last negative status of dispatch(), reported once */
    char *kernel_facts; /* the services' "linux services: ..." line (dsh doctor explains with it) */
    char *identity_note; /* the first "the program runs as the host's uid: " reason of the services since cleared */
};

/* Builds services and loads the provider row; verbose logs the services and the provider to
 * stderr; initializers (--initializer FILE, in order) are registered after the load. Prints a
 * diagnostic and returns -1 on error. */
int dshh__host_open(struct dshh_host *host, const struct dshh_profile *profile, bool verbose,
                    const char *const *initializers, size_t ninitializers);
/* Whether a row of profile (enabled or not) is a provider row rather than a service row. */
bool dshh__profile_names_provider(const struct dshh_profile *profile);
/* Unloads the provider now (blocking: runs are cancelled and get their on_done first), for a
 * command whose callbacks point at state that ends before dshh__host_close; a second call does nothing. */
void dshh__host_unload(struct dshh_host *host);
/* Unloads the provider (delivering pending callbacks), then frees services and the loop. */
void dshh__host_close(struct dshh_host *host);
/* Answers a call of a native namespace through reply(), on this thread; false when global names
 * none (nothing is answered). */
bool dshh__host_native_call(struct dshh_host *host, dsh_run_id run, uint64_t call,
                            const char *global, const char *name, const char *args_json,
                            size_t args_len);

#endif

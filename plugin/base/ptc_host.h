/* What every layer of one provider instance shares: the validated configuration, the services
 * the host lent at load(), the private event loop, and the host's logger. */
#ifndef PTC_HOST_H
#define PTC_HOST_H

#include "dsh_config.h"
#include "dsh_services.h"
#include "ptc_loop.h"

#define PTC_NAME "@deepseek-ai/dsh-ptc-runtime-node"
#define PTC_VERSION "0.1.0"

struct ptc_language;

struct ptc_host {
    const struct ptc_language *language; /* language.h: what the provider's entry file runs */
    struct ptc_config config;
    struct dsh_services services; /* copy of the bundle; vtables are borrowed */
    struct ptc_loop loop;
};

/* Checks and copies the services (an older minor host may pass shorter structs), parses the
 * configuration row with the language's parser and creates the loop. 0, or a status with err
 * filled. */
int ptc__host_init(struct ptc_host *host, const struct ptc_language *language, const char *config_yaml, size_t config_len,
                   const struct dsh_services *services, struct dsh_error *err);
void ptc__host_destroy(struct ptc_host *host);

/* Fills err (may be NULL) and returns code. */
#define ptc__fail dsh_error_setf
/* To the host's logger, when it lent one. */
void ptc__log(const struct ptc_host *host, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif

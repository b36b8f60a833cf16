/* See ptc_host.h. */
#include "ptc_host.h"
#include "language.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ptc__log(const struct ptc_host *host, int level, const char *fmt, ...)
{
    const struct dsh_logger *logger = host->services.logger;
    if (!DSH_HAS(logger, log))
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    logger->log(logger->ctx, level, text);
}

/* A service is usable when it speaks this major and its struct reaches the last method the
 * runtime calls: a host of an older minor passes a shorter struct (ABI.md, Versioning). */
#define SERVICE_OK(service, last) ((service) && (service)->abi_major == DSH_ABI_MAJOR && DSH_HAS(service, last))

int ptc__host_init(struct ptc_host *host, const struct ptc_language *language, const char *config_yaml, size_t config_len,
                   const struct dsh_services *services, struct dsh_error *err)
{
    memset(host, 0, sizeof *host);
    /* The bundle itself: 1.0 hosts may end it before the `runtime` field. */
    if (!DSH_HAS(services, logger))
        return ptc__fail(err, -EINVAL, "load needs a services bundle and ret_instance");
    if (!SERVICE_OK(services->fs, map_host_path) || !SERVICE_OK(services->subprocess, release) ||
        !SERVICE_OK(services->sandbox, release_confinement) || !SERVICE_OK(services->sandbox_policy, unsubscribe))
        return ptc__fail(err, DSH_E_CONFIG_INVALID,
                         "the runtime requires the fs, subprocess, sandbox and sandboxPolicy services (ABI v%d)",
                         DSH_ABI_MAJOR);
    /* Only the part the host filled; fields it does not know stay NULL. */
    size_t known = services->struct_size < sizeof host->services ? services->struct_size : sizeof host->services;
    memcpy(&host->services, services, known);
    host->services.struct_size = (uint32_t)known;
    struct dsh_diagnostics diags;
    host->language = language;
    int rc = language->parse_config(config_yaml ? config_yaml : "", config_yaml ? config_len : 0, &host->config,
                                    &diags);
    if (rc < 0) {
        char *text = NULL;
        dsh_diagnostics_join(&diags, &text);
        ptc__fail(err, DSH_E_CONFIG_INVALID, "%s", text ? text : "invalid configuration");
        free(text);
        dsh_diagnostics_release(&diags);
        return DSH_E_CONFIG_INVALID;
    }
    dsh_diagnostics_release(&diags);
    if ((rc = ptc__loop_init(&host->loop)) < 0) {
        ptc_config_destroy(&host->config);
        return ptc__fail(err, rc, "cannot create the event loop: %s", dsh_strerror(rc));
    }
    return 0;
}

void ptc__host_destroy(struct ptc_host *host)
{
    ptc__loop_destroy(&host->loop);
    ptc_config_destroy(&host->config);
}

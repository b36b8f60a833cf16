/* The helpers every service of the library uses: the mode names and the logger. */
#include "services_config.h"

#include <stdio.h>
#include <string.h>

bool dshx__mode_valid(const char *mode)
{
    return mode &&
           (strcmp(mode, DSHX_MODE_READ_ONLY) == 0 ||
            strcmp(mode, DSHX_MODE_WORKSPACE_WRITE) == 0 || strcmp(mode, DSHX_MODE_DANGER) == 0);
}

void dshx__log(const struct dshx__config *cfg, int level, const char *fmt, ...)
{
    if (!cfg->logger || !cfg->logger->log)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cfg->logger->log(cfg->logger->ctx, level, msg);
}

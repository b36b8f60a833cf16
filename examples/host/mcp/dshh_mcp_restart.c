/* When a downstream MCP server that exited is started again (examples/host/README.md,
 * "Restarts"): the first restart at once, then a doubling delay up to a cap; a life that lasted
 * long enough clears the count, too many counted lives in a row give up. */
#include "dshh_mcp_restart.h"

#define STABLE_MS 30000
#define FIRST_BACKOFF_MS 100
#define MAX_BACKOFF_MS 5000

int32_t dshh__mcp_restart_delay(int *strikes, int64_t uptime_ms)
{
    *strikes = uptime_ms >= STABLE_MS ? 1 : *strikes + 1;
    if (*strikes > DSHH_MCP_MAX_RESTARTS)
        return -1;
    if (*strikes == 1)
        return 0;
    int64_t delay = (int64_t)FIRST_BACKOFF_MS << (*strikes - 2);
    return (int32_t)(delay < MAX_BACKOFF_MS ? delay : MAX_BACKOFF_MS);
}

/* Unit level: the restart policy of a downstream MCP server (examples/host/README.md, "Restarts"):
 * delays, the cap, the 30 s that clear the count, and when dsh gives up. */
#include "dshh_mcp_restart.h"

#include <criterion/criterion.h>

Test(mcp_restart, first_at_once_then_doubling_to_the_cap_then_give_up)
{
    static const int32_t want[] = {0, 100, 200, 400, 800, 1600, 3200, 5000};
    cr_assert_eq(DSHH_MCP_MAX_RESTARTS, sizeof want / sizeof *want);
    int strikes = 0;
    for (int i = 0; i < DSHH_MCP_MAX_RESTARTS; i++) {
        cr_expect_eq(dshh__mcp_restart_delay(&strikes, 10), want[i], "restart %d", i + 1);
        cr_expect_eq(strikes, i + 1);
    }
    cr_expect_eq(dshh__mcp_restart_delay(&strikes, 10), -1, "the 9th early end gives up");
    cr_expect_eq(dshh__mcp_restart_delay(&strikes, 0), -1, "and stays given up");
}

Test(mcp_restart, a_life_of_30_s_clears_the_count)
{
    int strikes = 0;
    for (int i = 0; i < DSHH_MCP_MAX_RESTARTS; i++)
        dshh__mcp_restart_delay(&strikes, 0);
    cr_expect_eq(dshh__mcp_restart_delay(&strikes, 30000), 0, "restarted at once");
    cr_expect_eq(strikes, 1);
    cr_expect_eq(dshh__mcp_restart_delay(&strikes, 29999), 100, "control: just under 30 s counts");
    cr_expect_eq(strikes, 2);
}

Test(mcp_restart, a_start_that_never_became_ready_counts)
{
    int strikes = 3;
    cr_expect_eq(dshh__mcp_restart_delay(&strikes, 0), 400);
    cr_expect_eq(strikes, 4);
}

/* How an environment that ended unexpectedly is described in a worker-exit result: the observed
 * exit status, a control-channel read failure next to it, and the stderr tail. */
#include "env_private.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static struct ptc_env env;
static const struct ptc_env_events a_consumer; /* any attached consumer: the description only asks whether one was */

static char *described(void)
{
    char *text = ptc__env_exit_description(&env);
    cr_assert_not_null(text);
    return text;
}

static void fresh(void)
{
    memset(&env, 0, sizeof env);
    env.events = &a_consumer;
    env.quiescent = true;
}

Test(exit_description, process_exit_during_a_run_names_the_status, .init = fresh)
{
    env.exit_status.exited = true;
    env.exit_status.code = 5;
    char *text = described();
    cr_expect_str_eq(text, "the Node process exited before completing (exit code 5)");
    free(text);
}

Test(exit_description, control_channel_end_before_exit_names_the_signal, .init = fresh)
{
    env.control_lost = true;
    env.exit_status.signal = SIGTERM;
    char *text = described();
    cr_expect_str_eq(text, "the control channel closed before the result (signal TERM)");
    free(text);
}

Test(exit_description, a_control_read_failure_stays_next_to_the_exit_status, .init = fresh)
{
    env.control_lost = true;
    env.control_error = -EIO;
    env.exit_status.exited = true;
    env.exit_status.code = 5;
    memcpy(env.stderr_tail, "oops\n", 5);
    env.stderr_tail_len = 5;
    char *text = described();
    cr_expect_str_eq(text, "the Node process exited before completing (exit code 5); control channel: Input/output error; stderr: oops\n");
    free(text);
}

/* Control-channel framing over a real socketpair: line splitting, bounds, queue limits. */
#include "control.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int pair[2];

static void setup(void)
{
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair), 0);
}

static void teardown(void)
{
    close(pair[1]);
}

TestSuite(control, .init = setup, .fini = teardown, .timeout = 30);

Test(control, splits_lines_across_reads)
{
    struct ptc_control c;
    ptc__control_init(&c, pair[0], 64);
    char *line;
    size_t len;
    cr_assert_eq(write(pair[1], "{\"a\":1}\n{\"b\"", 12), 12);
    cr_assert_eq(ptc__control_read(&c), 0);
    cr_assert_eq(ptc__control_next_line(&c, &line, &len), 1);
    cr_expect_str_eq(line, "{\"a\":1}");
    cr_expect_eq(ptc__control_next_line(&c, &line, &len), 0);
    cr_expect(ptc__control_has_partial(&c));
    cr_assert_eq(write(pair[1], ":2}\n", 4), 4);
    cr_assert_eq(ptc__control_read(&c), 0);
    cr_assert_eq(ptc__control_next_line(&c, &line, &len), 1);
    cr_expect_str_eq(line, "{\"b\":2}");
    cr_expect_not(ptc__control_has_partial(&c));
    ptc__control_destroy(&c);
}

Test(control, oversized_line_is_rejected)
{
    struct ptc_control c;
    ptc__control_init(&c, pair[0], 8);
    char *line;
    size_t len;
    cr_assert_eq(write(pair[1], "0123456789\n", 11), 11);
    int rc = ptc__control_read(&c);
    if (rc == 0)
        rc = ptc__control_next_line(&c, &line, &len);
    cr_expect_eq(rc, -E2BIG);
    ptc__control_destroy(&c);
}

Test(control, endless_line_without_newline_is_rejected_early)
{
    struct ptc_control c;
    ptc__control_init(&c, pair[0], 16);
    char junk[64];
    memset(junk, 'x', sizeof junk);
    cr_assert_eq(write(pair[1], junk, sizeof junk), (ssize_t)sizeof junk);
    cr_expect_eq(ptc__control_read(&c), -E2BIG);
    ptc__control_destroy(&c);
}

Test(control, eof_is_reported)
{
    struct ptc_control c;
    ptc__control_init(&c, pair[0], 64);
    close(pair[1]);
    pair[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    cr_assert_eq(ptc__control_read(&c), 0);
    cr_expect(c.eof);
    ptc__control_destroy(&c);
}

Test(control, queue_is_bounded_and_flushes)
{
    struct ptc_control c;
    ptc__control_init(&c, pair[0], 10);
    cr_expect_eq(ptc__control_queue(&c, "12345678901", 11), -E2BIG, "frame over the bound");
    cr_expect_eq(ptc__control_queue(&c, "12345", 5), 0);
    cr_expect_eq(ptc__control_queue(&c, "12345", 5), -E2BIG, "queue would exceed the bound");
    cr_expect_eq(ptc__control_flush(&c), 1);
    char buf[16] = {0};
    cr_expect_eq(read(pair[1], buf, sizeof buf), 6);
    cr_expect_str_eq(buf, "12345\n");
    ptc__control_destroy(&c);
}

Test(control, flush_to_closed_peer_fails_without_sigpipe)
{
    struct ptc_control c;
    ptc__control_init(&c, pair[0], 64);
    close(pair[1]);
    pair[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    cr_expect_eq(ptc__control_queue(&c, "x", 1), 0);
    cr_expect_eq(ptc__control_flush(&c), -EPIPE);
    ptc__control_destroy(&c);
}

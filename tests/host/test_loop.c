/* examples/host/base/dshh_loop.c: one-shot timers kept in due order beside the fds (the order
 * they fire in, cancellation, a timer that keeps re-adding itself, deferred completions that run
 * even when the loop is freed first). */
#include "dshh_loop.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <unistd.h>

struct record {
    struct dshh_loop *loop;
    char order[16];
    size_t n;
    int quit_after;
};

static void note(struct record *r, char c)
{
    r->order[r->n++] = c;
    if ((int)r->n == r->quit_after)
        dshh__loop_quit(r->loop);
}

static struct record *rec;
static void fire_a(void *arg) { (void)arg; note(rec, 'a'); }
static void fire_b(void *arg) { (void)arg; note(rec, 'b'); }
static void fire_c(void *arg) { (void)arg; note(rec, 'c'); }

Test(loop, timers_fire_in_due_order_and_equal_ones_in_the_order_added)
{
    struct record r = {.quit_after = 3};
    rec = &r;
    cr_assert_eq(dshh__loop_new(&r.loop), 0);
    cr_assert_gt(dshh__loop_add_timer(r.loop, 30, fire_c, NULL), 0);
    cr_assert_gt(dshh__loop_add_timer(r.loop, 0, fire_a, NULL), 0);
    cr_assert_gt(dshh__loop_add_timer(r.loop, 0, fire_b, NULL), 0);
    cr_assert_eq(dshh__loop_run(r.loop), 0);
    cr_assert_str_eq(r.order, "abc");
    dshh__loop_free(r.loop);
}

Test(loop, a_cancelled_timer_never_fires)
{
    struct record r = {.quit_after = 1};
    rec = &r;
    cr_assert_eq(dshh__loop_new(&r.loop), 0);
    int64_t a = dshh__loop_add_timer(r.loop, 0, fire_a, NULL);
    cr_assert_gt(dshh__loop_add_timer(r.loop, 20, fire_b, NULL), 0);
    dshh__loop_cancel_timer(r.loop, a);
    dshh__loop_cancel_timer(r.loop, a); /* a second time: nothing */
    cr_assert_eq(dshh__loop_run(r.loop), 0);
    cr_assert_str_eq(r.order, "b");
    dshh__loop_free(r.loop);
}

/* A timer that re-adds itself with no delay must not keep the loop from its fds. */
struct spinner {
    struct dshh_loop *loop;
    int spins;
    bool fd_seen;
};

static void spin(void *arg)
{
    struct spinner *s = arg;
    s->spins++;
    if (!s->fd_seen)
        dshh__loop_add_timer(s->loop, 0, spin, s);
}

static void on_readable(void *arg, uint32_t events)
{
    (void)events;
    struct spinner *s = arg;
    s->fd_seen = true;
    dshh__loop_quit(s->loop);
}

Test(loop, a_timer_re_adding_itself_leaves_room_for_fds)
{
    struct spinner s = {0};
    int p[2];
    cr_assert_eq(pipe(p), 0);
    cr_assert_eq(write(p[1], "x", 1), 1);
    cr_assert_eq(dshh__loop_new(&s.loop), 0);
    cr_assert_gt(dshh__loop_add_timer(s.loop, 0, spin, &s), 0);
    cr_assert_eq(dshh__loop_add_fd(s.loop, p[0], EPOLLIN, on_readable, &s), 0);
    cr_assert_eq(dshh__loop_run(s.loop), 0);
    cr_assert(s.fd_seen);
    cr_assert_lt(s.spins, 3, "the fd waited for %d turns of the timer", s.spins);
    dshh__loop_remove_fd(s.loop, p[0]);
    dshh__loop_free(s.loop);
    close(p[0]);
    close(p[1]);
}

static void deferred(void *arg)
{
    (*(int *)arg)++;
}

Test(loop, deferred_completions_run_when_the_loop_is_freed_first_and_plain_timers_do_not)
{
    struct dshh_loop *loop;
    int completions = 0, plain = 0;
    cr_assert_eq(dshh__loop_new(&loop), 0);
    cr_assert_eq(dshh__loop_defer(loop, 60000, deferred, &completions), 0);
    cr_assert_gt(dshh__loop_add_timer(loop, 60000, deferred, &plain), 0);
    dshh__loop_free(loop);
    cr_assert_eq(completions, 1);
    cr_assert_eq(plain, 0);
}

static void cancel_self(void *arg)
{
    struct record *r = arg;
    note(r, 'x');
    dshh__loop_cancel_timer(r->loop, 1); /* its own id: already unlinked */
    dshh__loop_quit(r->loop);
}

Test(loop, a_timer_cancelling_itself_from_its_callback_is_harmless)
{
    struct record r = {0};
    cr_assert_eq(dshh__loop_new(&r.loop), 0);
    cr_assert_eq(dshh__loop_add_timer(r.loop, 0, cancel_self, &r), 1);
    cr_assert_eq(dshh__loop_run(r.loop), 0);
    cr_assert_str_eq(r.order, "x");
    dshh__loop_free(r.loop);
}

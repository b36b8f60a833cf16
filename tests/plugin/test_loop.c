/* The loop (plugin/base/ptc_loop.c): its timers, armed in microseconds, and its deferred calls:
 * order, the bound of one dispatch, cancel, a callback that frees the owner of a later call or its
 * own, re-queuing a queued call, and that queuing allocates nothing, so a deferred call can no
 * longer be lost to an allocation failure (the allocator's fault-injection double below fails
 * every allocation while the loop is used). The ASan build of the C suites turns any read of a
 * freed owner into a failure here. */
#include "ptc_loop.h"

#include <criterion/criterion.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>

/* ---- fault-injection double of the allocator ----------------------------------------------------
 * Linked with -Wl,--wrap=calloc,--wrap=malloc,--wrap=realloc: while `failing` is set, every
 * allocation made by this executable's own objects (this file and the loop it links) fails and is
 * counted. Nothing of a real allocator can be made to fail on purpose. */
void *__real_calloc(size_t n, size_t size);
void *__real_malloc(size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_realloc(void *p, size_t size);

/* volatile: the compiler may assume an allocator it knows touches no global of this file. */
static volatile bool failing;
static volatile unsigned refused;

void *__wrap_calloc(size_t n, size_t size)
{
    if (failing) {
        refused++;
        return NULL;
    }
    return __real_calloc(n, size);
}

void *__wrap_malloc(size_t size)
{
    if (failing) {
        refused++;
        return NULL;
    }
    return __real_malloc(size);
}

void *__wrap_realloc(void *p, size_t size)
{
    if (failing) {
        refused++;
        return NULL;
    }
    return __real_realloc(p, size);
}

/* ---- probes: owners of one deferred call each ----------------------------------------------- */

static struct ptc_loop loop;
static char ran[32]; /* the names of the calls run, in order */

struct probe {
    struct ptc_deferred call;
    char name;
    struct probe *other; /* what its callback acts on */
};

static void note(char name)
{
    size_t n = strlen(ran);
    cr_assert_lt(n, sizeof ran - 1);
    ran[n] = name;
}

static struct probe *of(struct ptc_deferred *call)
{
    return ptc__container_of(call, struct probe, call);
}

static void record(struct ptc_deferred *call)
{
    note(of(call)->name);
}

static void record_upper(struct ptc_deferred *call)
{
    note((char)(of(call)->name - 'a' + 'A'));
}

static void record_and_queue_other(struct ptc_deferred *call)
{
    note(of(call)->name);
    ptc__defer(&loop, &of(call)->other->call, record);
}

static void record_and_queue_self(struct ptc_deferred *call)
{
    note(of(call)->name);
    ptc__defer(&loop, call, record);
}

/* Frees the other probe the way an owner goes away: its call cancelled, then its memory. */
static void record_and_free_other(struct ptc_deferred *call)
{
    note(of(call)->name);
    ptc__defer_cancel(&of(call)->other->call);
    free(of(call)->other);
}

static void record_and_free_self(struct ptc_deferred *call)
{
    note(of(call)->name);
    free(of(call));
}

static struct probe *new_probe(char name)
{
    struct probe *p = calloc(1, sizeof *p);
    cr_assert(p);
    p->name = name;
    return p;
}

static bool fd_readable(void)
{
    struct pollfd pfd = {.fd = loop.epoll_fd, .events = POLLIN};
    return poll(&pfd, 1, 0) == 1;
}

static void setup(void)
{
    memset(ran, 0, sizeof ran);
    cr_assert_eq(ptc__loop_init(&loop), 0);
}

static void teardown(void)
{
    ptc__loop_destroy(&loop);
}

TestSuite(deferred, .init = setup, .fini = teardown, .timeout = 30);

Test(deferred, calls_run_in_the_order_queued)
{
    struct probe a = {.name = 'a'}, b = {.name = 'b'}, c = {.name = 'c'};
    ptc__defer(&loop, &b.call, record);
    ptc__defer(&loop, &a.call, record);
    ptc__defer(&loop, &c.call, record);
    cr_assert(fd_readable(), "queued work makes the instance fd readable");
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "bac");
    cr_expect_not(fd_readable(), "nothing is left to run");
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "bac", "each call ran once");
}

Test(deferred, a_call_queued_while_draining_runs_in_the_next_dispatch)
{
    struct probe b = {.name = 'b'}, a = {.name = 'a', .other = &b}, s = {.name = 's'};
    ptc__defer(&loop, &a.call, record_and_queue_other);
    ptc__defer(&loop, &s.call, record_and_queue_self);
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "as", "one dispatch runs only the calls queued before it");
    cr_expect(fd_readable(), "the host is woken again for the calls queued meanwhile");
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "asbs");
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "asbs");
}

Test(deferred, a_cancelled_call_does_not_run)
{
    struct probe a = {.name = 'a'}, b = {.name = 'b'}, c = {.name = 'c'}, never = {.name = 'n'};
    ptc__defer(&loop, &a.call, record);
    ptc__defer(&loop, &b.call, record);
    ptc__defer(&loop, &c.call, record);
    ptc__defer_cancel(&b.call);
    ptc__defer_cancel(&b.call);     /* twice: the second is a no-op */
    ptc__defer_cancel(&never.call); /* never queued: a no-op */
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "ac");
    /* A cancelled call can be queued again. */
    ptc__defer(&loop, &b.call, record);
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "acb");
}

Test(deferred, a_callback_that_frees_the_owner_of_the_next_call_never_runs_it)
{
    struct probe *next = new_probe('n'), *first = new_probe('f'), last = {.name = 'l'};
    first->other = next;
    ptc__defer(&loop, &first->call, record_and_free_other);
    ptc__defer(&loop, &next->call, record);
    ptc__defer(&loop, &last.call, record);
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "fl", "the freed owner's call was dropped and the batch went on");
    free(first);
}

Test(deferred, a_callback_may_free_its_own_owner)
{
    struct probe *self = new_probe('s'), after = {.name = 'a'};
    ptc__defer(&loop, &self->call, record_and_free_self);
    ptc__defer(&loop, &after.call, record);
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "sa");
}

Test(deferred, requeuing_a_queued_call_keeps_its_place_and_runs_it_once_with_the_latest_fn)
{
    struct probe a = {.name = 'a'}, b = {.name = 'b'};
    ptc__defer(&loop, &a.call, record);
    ptc__defer(&loop, &b.call, record);
    ptc__defer(&loop, &a.call, record_upper);
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "Ab");
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "Ab");
}

Test(deferred, requeuing_a_call_still_waiting_in_the_running_batch_runs_it_once_in_that_batch)
{
    struct probe b = {.name = 'b'}, a = {.name = 'a', .other = &b};
    ptc__defer(&loop, &a.call, record_and_queue_other); /* queues b, already waiting behind it */
    ptc__defer(&loop, &b.call, record_upper);
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "ab", "b ran in this batch, with the fn it was queued with last");
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "ab");
}

Test(deferred, queuing_and_running_allocate_nothing_so_no_call_is_lost_to_an_allocation_failure)
{
    struct probe b = {.name = 'b'}, a = {.name = 'a', .other = &b}, c = {.name = 'c'}, d = {.name = 'd'};
    failing = true;
    refused = 0;
    /* Control: the double does fail this executable's allocations. */
    void *volatile control = calloc(1, sizeof(struct ptc_deferred));
    bool control_failed = control == NULL && refused == 1;
    refused = 0;
    ptc__defer(&loop, &a.call, record_and_queue_other);
    ptc__defer(&loop, &c.call, record);
    ptc__defer(&loop, &d.call, record);
    ptc__defer_cancel(&c.call);
    int first = ptc__loop_dispatch(&loop), second = ptc__loop_wait(&loop, 0);
    unsigned refused_by_loop = refused;
    failing = false;
    cr_assert(control_failed, "the fault-injection double is in effect");
    cr_expect_eq(first, 0);
    cr_expect_eq(second, 0);
    cr_expect_str_eq(ran, "adb", "every call queued while allocations fail ran");
    cr_expect_eq(refused_by_loop, 0, "the loop asked for memory %u times", refused_by_loop);
}

Test(deferred, destroying_the_loop_leaves_the_calls_still_queued_unqueued)
{
    struct probe a = {.name = 'a'}, b = {.name = 'b'};
    ptc__defer(&loop, &a.call, record);
    ptc__defer(&loop, &b.call, record);
    ptc__loop_destroy(&loop);
    cr_expect_null(a.call.next);
    cr_expect_null(b.call.next);
    ptc__defer_cancel(&a.call); /* the owner going away later touches nothing of the loop */
    cr_assert_eq(ptc__loop_init(&loop), 0);
    ptc__defer(&loop, &b.call, record);
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_str_eq(ran, "b");
}

/* ---- timers ------------------------------------------------------------------------------------ */

static int fired;

static void count_firing(struct ptc_timer *timer)
{
    (void)timer;
    fired++;
}

TestSuite(timer, .init = setup, .fini = teardown, .timeout = 30);

/* Freeze polls wait 50 us first (plugin/env/env.c): a timer counts in microseconds, and the clock
 * it counts on is ptc__loop_now_ns's. */
Test(timer, a_timer_armed_in_microseconds_fires_once_after_its_delay)
{
    struct ptc_timer timer;
    fired = 0;
    cr_assert_eq(ptc__timer_init(&loop, &timer, count_firing), 0);
    uint64_t armed = ptc__loop_now_ns();
    cr_assert_eq(ptc__timer_arm_us(&timer, 250), 0);
    while (fired == 0) {
        cr_assert_geq(ptc__loop_wait(&loop, 1000), 0);
        cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    }
    uint64_t waited_ns = ptc__loop_now_ns() - armed;
    cr_expect_geq(waited_ns, 250000u, "fired after %llu ns", (unsigned long long)waited_ns);
    cr_assert_eq(ptc__loop_dispatch(&loop), 0);
    cr_expect_eq(fired, 1, "a one-shot timer fires once");
    ptc__timer_destroy(&loop, &timer);
}

Test(timer, arming_with_zero_disarms)
{
    struct ptc_timer timer;
    fired = 0;
    cr_assert_eq(ptc__timer_init(&loop, &timer, count_firing), 0);
    cr_assert_eq(ptc__timer_arm_us(&timer, 60u * 1000000u), 0);
    struct itimerspec left;
    cr_assert_eq(timerfd_gettime(timer.watch.fd, &left), 0);
    cr_expect(left.it_value.tv_sec > 0, "armed");
    cr_assert_eq(ptc__timer_arm_us(&timer, 0), 0);
    cr_assert_eq(timerfd_gettime(timer.watch.fd, &left), 0);
    cr_expect(left.it_value.tv_sec == 0 && left.it_value.tv_nsec == 0, "disarmed");
    ptc__timer_destroy(&loop, &timer);
}

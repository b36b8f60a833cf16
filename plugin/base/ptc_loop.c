/* epoll-based loop behind the instance fd. See ptc_loop.h. */
#include "ptc_loop.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int ptc__loop_init(struct ptc_loop *loop)
{
    loop->queue.prev = loop->queue.next = &loop->queue;
    loop->woken = loop->in_watches = false;
    loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epoll_fd < 0)
        return -errno;
    loop->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (loop->wake_fd < 0) {
        int err = -errno;
        close(loop->epoll_fd);
        return err;
    }
    /* data.ptr NULL marks the wake fd */
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, loop->wake_fd, &ev) < 0) {
        int err = -errno;
        close(loop->wake_fd);
        close(loop->epoll_fd);
        return err;
    }
    return 0;
}

void ptc__loop_destroy(struct ptc_loop *loop)
{
    /* Calls still queued belong to owners that outlive the loop: they are left unqueued. */
    while (loop->queue.next != &loop->queue)
        ptc__defer_cancel(loop->queue.next);
    if (loop->wake_fd >= 0)
        close(loop->wake_fd);
    if (loop->epoll_fd >= 0)
        close(loop->epoll_fd);
    loop->wake_fd = loop->epoll_fd = -1;
}

int ptc__watch_add(struct ptc_loop *loop, struct ptc_watch *watch, int fd, uint32_t events,
                   ptc_watch_fn fn)
{
    watch->fd = fd;
    watch->fn = fn;
    struct epoll_event ev = {.events = events, .data.ptr = watch};
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
        return -errno;
    watch->armed = true;
    return 0;
}

int ptc__watch_modify(struct ptc_loop *loop, struct ptc_watch *watch, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = watch};
    if (!watch->armed)
        return -EINVAL;
    return epoll_ctl(loop->epoll_fd, EPOLL_CTL_MOD, watch->fd, &ev) < 0 ? -errno : 0;
}

void ptc__watch_remove(struct ptc_loop *loop, struct ptc_watch *watch)
{
    if (!watch->armed)
        return;
    epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, watch->fd, NULL);
    watch->armed = false;
}

static void timer_ready(struct ptc_watch *watch, uint32_t events)
{
    (void)events;
    struct ptc_timer *timer = ptc__container_of(watch, struct ptc_timer, watch);
    uint64_t expirations;
    if (read(watch->fd, &expirations, sizeof expirations) != sizeof expirations)
        return; /* spurious: disarmed between epoll_wait and now */
    timer->fn(timer);
}

int ptc__timer_init(struct ptc_loop *loop, struct ptc_timer *timer, void (*fn)(struct ptc_timer *))
{
    timer->fn = fn;
    timer->watch.armed = false;
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (fd < 0) {
        timer->watch.fd = -1;
        return -errno;
    }
    int rc = ptc__watch_add(loop, &timer->watch, fd, EPOLLIN, timer_ready);
    if (rc < 0) {
        close(fd);
        timer->watch.fd = -1;
    }
    return rc;
}

int ptc__timer_arm(struct ptc_timer *timer, uint64_t delay_ms)
{
    return ptc__timer_arm_us(timer, delay_ms * 1000);
}

int ptc__timer_arm_us(struct ptc_timer *timer, uint64_t delay_us)
{
    struct itimerspec spec = {0};
    spec.it_value.tv_sec = (time_t)(delay_us / 1000000);
    spec.it_value.tv_nsec = (long)(delay_us % 1000000) * 1000L;
    return timerfd_settime(timer->watch.fd, 0, &spec, NULL) < 0 ? -errno : 0;
}

uint64_t ptc__loop_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

void ptc__timer_destroy(struct ptc_loop *loop, struct ptc_timer *timer)
{
    if (timer->watch.fd < 0)
        return;
    ptc__watch_remove(loop, &timer->watch);
    close(timer->watch.fd);
    timer->watch.fd = -1;
}

static bool has_deferred(const struct ptc_loop *loop)
{
    return loop->queue.next != &loop->queue;
}

void ptc__defer(struct ptc_loop *loop, struct ptc_deferred *call, ptc_deferred_fn fn)
{
    call->fn = fn;
    if (call->next)
        return;
    /* The wake fd stays readable until run_deferred reads it: only the first call needs it. */
    bool wake = !has_deferred(loop);
    call->prev = loop->queue.prev;
    call->next = &loop->queue;
    call->prev->next = call;
    loop->queue.prev = call;
    /* Deferred by a watch, the call runs at the end of this dispatch: waking the loop would only
     * cost a write and a read of the wake fd per deferred call (one per run, its delivery). */
    if (wake && !loop->in_watches) {
        uint64_t one = 1;
        (void)!write(loop->wake_fd, &one, sizeof one);
        loop->woken = true;
    }
}

void ptc__defer_cancel(struct ptc_deferred *call)
{
    if (!call->next)
        return;
    call->prev->next = call->next;
    call->next->prev = call->prev;
    call->prev = call->next = NULL;
}

static void run_deferred(struct ptc_loop *loop)
{
    if (loop->woken) {
        uint64_t count;
        (void)!read(loop->wake_fd, &count, sizeof count);
        loop->woken = false;
    }
    if (!has_deferred(loop))
        return;
    /* Calls queued while this batch runs wait for the next dispatch, so one dispatch stays
     * bounded. The batch is a list of its own that ptc__defer_cancel unlinks from like the
     * queue, and each call leaves it before it runs: a callback that frees the owner of a later
     * call cancels that call, and nothing of the batch is read after a callback but its head. */
    struct ptc_deferred batch = {.prev = loop->queue.prev, .next = loop->queue.next};
    batch.next->prev = batch.prev->next = &batch;
    loop->queue.prev = loop->queue.next = &loop->queue;
    while (batch.next != &batch) {
        struct ptc_deferred *call = batch.next;
        ptc__defer_cancel(call);
        call->fn(call);
    }
    /* A call queued by the batch found the queue empty and wrote the wake fd again. */
}

int ptc__loop_dispatch(struct ptc_loop *loop)
{
    struct epoll_event events[32];
    int n = epoll_wait(loop->epoll_fd, events, 32, 0);
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    bool wake = false;
    loop->in_watches = true;
    for (int i = 0; i < n; i++) {
        struct ptc_watch *watch = events[i].data.ptr;
        if (!watch) {
            wake = true;
            continue;
        }
        /* A callback earlier in this batch may have removed this watch; removal marks it
         * disarmed, and owners free watches only through deferred calls, so this read is safe. */
        if (watch->armed)
            watch->fn(watch, events[i].events);
    }
    loop->in_watches = false;
    if (wake || has_deferred(loop))
        run_deferred(loop);
    return 0;
}

int ptc__loop_wait(struct ptc_loop *loop, int timeout_ms)
{
    struct pollfd pfd = {.fd = loop->epoll_fd, .events = POLLIN};
    int n = poll(&pfd, 1, has_deferred(loop) ? 0 : timeout_ms);
    if (n < 0 && errno != EINTR)
        return -errno;
    return ptc__loop_dispatch(loop);
}

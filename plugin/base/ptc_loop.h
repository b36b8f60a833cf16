/* The plugin's private event loop: one epoll fd (the instance's get_fd), fd watches, one-shot
 * timers and a deferred-call queue. Everything runs on the host thread inside dispatch(). */
#ifndef PTC_LOOP_H
#define PTC_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct ptc_watch;
typedef void (*ptc_watch_fn)(struct ptc_watch *watch, uint32_t events);

/* Embed in the owner and recover it with container_of-style arithmetic. */
struct ptc_watch {
    int fd;
    bool armed;
    ptc_watch_fn fn;
};

struct ptc_timer {
    struct ptc_watch watch; /* timerfd */
    void (*fn)(struct ptc_timer *timer);
};

struct ptc_deferred;
typedef void (*ptc_deferred_fn)(struct ptc_deferred *call);

/* One pending call, embedded in its owner (one member per purpose that can be pending at the same
 * time) so queuing it never allocates and cannot fail. Zero-initialized it is not queued; prev
 * and next are NULL whenever it is not. */
struct ptc_deferred {
    struct ptc_deferred *prev, *next;
    ptc_deferred_fn fn;
};

struct ptc_loop {
    int epoll_fd;
    int wake_fd; /* eventfd: readable while deferred work is queued from outside a dispatch */
    bool woken;  /* wake_fd was written and not read since */
    bool in_watches; /* a dispatch runs watches: what they defer runs before it returns, unwoken */
    struct ptc_deferred queue; /* head of a circular list: the calls for the next dispatch */
};

int ptc__loop_init(struct ptc_loop *loop);
void ptc__loop_destroy(struct ptc_loop *loop);
/* Runs ready watches and deferred calls once; never blocks. */
int ptc__loop_dispatch(struct ptc_loop *loop);
/* Blocks up to timeout_ms for readiness (poll on epoll_fd). */
int ptc__loop_wait(struct ptc_loop *loop, int timeout_ms);

int ptc__watch_add(struct ptc_loop *loop, struct ptc_watch *watch, int fd, uint32_t events,
                   ptc_watch_fn fn);
int ptc__watch_modify(struct ptc_loop *loop, struct ptc_watch *watch, uint32_t events);
void ptc__watch_remove(struct ptc_loop *loop, struct ptc_watch *watch);

int ptc__timer_init(struct ptc_loop *loop, struct ptc_timer *timer, void (*fn)(struct ptc_timer *));
int ptc__timer_arm(struct ptc_timer *timer, uint64_t delay_ms); /* 0 disarms */
int ptc__timer_arm_us(struct ptc_timer *timer, uint64_t delay_us); /* 0 disarms */
/* CLOCK_MONOTONIC in nanoseconds, the clock timers count on. */
uint64_t ptc__loop_now_ns(void);
void ptc__timer_destroy(struct ptc_loop *loop, struct ptc_timer *timer);

/* Queues fn(call) for the next dispatch (recover the owner with ptc__container_of). A call that
 * is already queued keeps its place and runs once, with the latest fn. A call queued while a
 * dispatch runs its batch waits for the next dispatch unless it was still waiting in that batch. */
void ptc__defer(struct ptc_loop *loop, struct ptc_deferred *call, ptc_deferred_fn fn);
/* Unqueues call if it is queued (its owner is going away); a callback may cancel any call,
 * including the ones after it in the batch being run. */
void ptc__defer_cancel(struct ptc_deferred *call);

#define ptc__container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#endif

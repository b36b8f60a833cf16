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

struct ptc_deferred {
    struct ptc_deferred *next;
    void (*fn)(void *arg);
    void *arg;
};

struct ptc_loop {
    int epoll_fd;
    int wake_fd; /* eventfd: readable while deferred work is queued */
    struct ptc_deferred *head, *tail;
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
void ptc__timer_destroy(struct ptc_loop *loop, struct ptc_timer *timer);

/* Queues fn(arg) for the next dispatch. Returns 0 or -ENOMEM. */
int ptc__defer(struct ptc_loop *loop, void (*fn)(void *arg), void *arg);
/* Drops queued calls whose arg matches (the object is going away). */
void ptc__defer_cancel(struct ptc_loop *loop, void *arg);

#define ptc__container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#endif

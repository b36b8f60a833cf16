/* The single epoll loop of dsh: fds (provider fd, stdin) and one-shot timers. The timers are a
 * list in due order that sets epoll_wait's timeout: a run's deadline or a deferred completion
 * costs no file descriptor and no system call of its own. */
#include "dsh_list.h"
#include "dshh_loop.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct watch {
    int fd;
    bool dead; /* removed during this batch; freed after it */
    dshh_fd_fn fd_fn;
    void *arg;
    struct watch *next;
};

struct timer {
    int64_t id;
    uint64_t due_ns; /* CLOCK_MONOTONIC */
    bool must_run;   /* a service's deferred completion: runs even when the loop is freed first */
    dshh_timer_fn fn;
    void *arg;
    struct timer *next;
};

struct dshh_loop {
    int epfd;
    bool quit;
    int64_t next_timer;
    struct watch *watches;
    struct watch *graveyard; /* freed only between batches: a batch may still point at them */
    struct timer *timers;    /* by due time, then by id */
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int dshh__loop_new(struct dshh_loop **ret_loop)
{
    struct dshh_loop *loop = calloc(1, sizeof(*loop));
    if (!loop)
        return -ENOMEM;
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) {
        int e = -errno;
        free(loop);
        return e;
    }
    *ret_loop = loop;
    return 0;
}

static void bury(struct dshh_loop *loop, struct watch **link)
{
    struct watch *w = *link;
    DSH_LIST_UNLINK(link);
    epoll_ctl(loop->epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->dead = true;
    w->next = loop->graveyard;
    loop->graveyard = w;
}

static void free_graveyard(struct dshh_loop *loop)
{
    while (loop->graveyard) {
        struct watch *w = loop->graveyard;
        loop->graveyard = w->next;
        free(w);
    }
}

void dshh__loop_free(struct dshh_loop *loop)
{
    if (!loop)
        return;
    /* Deferred service completions own their argument: run them so nothing leaks (the services
     * are gone by now and only free what they had pending). */
    while (loop->timers) {
        struct timer *t = loop->timers;
        loop->timers = t->next;
        if (t->must_run)
            t->fn(t->arg);
        free(t);
    }
    while (loop->watches)
        bury(loop, &loop->watches);
    free_graveyard(loop);
    close(loop->epfd);
    free(loop);
}

static int add_watch(struct dshh_loop *loop, struct watch *w, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0)
        return -errno;
    w->next = loop->watches;
    loop->watches = w;
    return 0;
}

int dshh__loop_add_fd(struct dshh_loop *loop, int fd, uint32_t events, dshh_fd_fn fn, void *arg)
{
    struct watch *w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    *w = (struct watch){.fd = fd, .fd_fn = fn, .arg = arg};
    int rc = add_watch(loop, w, events);
    if (rc < 0)
        free(w);
    return rc;
}

int dshh__loop_watch_input(struct dshh_loop *loop, int fd, dshh_fd_fn fn, void *arg, const bool *eof)
{
    int rc = dshh__loop_add_fd(loop, fd, EPOLLIN, fn, arg);
    if (rc != -EPERM)
        return rc;
    /* A regular file cannot be polled: it never blocks, so read it to EOF right away. */
    while (!*eof)
        fn(arg, EPOLLIN);
    return 0;
}

void dshh__loop_remove_fd(struct dshh_loop *loop, int fd)
{
    DSH_LIST_FOREACH_LINK(link, &loop->watches)
        if ((*link)->fd == fd) {
            bury(loop, link);
            return;
        }
}

static struct timer *add_timer(struct dshh_loop *loop, uint32_t delay_ms, dshh_timer_fn fn, void *arg)
{
    struct timer *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    *t = (struct timer){.id = ++loop->next_timer,
                        .due_ns = now_ns() + (uint64_t)delay_ms * 1000000u,
                        .fn = fn,
                        .arg = arg};
    struct timer **link = &loop->timers;
    while (*link && (*link)->due_ns <= t->due_ns)
        link = &(*link)->next;
    t->next = *link;
    *link = t;
    return t;
}

int64_t dshh__loop_add_timer(struct dshh_loop *loop, uint32_t delay_ms, dshh_timer_fn fn, void *arg)
{
    struct timer *t = add_timer(loop, delay_ms, fn, arg);
    return t ? t->id : -ENOMEM;
}

void dshh__loop_cancel_timer(struct dshh_loop *loop, int64_t id)
{
    for (struct timer **link = &loop->timers; *link; link = &(*link)->next)
        if ((*link)->id == id) {
            struct timer *t = *link;
            *link = t->next;
            free(t);
            return;
        }
}

int dshh__loop_defer(void *loop, uint32_t delay_ms, void (*fn)(void *arg), void *arg)
{
    struct timer *t = add_timer(loop, delay_ms, fn, arg);
    if (!t)
        return -ENOMEM;
    t->must_run = true;
    return 0;
}

void dshh__loop_quit(struct dshh_loop *loop)
{
    loop->quit = true;
}

/* epoll_wait's timeout: until the first timer is due (rounded up to whole milliseconds), or -1. */
static int wait_ms(const struct dshh_loop *loop)
{
    if (!loop->timers)
        return -1;
    uint64_t now = now_ns();
    if (loop->timers->due_ns <= now)
        return 0;
    uint64_t ms = (loop->timers->due_ns - now + 999999u) / 1000000u;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Runs the timers due now that existed before this call (one a callback adds waits for the next
 * turn, so a timer re-adding itself cannot keep the loop from its fds). */
static void fire_due(struct dshh_loop *loop)
{
    uint64_t now = now_ns();
    int64_t last = loop->next_timer;
    for (struct timer **link = &loop->timers; *link && (*link)->due_ns <= now;) {
        struct timer *t = *link;
        if (t->id > last) {
            link = &t->next;
            continue;
        }
        *link = t->next; /* unlinked first: cancelling it from its callback finds nothing */
        t->fn(t->arg);
        free(t);
        link = &loop->timers; /* the callback may have changed the list */
    }
}

int dshh__loop_run(struct dshh_loop *loop)
{
    /* quit is sticky: a quit requested before the loop runs (a run that ended at once) holds. */
    while (!loop->quit) {
        struct epoll_event evs[16];
        int n = epoll_wait(loop->epfd, evs, 16, wait_ms(loop));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        for (int i = 0; i < n; i++) {
            struct watch *w = evs[i].data.ptr;
            if (!w->dead)
                w->fd_fn(w->arg, evs[i].events);
        }
        free_graveyard(loop);
        fire_due(loop);
    }
    return 0;
}

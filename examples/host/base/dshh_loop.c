/* The single epoll loop of dsh: fds (provider fd, stdin) and one-shot timers (timerfd). */
#include "dsh_list.h"
#include "dshh_loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

struct watch {
    int fd;
    bool is_timer;
    bool must_run; /* a service's deferred completion: runs even when the loop is freed first */
    bool dead; /* removed during this batch; freed after it */
    int64_t timer_id;
    dshh_fd_fn fd_fn;
    dshh_timer_fn timer_fn;
    void *arg;
    struct watch *next;
};

struct dshh_loop {
    int epfd;
    bool quit;
    int64_t next_timer;
    struct watch *watches;
    struct watch *graveyard; /* freed only between batches: a batch may still point at them */
};

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
    if (w->is_timer)
        close(w->fd);
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
    for (struct watch *w = loop->watches; w; w = w->next)
        if (w->must_run && !w->dead) {
            w->dead = true;
            w->timer_fn(w->arg);
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
        if (!(*link)->is_timer && (*link)->fd == fd) {
            bury(loop, link);
            return;
        }
}

int64_t dshh__loop_add_timer(struct dshh_loop *loop, uint32_t delay_ms, dshh_timer_fn fn, void *arg)
{
    struct watch *w = calloc(1, sizeof(*w));
    if (!w)
        return -ENOMEM;
    w->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (w->fd < 0) {
        int e = -errno;
        free(w);
        return e;
    }
    /* A zero it_value disarms a timerfd, so "now" is one nanosecond. */
    struct itimerspec its = {.it_value = {.tv_sec = delay_ms / 1000,
                                          .tv_nsec = (long)(delay_ms % 1000) * 1000000L + 1}};
    if (timerfd_settime(w->fd, 0, &its, NULL) < 0) {
        int e = -errno;
        close(w->fd);
        free(w);
        return e;
    }
    w->is_timer = true;
    w->timer_fn = fn;
    w->arg = arg;
    w->timer_id = ++loop->next_timer;
    int rc = add_watch(loop, w, EPOLLIN);
    if (rc < 0) {
        close(w->fd);
        free(w);
        return rc;
    }
    return w->timer_id;
}

void dshh__loop_cancel_timer(struct dshh_loop *loop, int64_t id)
{
    DSH_LIST_FOREACH_LINK(link, &loop->watches)
        if ((*link)->is_timer && (*link)->timer_id == id) {
            bury(loop, link);
            return;
        }
}

int dshh__loop_defer(void *loop, uint32_t delay_ms, void (*fn)(void *arg), void *arg)
{
    struct dshh_loop *l = loop;
    int64_t id = dshh__loop_add_timer(l, delay_ms, fn, arg);
    if (id < 0)
        return (int)id;
    for (struct watch *w = l->watches; w; w = w->next)
        if (w->timer_id == id)
            w->must_run = true;
    return 0;
}

void dshh__loop_quit(struct dshh_loop *loop)
{
    loop->quit = true;
}

static void fire_timer(struct dshh_loop *loop, struct watch *w)
{
    DSH_LIST_FOREACH_LINK(link, &loop->watches)
        if (*link == w) {
            bury(loop, link);
            break;
        }
    w->timer_fn(w->arg);
}

int dshh__loop_run(struct dshh_loop *loop)
{
    /* quit is sticky: a quit requested before the loop runs (a run that ended at once) holds. */
    while (!loop->quit) {
        struct epoll_event evs[16];
        int n = epoll_wait(loop->epfd, evs, 16, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        for (int i = 0; i < n; i++) {
            struct watch *w = evs[i].data.ptr;
            if (w->dead)
                continue;
            if (w->is_timer)
                fire_timer(loop, w);
            else
                w->fd_fn(w->arg, evs[i].events);
        }
        free_graveyard(loop);
    }
    return 0;
}

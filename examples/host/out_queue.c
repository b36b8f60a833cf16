/* A bounded, non-blocking write queue per peer (examples/host/README.md, "Peers that stop
 * reading"): what the peer's pipe or socket does not take at once waits here and goes out when
 * the loop reports EPOLLOUT, so a peer that stops reading never stalls the loop. */
#include "dshh.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

static void stop_watching(struct dshh_out_queue *q)
{
    if (q->watching)
        dshh__loop_remove_fd(q->loop, q->fd);
    q->watching = false;
}

/* Writes what waits; -errno when the peer is gone (the queue is then emptied for good). */
static int drain(struct dshh_out_queue *q)
{
    while (q->off < q->len) {
        ssize_t n = write(q->fd, q->buf + q->off, q->len - q->off);
        if (n > 0) {
            q->off += (size_t)n;
            q->taken += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        q->error = n < 0 ? errno : EPIPE;
        q->off = q->len = 0;
        stop_watching(q);
        return -q->error;
    }
    q->off = q->len = 0;
    stop_watching(q);
    return 0;
}

static void on_writable(void *arg, uint32_t events)
{
    (void)events;
    drain(arg);
}

int dshh__out_queue_open(struct dshh_out_queue *q, struct dshh_loop *loop, int fd, size_t max)
{
    *q = (struct dshh_out_queue){.loop = loop, .fd = fd, .max = max, .saved_flags = -1};
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0)
        return -errno;
    struct epoll_event probe = {.events = EPOLLOUT};
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        return -errno;
    /* A regular file (or /dev/null) cannot be polled and never blocks: written at once. */
    q->direct = epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &probe) < 0 && errno == EPERM;
    close(epfd);
    if (!q->direct && !(flags & O_NONBLOCK)) {
        if (fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
            return -errno;
        q->saved_flags = flags; /* the file description may be shared (a terminal): restored at close */
    }
    return 0;
}

size_t dshh__out_queue_waiting(const struct dshh_out_queue *q)
{
    return q->len - q->off;
}

int dshh__out_queue_write(struct dshh_out_queue *q, const struct iovec *iov, int n)
{
    if (q->error)
        return -q->error;
    if (q->direct) {
        for (int i = 0; i < n; i++)
            for (size_t done = 0; done < iov[i].iov_len;) {
                ssize_t w = write(q->fd, (const char *)iov[i].iov_base + done, iov[i].iov_len - done);
                if (w < 0 && errno != EINTR)
                    return -(q->error = errno);
                done += w > 0 ? (size_t)w : 0;
            }
        return 0;
    }
    if (dshh__out_queue_waiting(q) >= q->max) {
        /* A peer that is reading, only slower than its runs write, is not refused: only one that
         * took nothing since the bound was last reached. */
        if (drain(q) < 0)
            return -q->error;
        if (dshh__out_queue_waiting(q) >= q->max && q->taken == q->taken_at_bound)
            return -ENOBUFS;
        q->taken_at_bound = q->taken;
    }
    size_t total = 0, skip = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].iov_len;
    if (q->off == q->len) { /* nothing waits: the peer may take it all now */
        ssize_t w;
        do
            w = writev(q->fd, iov, n);
        while (w < 0 && errno == EINTR);
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -(q->error = errno);
        skip = w > 0 ? (size_t)w : 0;
        q->taken += skip;
        q->off = q->len = 0;
    }
    if (skip == total)
        return 0;
    if (q->len + total - skip > q->cap) {
        /* Room by moving the waiting bytes to the front, and by doubling once they would fill
         * half of it: each byte is moved a bounded number of times, however slow the peer. */
        size_t need = q->len - q->off + total - skip, cap = q->cap ? q->cap : 65536;
        while (cap < 2 * need)
            cap *= 2;
        char *grown = cap > q->cap ? realloc(q->buf, cap) : q->buf;
        if (!grown)
            return -ENOMEM;
        q->buf = grown;
        q->cap = cap;
        if (q->off) {
            memmove(q->buf, q->buf + q->off, q->len - q->off);
            q->len -= q->off;
            q->off = 0;
        }
    }
    for (int i = 0; i < n; i++) {
        size_t len = iov[i].iov_len, from = skip < len ? skip : len;
        skip -= from;
        memcpy(q->buf + q->len, (const char *)iov[i].iov_base + from, len - from);
        q->len += len - from;
    }
    if (!q->watching) {
        int rc = dshh__loop_add_fd(q->loop, q->fd, EPOLLOUT, on_writable, q);
        if (rc < 0)
            return rc;
        q->watching = true;
    }
    return 0;
}

int dshh__out_queue_flush(struct dshh_out_queue *q)
{
    while (!q->error && q->off < q->len) {
        if (drain(q) < 0)
            break;
        struct pollfd p = {.fd = q->fd, .events = POLLOUT};
        if (q->off < q->len && poll(&p, 1, -1) < 0 && errno != EINTR)
            return -errno;
    }
    return -q->error;
}

void dshh__out_queue_close(struct dshh_out_queue *q)
{
    stop_watching(q);
    if (q->saved_flags >= 0)
        (void)fcntl(q->fd, F_SETFL, q->saved_flags);
    free(q->buf);
    *q = (struct dshh_out_queue){.fd = -1, .saved_flags = -1};
}

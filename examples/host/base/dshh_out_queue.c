/* A bounded, non-blocking write queue per peer (examples/host/README.md, "Peers that stop
 * reading"): what the peer's pipe or socket does not take at once waits here and goes out when
 * the loop reports EPOLLOUT, so a peer that stops reading never stalls the loop. What waits is a
 * FIFO of segments: small pieces are copied into shared segments, a piece handed over with
 * dshh__out_queue_write_owned waits where it is (a large result is never held twice). */
#include "dshh_out_queue.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

/* Room of a segment that copied pieces share; a larger copied piece gets a segment of its size. */
#define COPY_SEGMENT_BYTES ((size_t)64 << 10)
/* Segments handed to one writev. */
#define WRITE_SEGMENTS 64

struct dshh_out_segment {
    struct dshh_out_segment *next;
    char *data;           /* data[off..len) waits */
    size_t off, len, cap; /* cap: room of bytes[] (0 for an owned piece) */
    dshh_release_fn release; /* an owned piece: release(release_arg, data) once written or dropped */
    void *release_arg;
    char bytes[];
};

static void stop_watching(struct dshh_out_queue *q)
{
    if (q->watching)
        dshh__loop_remove_fd(q->loop, q->fd);
    q->watching = false;
}

static void free_segment(struct dshh_out_segment *s)
{
    if (s->release)
        s->release(s->release_arg, s->data);
    free(s);
}

static void drop_all(struct dshh_out_queue *q)
{
    while (q->head) {
        struct dshh_out_segment *s = q->head;
        q->head = s->next;
        free_segment(s);
    }
    q->tail = NULL;
    q->waiting = 0;
}

/* Called after bytes left: tells the owner once the queue fell to its low mark. */
static void note_progress(struct dshh_out_queue *q)
{
    if (q->above_low && q->waiting <= q->low) {
        q->above_low = false;
        if (q->on_low)
            q->on_low(q->on_low_arg);
    }
}

/* The peer took n bytes from the head: written segments are freed. */
static void consume(struct dshh_out_queue *q, size_t n)
{
    q->taken += n;
    q->waiting -= n;
    while (n > 0) {
        struct dshh_out_segment *s = q->head;
        size_t part = s->len - s->off < n ? s->len - s->off : n;
        s->off += part;
        n -= part;
        if (s->off == s->len) {
            q->head = s->next;
            if (!q->head)
                q->tail = NULL;
            free_segment(s);
        }
    }
}

/* Writes what waits; -errno when the peer is gone (the queue is then emptied for good). */
static int drain(struct dshh_out_queue *q)
{
    while (q->head) {
        struct iovec iov[WRITE_SEGMENTS];
        int n = 0;
        for (struct dshh_out_segment *s = q->head; s && n < WRITE_SEGMENTS; s = s->next)
            iov[n++] = (struct iovec){s->data + s->off, s->len - s->off};
        ssize_t w = writev(q->fd, iov, n);
        if (w > 0) {
            consume(q, (size_t)w);
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        q->error = w < 0 ? errno : EPIPE;
        drop_all(q);
        stop_watching(q);
        return -q->error;
    }
    if (!q->head)
        stop_watching(q);
    note_progress(q);
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

void dshh__out_queue_notify_low(struct dshh_out_queue *q, size_t low, dshh_timer_fn fn, void *arg)
{
    q->low = low;
    q->on_low = fn;
    q->on_low_arg = arg;
}

size_t dshh__out_queue_waiting(const struct dshh_out_queue *q)
{
    return q->waiting;
}

static struct dshh_out_segment *append_segment(struct dshh_out_queue *q, size_t cap)
{
    struct dshh_out_segment *s = malloc(sizeof *s + cap);
    if (!s)
        return NULL;
    *s = (struct dshh_out_segment){.data = s->bytes, .cap = cap};
    if (q->tail)
        q->tail->next = s;
    else
        q->head = s;
    q->tail = s;
    return s;
}

/* Queues bytes[0..len) by copy, into the last segment while it has room. */
static int queue_copy(struct dshh_out_queue *q, const char *bytes, size_t len)
{
    struct dshh_out_segment *s = q->tail;
    if (s && !s->release && s->cap - s->len >= len) {
        memcpy(s->bytes + s->len, bytes, len);
        s->len += len;
        q->waiting += len;
        return 0;
    }
    if (!(s = append_segment(q, len > COPY_SEGMENT_BYTES ? len : COPY_SEGMENT_BYTES)))
        return -ENOMEM;
    memcpy(s->bytes, bytes, len);
    s->len = len;
    q->waiting += len;
    return 0;
}

static int queue_owned(struct dshh_out_queue *q, char *data, size_t off, size_t len, dshh_release_fn release,
                       void *arg)
{
    struct dshh_out_segment *s = append_segment(q, 0);
    if (!s)
        return -ENOMEM;
    *s = (struct dshh_out_segment){.data = data, .off = off, .len = len, .release = release, .release_arg = arg};
    q->waiting += len - off;
    return 0;
}

static int write_direct(struct dshh_out_queue *q, const struct iovec *iov, int n)
{
    for (int i = 0; i < n; i++)
        for (size_t done = 0; done < iov[i].iov_len;) {
            ssize_t w = write(q->fd, (const char *)iov[i].iov_base + done, iov[i].iov_len - done);
            if (w < 0 && errno != EINTR)
                return -(q->error = errno);
            done += w > 0 ? (size_t)w : 0;
        }
    return 0;
}

int dshh__out_queue_write_owned(struct dshh_out_queue *q, const struct iovec *iov, int n, int owned,
                                dshh_release_fn release, void *release_arg)
{
    char *owned_data = owned >= 0 ? iov[owned].iov_base : NULL;
    int rc = 0;
    if (q->error) {
        rc = -q->error;
        goto release;
    }
    if (q->direct) {
        rc = write_direct(q, iov, n);
        goto release;
    }
    if (q->waiting >= q->max) {
        /* A peer that is reading, only slower than its runs write, is not refused: only one that
         * took nothing since the bound was last reached. */
        if ((rc = drain(q)) < 0)
            goto release;
        if (q->waiting >= q->max && q->taken == q->taken_at_bound) {
            rc = -ENOBUFS;
            goto release;
        }
        q->taken_at_bound = q->taken;
    }
    size_t skip = 0;
    if (!q->head) { /* nothing waits: the peer may take it all now */
        ssize_t w;
        do
            w = writev(q->fd, iov, n > IOV_MAX ? IOV_MAX : n);
        while (w < 0 && errno == EINTR);
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            rc = -(q->error = errno);
            goto release;
        }
        skip = w > 0 ? (size_t)w : 0;
        q->taken += skip;
    }
    for (int i = 0; i < n; i++) {
        size_t len = iov[i].iov_len, from = skip < len ? skip : len;
        skip -= from;
        if (i == owned && from < len) {
            if ((rc = queue_owned(q, owned_data, from, len, release, release_arg)) < 0)
                goto release;
            owned_data = NULL; /* the segment holds it now */
        } else if (from < len && (rc = queue_copy(q, (const char *)iov[i].iov_base + from, len - from)) < 0) {
            goto release;
        }
    }
    if (q->waiting > q->low)
        q->above_low = true;
    if (q->head && !q->watching) {
        if ((rc = dshh__loop_add_fd(q->loop, q->fd, EPOLLOUT, on_writable, q)) < 0)
            goto release;
        q->watching = true;
    }
release:
    if (owned_data)
        release(release_arg, owned_data);
    return rc;
}

int dshh__out_queue_write(struct dshh_out_queue *q, const struct iovec *iov, int n)
{
    return dshh__out_queue_write_owned(q, iov, n, -1, NULL, NULL);
}

int dshh__out_queue_drain_now(struct dshh_out_queue *q)
{
    return q->error ? -q->error : drain(q);
}

int dshh__out_queue_flush(struct dshh_out_queue *q)
{
    while (!q->error && q->head) {
        if (drain(q) < 0)
            break;
        struct pollfd p = {.fd = q->fd, .events = POLLOUT};
        if (q->head && poll(&p, 1, -1) < 0 && errno != EINTR)
            return -errno;
    }
    return -q->error;
}

void dshh__out_queue_close(struct dshh_out_queue *q)
{
    stop_watching(q);
    if (q->saved_flags >= 0)
        (void)fcntl(q->fd, F_SETFL, q->saved_flags);
    drop_all(q);
    *q = (struct dshh_out_queue){.fd = -1, .saved_flags = -1};
}

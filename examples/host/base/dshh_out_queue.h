/* A bounded, non-blocking write queue per peer (dshh_out_queue.c): copied segments and
 * handed-over pieces, drained on EPOLLOUT; the only writer of struct dshh_out_queue. */
#ifndef DSHH_OUT_QUEUE_H
#define DSHH_OUT_QUEUE_H

#include "dshh_loop.h"

#include <stdbool.h>
#include <stddef.h>

struct iovec;
/* Gives back a piece handed to the queue (data as it was handed over). */
typedef void (*dshh_release_fn)(void *arg, char *data);
struct dshh_out_segment;
struct dshh_out_queue {
    struct dshh_loop *loop;
    int fd;
    size_t max;      /* bytes waiting at which a new message is refused (it may then exceed max by one message) */
    struct dshh_out_segment *head, *tail; /* what the peer has not taken, oldest first */
    size_t waiting;  /* bytes in them */
    bool watching;   /* EPOLLOUT is watched on host->loop while bytes wait */
    bool direct;     /* fd cannot be polled (a regular file): written at once, it never blocks */
    int error;       /* errno of a failed write (the peer is gone): later writes fail with it */
    int saved_flags; /* fd's flags before O_NONBLOCK was set, restored at close; -1: unchanged */
    size_t taken, taken_at_bound; /* bytes the peer took in all; and when max was last reached */
    size_t low;      /* on_low(on_low_arg) once waiting falls to low after it was above */
    bool above_low;
    dshh_timer_fn on_low;
    void *on_low_arg;
};
/* Makes fd non-blocking (not closed by the queue). */
int dshh__out_queue_open(struct dshh_out_queue *q, struct dshh_loop *loop, int fd, size_t max);
/* Queues iov as one message and writes what the peer takes now. 0; -ENOBUFS when max bytes
 * already wait and the peer took nothing since they last did (nothing is queued: the caller
 * applies its documented outcome); another -errno when the peer is gone. */
int dshh__out_queue_write(struct dshh_out_queue *q, const struct iovec *iov, int n);
/* The same, with iov[owned] handed over (owned < 0: none): the queue keeps that piece instead of
 * copying it and calls release(release_arg, its base) once it is written or dropped, also when
 * the write fails. */
int dshh__out_queue_write_owned(struct dshh_out_queue *q, const struct iovec *iov, int n, int owned,
                                dshh_release_fn release, void *release_arg);
/* fn(arg) is called (from inside a later write or drain: it must not write to q) each time the
 * bytes waiting fall to low or below after they were above it. */
void dshh__out_queue_notify_low(struct dshh_out_queue *q, size_t low, dshh_timer_fn fn, void *arg);
size_t dshh__out_queue_waiting(const struct dshh_out_queue *q);
/* Writes what the peer takes now, never blocking: 0 (dshh__out_queue_waiting tells what is left),
 * or -errno once the peer is gone. */
int dshh__out_queue_drain_now(struct dshh_out_queue *q);
/* Blocks until everything waiting is written (after the loop ended: the last answers). */
int dshh__out_queue_flush(struct dshh_out_queue *q);
/* Stops watching, frees what waits, restores the fd's flags. */
void dshh__out_queue_close(struct dshh_out_queue *q);

#endif

/* See control.h. */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_CHUNK 65536

void ptc__control_init(struct ptc_control *control, int fd, uint64_t max_frame_bytes)
{
    memset(control, 0, sizeof *control);
    control->fd = fd;
    control->max_frame_bytes = max_frame_bytes;
    /* The services hand it non-blocking (dsh_services.h); made sure of here, since one blocking
     * read or send on a child that stopped reading would stall the host's loop. */
    int flags = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    if (flags >= 0 && !(flags & O_NONBLOCK))
        (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void ptc__control_destroy(struct ptc_control *control)
{
    if (control->fd >= 0)
        close(control->fd);
    free(control->in);
    free(control->out);
    memset(control, 0, sizeof *control);
    control->fd = -1;
}

static int reserve(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t next = *cap ? *cap : 4096;
    while (next < need)
        next *= 2;
    char *grown = realloc(*buf, next);
    if (!grown)
        return -ENOMEM;
    *buf = grown;
    *cap = next;
    return 0;
}

bool ptc__control_has_partial(const struct ptc_control *control)
{
    return control->in_len > control->in_off;
}

/* Whether a complete line is buffered; it ends at in_scan then. Bytes searched once are not
 * searched again: a frame of many megabytes arrives in many reads, and each read adds only its
 * own bytes to the search. */
static bool has_line(struct ptc_control *control)
{
    if (control->in_scan < control->in_off)
        control->in_scan = control->in_off;
    char *nl = control->in_scan < control->in_len
                   ? memchr(control->in + control->in_scan, '\n', control->in_len - control->in_scan)
                   : NULL;
    /* At a newline the scan stops on it, so the line ends at in_scan. */
    control->in_scan = nl ? (size_t)(nl - control->in) : control->in_len;
    return nl != NULL;
}

/* Bytes of the unconsumed region that cannot be a complete line yet exceed the bound. */
static bool partial_too_long(struct ptc_control *control)
{
    return control->in_len - control->in_off > control->max_frame_bytes && !has_line(control);
}

int ptc__control_read(struct ptc_control *control)
{
    if (control->in_off > 0) {
        memmove(control->in, control->in + control->in_off, control->in_len - control->in_off);
        control->in_len -= control->in_off;
        control->in_scan = control->in_scan > control->in_off ? control->in_scan - control->in_off : 0;
        control->in_off = 0;
    }
    while (!control->eof) {
        if (partial_too_long(control))
            return -E2BIG;
        /* Hand complete lines to the caller before buffering much more. */
        if (control->in_len >= 4 * READ_CHUNK && has_line(control))
            return 0;
        int rc = reserve(&control->in, &control->in_cap, control->in_len + READ_CHUNK);
        if (rc < 0)
            return rc;
        /* All the room there is: a large frame's buffer takes it in few reads. */
        ssize_t n = read(control->fd, control->in + control->in_len, control->in_cap - control->in_len);
        if (n > 0) {
            control->in_len += (size_t)n;
            continue;
        }
        if (n == 0 || errno == ECONNRESET) {
            control->eof = true;
            break;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            break;
        return -errno;
    }
    return partial_too_long(control) ? -E2BIG : 0;
}

int ptc__control_next_line(struct ptc_control *control, char **ret_line, size_t *ret_len)
{
    if (!has_line(control))
        return partial_too_long(control) ? -E2BIG : 0;
    char *start = control->in + control->in_off;
    char *nl = control->in + control->in_scan;
    size_t len = (size_t)(nl - start);
    if (len > control->max_frame_bytes)
        return -E2BIG;
    *nl = '\0';
    control->in_off += len + 1;
    control->in_scan = control->in_off;
    *ret_line = start;
    *ret_len = len;
    return 1;
}

void ptc__control_trim(struct ptc_control *control)
{
    /* A large frame's buffer is given back once it was handled: a run's host memory is its
     * frames while they are being handled, not the largest frame it ever sent. */
    if (control->in_off == control->in_len && control->in_cap > 16 * READ_CHUNK) {
        free(control->in);
        control->in = NULL;
        control->in_cap = control->in_len = control->in_off = control->in_scan = 0;
    }
}

int ptc__control_queue(struct ptc_control *control, const char *frame, size_t len)
{
    if (len > control->max_frame_bytes)
        return -E2BIG;
    size_t queued = control->out_len - control->out_off;
    if (queued + len > control->max_frame_bytes)
        return -E2BIG;
    if (control->out_off > 0 && control->out_off == control->out_len)
        control->out_off = control->out_len = 0;
    int rc = reserve(&control->out, &control->out_cap, control->out_len + len + 1);
    if (rc < 0)
        return rc;
    memcpy(control->out + control->out_len, frame, len);
    control->out[control->out_len + len] = '\n';
    control->out_len += len + 1;
    return 0;
}

int ptc__control_flush(struct ptc_control *control)
{
    while (control->out_off < control->out_len) {
        /* MSG_NOSIGNAL: a vanished child must not raise SIGPIPE in the host. */
        ssize_t n = send(control->fd, control->out + control->out_off,
                         control->out_len - control->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            control->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return n < 0 ? -errno : -EPIPE;
    }
    control->out_off = control->out_len = 0;
    return 1;
}

bool ptc__control_writing(const struct ptc_control *control)
{
    return control->out_off < control->out_len;
}

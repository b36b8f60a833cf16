/* Control-channel framing: newline-delimited JSON over a non-blocking stream fd, with every frame,
 * and the queue of frames not yet written, bounded by maxMessageBytes. Pure byte handling; the
 * frame meaning lives in frames.c. */
#ifndef PTC_CONTROL_H
#define PTC_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ptc_control {
    int fd;
    uint64_t max_frame_bytes;
    /* read side: bytes received but not yet split into lines */
    char *in;
    size_t in_off, in_len, in_cap; /* [in_off, in_len) is unconsumed */
    size_t in_scan;                /* [in_off, in_scan) holds no newline */
    bool eof;
    /* write side */
    char *out;
    size_t out_len, out_off, out_cap;
};

void ptc__control_init(struct ptc_control *control, int fd, uint64_t max_frame_bytes);
void ptc__control_destroy(struct ptc_control *control); /* closes the fd */

/* Reads what is available. Returns 0, or -E2BIG when a partial line already exceeds the frame
 * bound, or another negative errno. Sets control->eof at end of stream. */
int ptc__control_read(struct ptc_control *control);
/* Pops the next complete line (without '\n', NUL-terminated), valid until the next read/next_line
 * call; the caller may rewrite its bytes in place (frames decode text there).
 * Returns 1 with a line, 0 when none is complete, -E2BIG for an oversized line. */
int ptc__control_next_line(struct ptc_control *control, char **ret_line, size_t *ret_len);
/* True when bytes that do not form a complete line remain buffered. */
bool ptc__control_has_partial(const struct ptc_control *control);

/* Queues frame + '\n'. -E2BIG when the frame or the queue would exceed the bound. */
/* Frees the receive buffer when every byte in it was handed out and it grew past 1 MiB. Lines
 * returned before are invalid afterwards. */
void ptc__control_trim(struct ptc_control *control);
int ptc__control_queue(struct ptc_control *control, const char *frame, size_t len);
/* Writes as much as possible. Returns 1 when the queue is empty, 0 when bytes remain (wait for
 * EPOLLOUT), or a negative errno (-EPIPE when the peer is gone). */
int ptc__control_flush(struct ptc_control *control);
/* True while queued bytes wait to be sent. */
bool ptc__control_writing(const struct ptc_control *control);

#endif

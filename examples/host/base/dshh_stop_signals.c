/* SIGINT and SIGTERM as loop events through a self-pipe: a command that owns runs stops them and
 * cleans up (ranges quiescent, temp directories removed) instead of dying with them behind. */
#include "dshh_stop_signals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <unistd.h>

static int pipe_fds[2] = {-1, -1}; /* the handler writes the signal number to [1] */

static struct {
    dshh_stop_fn fn;
    void *arg;
} watcher;

static void on_signal(int sig)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(pipe_fds[1], &b, 1) < 0) {
        /* the pipe is full: a stop is already pending */
    }
    errno = saved;
}

static void on_pipe(void *arg, uint32_t events)
{
    (void)arg, (void)events;
    unsigned char b[16];
    ssize_t n;
    while ((n = read(pipe_fds[0], b, sizeof b)) > 0)
        for (ssize_t i = 0; i < n; i++)
            watcher.fn(watcher.arg, b[i]);
}

int dshh__stop_signals_watch(struct dshh_loop *loop, dshh_stop_fn fn, void *arg)
{
    if (pipe_fds[0] >= 0 || pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) < 0)
        return -EBUSY;
    watcher.fn = fn;
    watcher.arg = arg;
    int rc = dshh__loop_add_fd(loop, pipe_fds[0], EPOLLIN, on_pipe, NULL);
    if (rc < 0) {
        dshh__stop_signals_unwatch(NULL);
        return rc;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return 0;
}

void dshh__stop_signals_unwatch(struct dshh_loop *loop)
{
    if (pipe_fds[0] < 0)
        return;
    /* Ignored, not default, from here on: the caller is already cleaning up. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    if (loop)
        dshh__loop_remove_fd(loop, pipe_fds[0]);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    pipe_fds[0] = pipe_fds[1] = -1;
}

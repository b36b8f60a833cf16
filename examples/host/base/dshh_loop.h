/* The single epoll loop of dsh (dshh_loop.c): fds and one-shot timers. */
#ifndef DSHH_LOOP_H
#define DSHH_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct dshh_loop;
typedef void (*dshh_fd_fn)(void *arg, uint32_t events);
typedef void (*dshh_timer_fn)(void *arg);

int dshh__loop_new(struct dshh_loop **ret_loop);
void dshh__loop_free(struct dshh_loop *loop);
/* Watches fd (level-triggered) until removed; fd stays owned by the caller. */
int dshh__loop_add_fd(struct dshh_loop *loop, int fd, uint32_t events, dshh_fd_fn fn, void *arg);
void dshh__loop_remove_fd(struct dshh_loop *loop, int fd);
/* Watches an input fd with fn; a regular file (not pollable) is instead read to its end at once,
 * calling fn until *eof, which fn sets. */
int dshh__loop_watch_input(struct dshh_loop *loop, int fd, dshh_fd_fn fn, void *arg, const bool *eof);
/* One-shot timer; returns an id > 0 or a negative errno. */
int64_t dshh__loop_add_timer(struct dshh_loop *loop, uint32_t delay_ms, dshh_timer_fn fn, void *arg);
void dshh__loop_cancel_timer(struct dshh_loop *loop, int64_t id);
/* Runs until dshh__loop_quit() (sticky: a quit before the run returns at once); returns 0 or a
 * negative errno. */
int dshh__loop_run(struct dshh_loop *loop);
void dshh__loop_quit(struct dshh_loop *loop);
/* dsh_defer_fn for the services. */
int dshh__loop_defer(void *loop, uint32_t delay_ms, void (*fn)(void *arg), void *arg);

#endif

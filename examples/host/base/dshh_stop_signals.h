/* SIGINT/SIGTERM as loop events (dshh_stop_signals.c). */
#ifndef DSHH_STOP_SIGNALS_H
#define DSHH_STOP_SIGNALS_H

#include "dshh_loop.h"

/* The exit status of a command stopped by signal sig: 128 + sig (143 for SIGTERM, 130 for SIGINT). */
#define DSHH_EXIT_SIGNAL(sig) (128 + (sig))
typedef void (*dshh_stop_fn)(void *arg, int sig);
/* From now on SIGINT and SIGTERM call fn(arg, sig) from the loop instead of ending dsh. */
int dshh__stop_signals_watch(struct dshh_loop *loop, dshh_stop_fn fn, void *arg);
/* Stops watching (NULL loop: the fd was not added); both signals are ignored afterwards. */
void dshh__stop_signals_unwatch(struct dshh_loop *loop);

#endif

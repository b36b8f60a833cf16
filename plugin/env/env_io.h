/* An environment's I/O (env_io.c): the control channel of an untrusted child, raw stdout/stderr,
 * the quiescence fd. */
#ifndef PTC_ENV_IO_H
#define PTC_ENV_IO_H

#include <stdbool.h>

struct ptc_env;

/* Watches the spawned process's fds on the loop. 0 or a negative errno. */
int ptc__env_watch_process(struct ptc_env *env);
/* The range stands frozen, so nothing more can be written: hands the consumer what the pipes
 * already hold and reports control bytes the child sent after the environment began closing as
 * trailing. */
void ptc__env_drain_frozen(struct ptc_env *env);
/* Sets the control watch's events: input unless reading is held, output while frames wait to be
 * sent (writing). */
void ptc__env_watch_control(struct ptc_env *env, bool writing);
/* Holds or resumes reading from the child (control channel, stdout, stderr): ptc__env_hold_reading
 * decides when; a quiescent range is always read to the end. */
void ptc__env_set_reading_held(struct ptc_env *env, bool held);

#endif

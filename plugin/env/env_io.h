/* An environment's I/O (env_io.c): the control channel of an untrusted child, raw stdout/stderr,
 * the quiescence fd. */
#ifndef PTC_ENV_IO_H
#define PTC_ENV_IO_H

struct ptc_env;

/* Watches the spawned process's fds on the loop. 0 or a negative errno. */
int ptc__env_watch_process(struct ptc_env *env);
/* The range stands frozen, so nothing more can be written: hands the consumer what the pipes
 * already hold and reports control bytes the child sent after the environment began closing as
 * trailing. */
void ptc__env_drain_frozen(struct ptc_env *env);

#endif

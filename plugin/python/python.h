/* The Python language of dsh-ptc-runtime-python.so (python_launch.c): argv and hello check. */
#ifndef PTC_PYTHON_H
#define PTC_PYTHON_H

#include <stdbool.h>
#include <stddef.h>

struct ptc_host;
struct dsh_error;
struct ptc_frame;

/* Debian 12's python3. */
#define PTC_MIN_PYTHON_MAJOR 3
#define PTC_MIN_PYTHON_MINOR 11

int ptc__python_launch_argv(struct ptc_host *host, char ***ret_argv, char ***ret_env, struct dsh_error *err);
bool ptc__python_hello_supported(const struct ptc_frame *hello, char *why, size_t why_len);

#endif

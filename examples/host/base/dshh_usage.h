/* Exit statuses of every dsh command and the one-line usage error (dshh_usage.c). */
#ifndef DSHH_USAGE_H
#define DSHH_USAGE_H

enum { DSHH_EXIT_OK = 0, DSHH_EXIT_FAILURE = 1, DSHH_EXIT_USAGE = 2 };

/* Prints one line "dsh COMMAND: PROBLEM (see 'dsh COMMAND --help')" (command NULL: the global
 * usage) and returns DSHH_EXIT_USAGE. */
int dshh__usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

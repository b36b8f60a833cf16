/* One-line usage errors, shared by main.c and `dsh workflow` (which parses its own options). */
#include "dshh_usage.h"

#include <stdarg.h>
#include <stdio.h>

int dshh__usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dsh%s%s: ", command ? " " : "", command ? command : "");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'dsh%s%s --help')\n", command ? " " : "", command ? command : "");
    va_end(ap);
    return DSHH_EXIT_USAGE;
}

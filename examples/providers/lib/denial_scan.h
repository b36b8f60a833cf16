/* One-pass, case-insensitive search for the texts of denied operations (see denial_scan.c). */
#ifndef DSHX_DENIAL_SCAN_H
#define DSHX_DENIAL_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* True when text[0..len) contains one of the signatures, ASCII letters compared without case.
 * Embedded NUL bytes are ordinary bytes. Linear in len; safe from any thread. */
bool dshx__denial_scan(const char *text, size_t len);

/* The signatures, NULL-terminated: what the scan looks for (for tests and the README). */
extern const char *const dshx__denial_signatures[];

#endif

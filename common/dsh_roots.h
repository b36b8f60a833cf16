/* Which directories a confined run may be given as roots (roots.c). */
#ifndef DSH_ROOTS_H
#define DSH_ROOTS_H

#include <stdbool.h>
#include <stddef.h>

/* Whether `canonical` (absolute, symlinks and `..` resolved as by realpath) may be a root of a
 * confined run: readable, or writable when `writable`. Refused: "/"; a root that contains or lies
 * inside temp_root (NULL: not known to the caller); for writing, a root that contains or lies
 * inside one of protected_roots (canonical, NULL-terminated, may be NULL: the provider's and the
 * sandbox's own files) and a system directory (dsh_roots.c lists them). NULL when allowed; else
 * msg holds `FIELD "GIVEN" is refused: REASON` (with "(resolves to CANONICAL)" after GIVEN when
 * they differ) and is returned. */
const char *dsh_root_refusal(const char *field, const char *given, const char *canonical,
                             bool writable, const char *temp_root,
                             const char *const *protected_roots, char *msg, size_t size);

#endif

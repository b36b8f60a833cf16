/* The guest library (guest.js), embedded at build time as guest_embedded.c. */
#ifndef WF_GUEST_H
#define WF_GUEST_H

#include <stddef.h>

/* Transfer none, NUL-terminated. */
const char *wf__guest_text(size_t *ret_len);

#endif

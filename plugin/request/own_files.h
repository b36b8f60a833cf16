/* The plugin's own files: its bootstrap and default Node.js (and the Python runtime's bootstrap),
 * found from the plugin's location. */
#ifndef PTC_OWN_FILES_H
#define PTC_OWN_FILES_H

#include <stdbool.h>

/* Host paths, canonical when the file exists (else as looked for, so a message can name it).
 * Computed once; static storage. */
const char *ptc__own_node(void);
const char *ptc__own_bootstrap(void);
/* bootstrap/stripper.js beside the bootstrap. */
const char *ptc__own_stripper(void);
/* True when the Node is the pinned one beside the bootstrap (not one named with meson -Dnode). */
bool ptc__own_node_is_pinned(void);
/* The directories of both, for the execution world: NULL-terminated, static (the provider
 * table's readable_roots). */
const char *const *ptc__own_readable_roots(void);
/* The Python runtime's bootstrap-python/process.py, and its directory as readable roots. */
const char *ptc__own_python_bootstrap(void);
const char *const *ptc__own_python_readable_roots(void);

#endif /* PTC_OWN_FILES_H */

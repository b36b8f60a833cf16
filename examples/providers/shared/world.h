/* The execution world: what a confined program may see of the host. Shared by the launcher
 * (which turns it into Landlock rules) and the fs service (which maps only what is visible). */
#ifndef DSHX_WORLD_H
#define DSHX_WORLD_H

#include <stdbool.h>

/* System paths readable (and executable) in every restricted mode; missing ones are skipped.
 * /etc is curated so host secrets such as /etc/shadow or ssh host keys stay hidden. */
extern const char *const dshx__world_system_roots[];
/* Device nodes the program may read and write (/dev/null ...) or only read (/dev/urandom ...). */
extern const char *const dshx__world_devices_rw[];
extern const char *const dshx__world_devices_ro[];

/* path equals root or lies beneath it (both canonical, absolute). */
bool dshx__path_within(const char *path, const char *root);
/* True when a canonical host path is readable through the system part of the world. /proc is
 * excluded: the execution world has its own. */
bool dshx__world_system_visible(const char *canonical_path);

#endif /* DSHX_WORLD_H */

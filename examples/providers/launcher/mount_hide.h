/* What Landlock cannot hide from stat() (mount_hide.c). */
#ifndef DSHX_MOUNT_HIDE_H
#define DSHX_MOUNT_HIDE_H

#include <stddef.h>

/* After the mount layer: an empty read-only tmpfs over each directory under a few fixed parents
 * that holds no path of the NULL-terminated list of NULL-terminated path lists. 0 or -errno with
 * a short reason in ret_err. */
int dshx__hide_unrelated(const char *const *const *visible, char *ret_err, size_t errlen);

#endif /* DSHX_MOUNT_HIDE_H */

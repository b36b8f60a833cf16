/* The launcher's read-only mount layer (mount_layer.c). Each step returns 0 or -errno with a
 * short reason in ret_err. */
#ifndef DSHX_MOUNT_LAYER_H
#define DSHX_MOUNT_LAYER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* New mount, network and IPC namespaces; every mount read-only except the rw roots; a private
 * /proc when the launcher runs in a PID namespace of its own. The rw roots and the owned paths
 * are bind-mounted through idmap_fd's mapping when it is >= 0 (dshx__bind_roots). */
int dshx__mount_layer_apply(const char *const *rw, const char *const *owned, int idmap_fd,
                            char *ret_err, size_t errlen);

/* After the mount layer: a fresh tmpfs of at most size bytes over path, mode 0700 and owned by
 * owner:group (the ids the program will run as), writable in the otherwise read-only namespace. */
int dshx__mount_private_tmpfs(const char *path, uint64_t size, uid_t owner, gid_t group, char *ret_err,
                              size_t errlen);

#endif /* DSHX_MOUNT_LAYER_H */

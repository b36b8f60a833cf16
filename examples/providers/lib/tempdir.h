/* Per-run private temp dirs (tempdir.c). */
#ifndef DSHX_TEMPDIR_H
#define DSHX_TEMPDIR_H

#include <stddef.h>

/* /tmp/dsh-<euid>, made 0711 when missing; -EPERM when it is not this user's private directory. */
int dshx__temp_root_default(char *buf, size_t size);
/* This instance's directory under root, locked until close; first removes the directories of
 * instances that are gone. */
struct dshx__temp_host;
int dshx__temp_host_open(const char *root, struct dshx__temp_host **ret_host);
void dshx__temp_host_close(struct dshx__temp_host *host); /* removes the whole tree; NULL ok */
int dshx__tempdir_create(const struct dshx__temp_host *host, char **ret_path);
int dshx__tree_remove(const char *path); /* never follows symlinks; 0 or -errno */

#endif /* DSHX_TEMPDIR_H */

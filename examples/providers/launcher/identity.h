/* The program's dedicated uid/gid, launcher side (identity.c; host root only). Each step returns
 * 0 or -errno with a short reason in ret_err. */
#ifndef DSHX_IDENTITY_H
#define DSHX_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct dshx__identity {
    bool set; /* false: the program keeps the launcher's ids */
    uid_t uid;
    gid_t gid;
};
/* A user namespace fd mapping the launcher's own uid/gid to id's, for idmapped mounts. The
 * namespace lives in a helper child that exits once the fd is open; *ret_helper (-1: none) is for
 * dshx__reap_helper, called later so the launcher does not wait for that exit meanwhile. */
int dshx__idmap_userns(const struct dshx__identity *id, pid_t *ret_helper, char *ret_err, size_t errlen);
void dshx__reap_helper(pid_t pid);
/* Binds each rw root (and, with idmap_fd >= 0, each owned path) onto itself, parents first,
 * through idmap_fd's mapping when it is >= 0. */
int dshx__bind_roots(const char *const *rw, const char *const *owned, int idmap_fd, char *ret_err,
                     size_t errlen);
/* The user and group name of the program's ids (os.userInfo(), getpass and git's ident need
 * one): the host's /etc/passwd and /etc/group plus one line each, bound over the originals in
 * the launcher's mount namespace, staged on a tmpfs over /tmp that is detached once they are. */
#define DSHX_PROGRAM_USER "dsh-program"
int dshx__identity_names(const struct dshx__identity *id, char *ret_err, size_t errlen);
/* setgroups(none), setresgid, setresuid; needs CAP_SETUID/CAP_SETGID still in effect. */
int dshx__switch_identity(const struct dshx__identity *id, char *ret_err, size_t errlen);

#endif /* DSHX_IDENTITY_H */

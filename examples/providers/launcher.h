/* Confinement steps of dsh-sandbox-launch. Each returns 0 or -errno and, on failure, writes a
 * short reason into ret_err. They run in the launcher, single-threaded, before execve. */
#ifndef DSHX_LAUNCHER_H
#define DSHX_LAUNCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct dshx__landlock_plan {
    int abi;               /* the ABI level to enforce, 1..DSHX_LANDLOCK_ABI_KNOWN */
    const char *const *ro; /* read + execute beneath (files or directories), must exist */
    const char *const *rw; /* every filesystem right beneath, must exist */
};

int dshx__landlock_probe_abi(void); /* also used by the library; 0 when missing */
int dshx__landlock_apply(const struct dshx__landlock_plan *plan, char *ret_err, size_t errlen);

int dshx__seccomp_apply(char *ret_err, size_t errlen);

#define DSHX_MAX_ROOTS 256 /* of each kind on the launcher's command line */

/* New mount, network and IPC namespaces; every mount read-only except the rw roots; a private
 * /proc when the launcher runs in a PID namespace of its own. The rw roots and the owned paths
 * are bind-mounted through idmap_fd's mapping when it is >= 0 (dshx__bind_roots). */
int dshx__mount_layer_apply(const char *const *rw, const char *const *owned, int idmap_fd,
                            char *ret_err, size_t errlen);

/* After the mount layer: an empty read-only tmpfs over each directory under a few fixed parents
 * that holds no path of the NULL-terminated list of NULL-terminated path lists (mount_hide.c). */
int dshx__hide_unrelated(const char *const *const *visible, char *ret_err, size_t errlen);

/* identity.c: the program's dedicated uid/gid (host root only). */
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

/* After the mount layer: a fresh tmpfs of at most size bytes over path, mode 0700 and owned by
 * owner:group (the ids the program will run as), writable in the otherwise read-only namespace. */
int dshx__mount_private_tmpfs(const char *path, uint64_t size, uid_t owner, gid_t group, char *ret_err,
                              size_t errlen);

int dshx__close_inherited_fds(void);                                 /* all but 0..3 */
int dshx__set_rlimits(uint64_t nproc, char *ret_err, size_t errlen); /* nproc 0 = leave alone */
/* Bounding, ambient, securebits, then the identity switch (when id->set), then the sets. */
int dshx__drop_capabilities(const struct dshx__identity *id, char *ret_err, size_t errlen);

#endif /* DSHX_LAUNCHER_H */

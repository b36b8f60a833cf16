/* The network allow-list, launcher side: the range joins the network namespace its egress proxy
 * made (loopback, the resolver and the listeners, nothing else), and the program's resolver
 * configuration names that resolver. */
#ifndef DSHX_NET_JOIN_H
#define DSHX_NET_JOIN_H

#include <stddef.h>

/* Opens the namespace file (before the mount layer hides the host's /proc). The fd, or -errno
 * with a reason. */
int dshx__net_open(const char *path, char *ret_err, size_t errlen);
/* Enters the namespace of fd (after the mount layer made the range's own, empty one, which this
 * replaces) and refuses one that is the launcher's original namespace; closes fd. 0 or -errno. */
int dshx__net_join(int fd, char *ret_err, size_t errlen);
/* Binds a resolv.conf naming 127.0.0.1 over /etc/resolv.conf and an empty /etc/hosts over the host's, read-only, in the launcher's
 * mount namespace. 0 or -errno. */
int dshx__net_resolver_conf(char *ret_err, size_t errlen);

#endif /* DSHX_NET_JOIN_H */

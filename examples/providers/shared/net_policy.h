/* The network allow-list of a restricted run (policy `network`, mode `allow-list`): host
 * patterns, their matching (deny wins), the ports they open, and the address classes a permitted
 * name may not resolve to. Shared by the services library (it checks the policy before anything
 * starts) and the egress proxy (it decides every name and address again). No state, no
 * allocation: the caller owns every array. */
#ifndef DSHX_NET_POLICY_H
#define DSHX_NET_POLICY_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define DSHX_NET_NAME_MAX     253 /* a DNS name in text form, without the final dot */
#define DSHX_NET_MAX_PATTERNS 64  /* per list (allow, deny, resolver override) */
#define DSHX_NET_MAX_PORTS    16  /* distinct ports an allow list may open */

/* One parsed pattern: `name`, `*.suffix`, either with `:port`. port 0 = no port given (allow:
 * 80 and 443; deny: every port). */
struct dshx__net_pattern {
    char name[DSHX_NET_NAME_MAX + 1]; /* lower case; for a wildcard the suffix without "*." */
    bool wildcard;                    /* matches names of one or more labels below name */
    uint16_t port;
};

/* Parses one pattern strictly. 0, or -1 with the reason (a short phrase) in *ret_why. */
int dshx__net_pattern_parse(const char *text, struct dshx__net_pattern *ret, const char **ret_why);

/* Checks a host name (what a program resolves or a TLS/HTTP request names) and writes its
 * lower-case form into out (DSHX_NET_NAME_MAX + 1 bytes); one trailing dot is dropped. 0, or -1
 * when it is no valid name (an IP literal is none). */
int dshx__net_name_normalize(const char *name, size_t len, char *out);

bool dshx__net_pattern_matches(const struct dshx__net_pattern *p, const char *name, uint16_t port);

/* Why a (name, port) is refused, or NET_OK. */
#define DSHX_NET_VERDICT_TABLE(X)                                                                  \
    X(OK, "permitted")                                                                             \
    X(NOT_ALLOWED, "not on the allow-list")                                                        \
    X(DENIED, "matches a deny pattern")                                                            \
    X(PORT, "port not permitted for this host")

enum dshx__net_verdict {
#define DSHX_NET_VERDICT_ENUM(name, text) DSHX_NET_##name,
    DSHX_NET_VERDICT_TABLE(DSHX_NET_VERDICT_ENUM)
#undef DSHX_NET_VERDICT_ENUM
};

const char *dshx__net_verdict_text(enum dshx__net_verdict v);

/* The decision for a normalized name on port (0 = "any permitted port": a DNS question). */
enum dshx__net_verdict dshx__net_decide(const struct dshx__net_pattern *allow, size_t nallow,
                                        const struct dshx__net_pattern *deny, size_t ndeny,
                                        const char *name, uint16_t port);

/* The distinct ports the allow list opens, ascending, into ports[DSHX_NET_MAX_PORTS]; their
 * count, or -1 when there would be more. */
int dshx__net_ports(const struct dshx__net_pattern *allow, size_t nallow, uint16_t *ports);

/* True when addr (AF_INET or AF_INET6) is loopback, RFC 1918, shared (100.64/10), link-local
 * (169.254/16 with 169.254.169.254, fe80::/10), ULA (fc00::/7), unspecified, multicast,
 * reserved or broadcast, or an IPv4-mapped, IPv4-compatible or NAT64 form of one: an address a
 * permitted name may not lead to unless allowPrivateAddresses. */
bool dshx__net_address_private(const struct sockaddr *addr);

#endif /* DSHX_NET_POLICY_H */

/* Between the services library and the egress proxy of one confinement (dsh-egress-proxy):
 *
 *   fd 3: a SOCK_SEQPACKET socket; the proxy sends one struct dshx__egress_ready once the range's
 *         network namespace, its resolver and its listeners exist, with the datagram watch (a
 *         packet socket on the range's loopback: the UDP datagrams that are no question to the
 *         resolver) as SCM_RIGHTS, which the library reads itself, so a run's report holds every
 *         datagram the range sent before it without waiting for the proxy; the library's end
 *         closing ends the proxy.
 *   fd 4: a shared memory file of sizeof(struct dshx__egress_ledger) bytes the proxy writes every
 *         decision into (the bounded connection list), and the library reads at any time without
 *         waiting for the proxy: each entry is guarded by its sequence number (odd while the
 *         proxy writes it). The library writes one field, period_start, when a run begins in the
 *         confinement (a retained environment serves many runs); the proxy reuses the entry of a
 *         closed connection only once it closed before that, so every entry a run may still
 *         report stays.
 */
#ifndef DSHX_EGRESS_PROTOCOL_H
#define DSHX_EGRESS_PROTOCOL_H

#include <stdint.h>

#define DSHX_EGRESS_FD_CONTROL 3
#define DSHX_EGRESS_FD_LEDGER  4

struct dshx__egress_ready {
    uint32_t magic;    /* DSHX_EGRESS_READY_MAGIC */
    int32_t netns_fd;  /* the proxy's fd holding the range's network namespace */
    int32_t error;     /* 0, or the errno of the step that failed (then netns_fd is -1) */
    int32_t proxy_port; /* the CONNECT port on 127.0.0.1 (HTTPS_PROXY) */
    char step[48];     /* the failed step, NUL-terminated */
};
#define DSHX_EGRESS_READY_MAGIC 0x64736e65u

/* The resolver's synthetic addresses: 127.77.0.0/16, the name of index i at host part i + 1. */
#define DSHX_EGRESS_SYNTH_NET 0x7f4d0000u
#define DSHX_EGRESS_NAMES     4095

/* Why a connection or a name was refused (or OK). */
#define DSHX_EGRESS_REASON_TABLE(X)                                                                \
    X(OK, "permitted")                                                                             \
    X(NOT_ALLOWED, "not on the allow-list")                                                        \
    X(DENIED, "matches a deny pattern")                                                            \
    X(PORT, "port not permitted for this host")                                                    \
    X(PRIVATE_ADDRESS, "resolves to a private address")                                            \
    X(RESOLVE_FAILED, "does not resolve")                                                          \
    X(IP_LITERAL, "an address the resolver did not give (IP literal)")                             \
    X(SNI_MISMATCH, "TLS server name differs from the host connected to")                          \
    X(HOST_MISMATCH, "HTTP Host header differs from the host connected to")                        \
    X(UNNAMED, "TLS without a server name, or HTTP without one Host header")                       \
    X(NOT_TLS_OR_HTTP, "neither TLS nor HTTP on a web port")                                       \
    X(CONNECT_FAILED, "the host did not accept the connection")                                    \
    X(TOO_MANY_CONNECTIONS, "too many connections at once")                                        \
    X(TOO_MANY_NAMES, "too many names resolved in this run")                                      \
    X(UDP, "UDP to another destination than the range's resolver")

enum dshx__egress_reason {
#define DSHX_EGRESS_REASON_ENUM(name, text) DSHX_EGRESS_##name,
    DSHX_EGRESS_REASON_TABLE(DSHX_EGRESS_REASON_ENUM)
#undef DSHX_EGRESS_REASON_ENUM
    DSHX_EGRESS_REASON_COUNT
};

#define DSHX_EGRESS_LEDGER_ENTRIES 128

struct dshx__egress_entry {
    uint32_t seq;    /* even: stable; odd: being written; 0: unused */
    uint16_t port;   /* 0: a name the resolver refused */
    uint8_t reason;  /* enum dshx__egress_reason */
    uint8_t open;    /* 1 while the connection lasts */
    uint32_t serial; /* the decision's number (from 1): orders the entries */
    uint32_t closed; /* the ledger's next_serial when the connection closed (serial for a refusal) */
    uint64_t bytes_sent;     /* program -> host (a refused datagram's bytes too) */
    uint64_t bytes_received; /* host -> program */
    char name[256];
};

struct dshx__egress_ledger {
    uint32_t count;        /* entries in use (at most DSHX_EGRESS_LEDGER_ENTRIES) */
    uint32_t omitted;      /* decisions that found the ledger full */
    uint32_t refused;      /* every refusal, counted even when omitted */
    uint32_t next_serial;  /* the proxy's: the serial of the next decision (and of a closing) */
    uint32_t period_start; /* the library's: next_serial when the current run began */
    uint32_t pad;
    struct dshx__egress_entry entries[DSHX_EGRESS_LEDGER_ENTRIES];
    /* The proxy's: the name of each synthetic address, written before the resolver gives the
     * address out (the library names a datagram's destination by it). */
    char names[DSHX_EGRESS_NAMES][256];
};

#endif /* DSHX_EGRESS_PROTOCOL_H */

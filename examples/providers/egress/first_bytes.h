/* What a program's connection names in its first bytes (untrusted, bounded): the server name of a
 * TLS ClientHello (SNI) or the Host header of an HTTP/1.x request. The egress proxy compares it
 * with the name the connection was resolved for. */
#ifndef DSHX_FIRST_BYTES_H
#define DSHX_FIRST_BYTES_H

#include <stddef.h>

/* The most the proxy buffers before deciding: one TLS record (16 KiB + header) or a request
 * head. */
#define DSHX_FIRST_BYTES_MAX (16384 + 5)

enum dshx__first_bytes {
    DSHX_FIRST_MORE = 0,  /* not decidable yet: read more (at most DSHX_FIRST_BYTES_MAX) */
    DSHX_FIRST_NAMED,     /* TLS or HTTP naming a host: *ret_name */
    DSHX_FIRST_UNNAMED,   /* TLS without SNI, or HTTP without exactly one Host header */
    DSHX_FIRST_MALFORMED, /* starts as TLS or HTTP but breaks the format */
    DSHX_FIRST_OTHER,     /* neither TLS nor HTTP */
};

/* Classifies buf[0..len). On NAMED the raw name (not normalized, without a port; at most 255
 * bytes) is copied NUL-terminated into name (256 bytes); *ret_tls says which protocol. */
enum dshx__first_bytes dshx__first_bytes_inspect(const unsigned char *buf, size_t len, char name[256],
                                                 int *ret_tls);

#endif /* DSHX_FIRST_BYTES_H */

/* The HTTP CONNECT request a program that honours HTTPS_PROXY sends the range's proxy port
 * (untrusted, bounded): `CONNECT host:port HTTP/1.x`, header lines, an empty line. */
#ifndef DSHX_CONNECT_HEAD_H
#define DSHX_CONNECT_HEAD_H

#include <stddef.h>
#include <stdint.h>

#define DSHX_CONNECT_HEAD_MAX 8192

enum dshx__connect_head {
    DSHX_CONNECT_MORE = 0,  /* no empty line yet (and fewer than DSHX_CONNECT_HEAD_MAX bytes) */
    DSHX_CONNECT_OK,        /* *host (raw, NUL-terminated, at most 255 bytes), *port, *head_len */
    DSHX_CONNECT_MALFORMED, /* not a CONNECT request head, or an authority without host:port */
};

enum dshx__connect_head dshx__connect_head_parse(const unsigned char *buf, size_t len, char host[256],
                                                 uint16_t *ret_port, size_t *ret_head_len);

#endif /* DSHX_CONNECT_HEAD_H */

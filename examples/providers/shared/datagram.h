/* A datagram a program sent to another destination than the range's resolver, as the watch on the
 * range's loopback captured it (untrusted, cut at the capture length): what its IPv4 and UDP
 * headers say. The egress proxy makes the watch; the library reads it (net_allow.c). */
#ifndef DSHX_DATAGRAM_H
#define DSHX_DATAGRAM_H

#include <stddef.h>
#include <stdint.h>

/* The bytes the watch keeps of each datagram: the longest IPv4 header and the UDP header. */
#define DSHX_DATAGRAM_CAPTURE (60 + 8)

struct dshx__datagram {
    uint32_t destination; /* IPv4 address, host byte order */
    uint16_t port;        /* destination port */
    uint32_t payload;     /* the UDP payload's length */
};

/* Parses buf[0..len) (the captured start of a packet of wire_len bytes): 0 and *ret for the first
 * fragment of an IPv4 UDP datagram, -1 for anything else. */
int dshx__datagram_parse(const unsigned char *buf, size_t len, size_t wire_len, struct dshx__datagram *ret);

#endif /* DSHX_DATAGRAM_H */

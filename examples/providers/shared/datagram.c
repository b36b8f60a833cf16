/* A captured datagram's headers (datagram.h). */
#include "datagram.h"

static uint32_t be16(const unsigned char *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

int dshx__datagram_parse(const unsigned char *buf, size_t len, size_t wire_len, struct dshx__datagram *ret)
{
    if (len < 20 || len > wire_len || buf[0] >> 4 != 4 || buf[9] != 17)
        return -1;
    size_t header = (size_t)(buf[0] & 0x0f) * 4;
    if (header < 20 || len < header + 8 || (be16(buf + 6) & 0x1fff) != 0)
        return -1;
    const unsigned char *udp = buf + header;
    uint32_t udp_len = be16(udp + 4);
    size_t carried = wire_len - header;
    ret->destination = be16(buf + 16) << 16 | be16(buf + 18);
    ret->port = (uint16_t)be16(udp + 2);
    /* The header's length, but never more than the packet carried. */
    ret->payload = udp_len < 8 ? 0 : (udp_len > carried ? (uint32_t)carried : udp_len) - 8;
    return 0;
}

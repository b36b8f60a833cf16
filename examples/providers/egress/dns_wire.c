/* DNS query parsing and answers for the range's resolver (dns_wire.h). */
#include "dns_wire.h"

#include <string.h>

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

int dshx__dns_parse_query(const uint8_t *msg, size_t len, struct dshx__dns_query *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (len < 12 || len > DSHX_DNS_MAX_QUERY)
        return -1;
    uint16_t flags = be16(msg + 2);
    if ((flags & 0x8000) || ((flags >> 11) & 0xf) != 0) /* a response, or not a standard query */
        return -1;
    if (be16(msg + 4) != 1 || be16(msg + 6) != 0 || be16(msg + 8) != 0 || be16(msg + 10) > 1)
        return -1;
    size_t pos = 12, out = 0;
    for (;;) {
        if (pos >= len)
            return -1;
        uint8_t l = msg[pos++];
        if (l == 0)
            break;
        if (l > 63 || pos + l > len || out + l + 1 > sizeof(ret->name) - 1)
            return -1; /* a pointer (0xc0) or a reserved label type is > 63 too */
        if (out)
            ret->name[out++] = '.';
        for (size_t i = 0; i < l; i++) {
            uint8_t c = msg[pos + i];
            if (c == 0 || c == '.') /* no name we permit holds either */
                return -1;
            ret->name[out++] = (char)c;
        }
        pos += l;
    }
    ret->name[out] = '\0';
    if (pos + 4 > len)
        return -1;
    ret->id = be16(msg);
    ret->flags = flags;
    ret->qtype = be16(msg + pos);
    ret->qclass = be16(msg + pos + 2);
    ret->question = msg + 12;
    ret->question_len = pos + 4 - 12;
    return 0;
}

size_t dshx__dns_answer(const struct dshx__dns_query *q, int rcode, int answer_a, const uint8_t ipv4[4],
                        uint32_t ttl, uint8_t *out)
{
    /* QR, opcode 0, AA, RD as asked, RA, rcode. */
    uint16_t flags = (uint16_t)(0x8000 | 0x0400 | (q->flags & 0x0100) | 0x0080 | (rcode & 0xf));
    uint8_t *p = out;
    *p++ = (uint8_t)(q->id >> 8);
    *p++ = (uint8_t)q->id;
    *p++ = (uint8_t)(flags >> 8);
    *p++ = (uint8_t)flags;
    static const uint8_t counts_q[] = {0, 1};
    memcpy(p, counts_q, 2);
    p += 2;
    *p++ = 0;
    *p++ = answer_a ? 1 : 0;
    memset(p, 0, 4); /* no authority, no additional records */
    p += 4;
    memcpy(p, q->question, q->question_len);
    p += q->question_len;
    if (answer_a) {
        static const uint8_t rr[] = {0xc0, 12, 0, DSHX_DNS_TYPE_A, 0, 1};
        memcpy(p, rr, sizeof rr);
        p += sizeof rr;
        *p++ = (uint8_t)(ttl >> 24);
        *p++ = (uint8_t)(ttl >> 16);
        *p++ = (uint8_t)(ttl >> 8);
        *p++ = (uint8_t)ttl;
        *p++ = 0;
        *p++ = 4;
        memcpy(p, ipv4, 4);
        p += 4;
    }
    return (size_t)(p - out);
}

/* The range's resolver, wire side: parses one DNS query datagram a program sent (untrusted,
 * bounded: one question, no compression, at most 512 bytes read) and writes the answer. */
#ifndef DSHX_DNS_WIRE_H
#define DSHX_DNS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define DSHX_DNS_MAX_QUERY 512
#define DSHX_DNS_TYPE_A    1
#define DSHX_DNS_TYPE_AAAA 28

struct dshx__dns_query {
    uint16_t id;
    uint16_t flags;   /* the query's, for RD */
    uint16_t qtype;
    uint16_t qclass;
    char name[256];   /* the question's name as text, labels joined by '.', raw bytes checked
                         later (dshx__net_name_normalize); "" for the root */
    size_t question_len; /* bytes of the question section (name + type + class) */
    const uint8_t *question;
};

/* 0 with *ret filled (pointing into msg), or -1 when msg is no query this resolver answers:
 * a response, another opcode, not exactly one question, a compressed or oversized name, a
 * truncated message. (An additional OPT record is tolerated and ignored.) */
int dshx__dns_parse_query(const uint8_t *msg, size_t len, struct dshx__dns_query *ret);

#define DSHX_DNS_NOERROR  0
#define DSHX_DNS_SERVFAIL 2
#define DSHX_DNS_NXDOMAIN 3
#define DSHX_DNS_REFUSED  5

/* Writes the answer to q into out (at least DSHX_DNS_MAX_QUERY + 16 bytes): rcode, and one A
 * record of ipv4 (network order) with a TTL of ttl seconds when answer_a is set. Its length. */
size_t dshx__dns_answer(const struct dshx__dns_query *q, int rcode, int answer_a, const uint8_t ipv4[4],
                        uint32_t ttl, uint8_t *out);

#endif /* DSHX_DNS_WIRE_H */

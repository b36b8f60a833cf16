/* The egress proxy's parsers of a program's bytes (examples/providers/egress/): a DNS query, a
 * connection's first bytes (TLS ClientHello SNI, HTTP Host), and the host patterns and names of
 * shared/net_policy.c, the CONNECT request head of the proxy port, and the headers of a datagram
 * the proxy's watch captured. The first input byte picks
 * the parser; the rest is its input. Properties:
 * nothing is read or written out of bounds (ASan), every answer stays within its stated bound,
 * and a name that passes the checks is what the policy code can match. */
#include <string.h>

#include "connect_head.h"
#include "datagram.h"
#include "dns_wire.h"
#include "first_bytes.h"
#include "fuzz_target.h"
#include "net_policy.h"

static void dns(const uint8_t *data, size_t size)
{
    struct dshx__dns_query q;
    if (dshx__dns_parse_query(data, size, &q) < 0)
        return;
    size_t name_len = strlen(q.name);
    fuzz_check(name_len < sizeof(q.name), "name of %zu bytes", name_len);
    fuzz_check(q.question_len >= 5 && 12 + q.question_len <= size, "question of %zu bytes in %zu",
               q.question_len, size);
    uint8_t out[DSHX_DNS_MAX_QUERY + 32];
    static const uint8_t addr[4] = {127, 77, 0, 1};
    size_t n = dshx__dns_answer(&q, DSHX_DNS_NOERROR, 1, addr, 60, out);
    fuzz_check(n == 12 + q.question_len + 16, "answer of %zu bytes", n);
    struct dshx__dns_query again;
    fuzz_check(dshx__dns_parse_query(out, n, &again) < 0, "an answer parsed as a query");
    char norm[DSHX_NET_NAME_MAX + 1];
    if (dshx__net_name_normalize(q.name, name_len, norm) == 0)
        fuzz_check(strlen(norm) <= DSHX_NET_NAME_MAX, "normalized name too long");
}

static void first(const uint8_t *data, size_t size)
{
    char name[256];
    int tls;
    enum dshx__first_bytes r = dshx__first_bytes_inspect(data, size, name, &tls);
    if (r == DSHX_FIRST_NAMED) {
        size_t n = strlen(name);
        fuzz_check(n > 0 && n < 256, "name of %zu bytes", n);
    }
    /* More bytes never change a decision made on fewer (the proxy decides once). */
    if (r != DSHX_FIRST_MORE && size > 0) {
        char shorter_name[256];
        int shorter_tls;
        enum dshx__first_bytes s = dshx__first_bytes_inspect(data, size - 1, shorter_name, &shorter_tls);
        fuzz_check(s == DSHX_FIRST_MORE || s == r, "%d on %zu bytes, %d on one less", r, size, s);
    }
}

static void connect_head(const uint8_t *data, size_t size)
{
    char host[256];
    uint16_t port = 0;
    size_t head = 0;
    if (dshx__connect_head_parse(data, size, host, &port, &head) != DSHX_CONNECT_OK)
        return;
    size_t n = strlen(host);
    fuzz_check(n > 0 && n < 256, "host of %zu bytes", n);
    fuzz_check(port > 0 && head >= 4 && head <= size && head <= DSHX_CONNECT_HEAD_MAX, "port %u head %zu of %zu",
               (unsigned)port, head, size);
}

static void patterns(const uint8_t *data, size_t size)
{
    /* "PATTERN\nNAME": both NUL-terminated copies. */
    char text[600];
    if (size >= sizeof(text))
        return;
    memcpy(text, data, size);
    text[size] = '\0';
    char *nl = strchr(text, '\n');
    const char *name = nl ? nl + 1 : "example.test";
    if (nl)
        *nl = '\0';
    struct dshx__net_pattern p;
    const char *why = NULL;
    if (dshx__net_pattern_parse(text, &p, &why) < 0) {
        fuzz_check(why != NULL, "a refusal without a reason");
        return;
    }
    char norm[DSHX_NET_NAME_MAX + 1];
    if (dshx__net_name_normalize(name, strlen(name), norm) < 0)
        return;
    bool m = dshx__net_pattern_matches(&p, norm, 443);
    if (!p.wildcard)
        fuzz_check(m == (strcmp(p.name, norm) == 0 && (!p.port || p.port == 443)), "exact match");
    /* Deny wins over allow for the same pattern. */
    fuzz_check(dshx__net_decide(&p, 1, &p, 1, norm, p.port ? p.port : 443) != DSHX_NET_OK, "deny lost");
    uint16_t ports[DSHX_NET_MAX_PORTS];
    int n = dshx__net_ports(&p, 1, ports);
    fuzz_check(n == (p.port ? 1 : 2), "%d ports", n);
}

static void datagram(const uint8_t *data, size_t size)
{
    /* The watch keeps the first DSHX_DATAGRAM_CAPTURE bytes of a packet of size bytes. */
    size_t kept = size < DSHX_DATAGRAM_CAPTURE ? size : DSHX_DATAGRAM_CAPTURE;
    struct dshx__datagram d;
    if (dshx__datagram_parse(data, kept, size, &d) < 0)
        return;
    fuzz_check(kept >= 28 && (size_t)d.payload + 28 <= size, "payload %u of a %zu-byte packet", d.payload, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    switch (data[0] % 5) {
    case 0:
        dns(data + 1, size - 1);
        break;
    case 1:
        first(data + 1, size - 1);
        break;
    case 3:
        connect_head(data + 1, size - 1);
        break;
    case 4:
        datagram(data + 1, size - 1);
        break;
    default:
        patterns(data + 1, size - 1);
        break;
    }
    return 0;
}

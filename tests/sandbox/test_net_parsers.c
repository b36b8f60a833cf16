/* The network allow-list's parsers and rules alone (no sandbox): host patterns and their matching
 * (shared/net_policy.c), the private-address rule, DNS queries and answers (egress/dns_wire.c), and
 * the server name of a connection's first bytes (egress/first_bytes.c). */
#include "connect_head.h"
#include "datagram.h"
#include "dns_wire.h"
#include "first_bytes.h"
#include "net_policy.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static struct dshx__net_pattern pat(const char *text)
{
    struct dshx__net_pattern p;
    const char *why = NULL;
    cr_assert_eq(dshx__net_pattern_parse(text, &p, &why), 0, "%s: %s", text, why);
    return p;
}

static const char *refusal(const char *text)
{
    struct dshx__net_pattern p;
    const char *why = NULL;
    return dshx__net_pattern_parse(text, &p, &why) < 0 ? why : NULL;
}

Test(net_policy, patterns_parse_strictly)
{
    struct dshx__net_pattern p = pat("*.Example.COM:8443");
    cr_assert(p.wildcard);
    cr_assert_str_eq(p.name, "example.com");
    cr_assert_eq(p.port, 8443);
    p = pat("api.example.com");
    cr_assert(!p.wildcard);
    cr_assert_eq(p.port, 0);
    static const char port_msg[] = "the port must be a number from 1 to 65535";
    static const char name_msg[] = "not a host name (letters, digits, `-` and `_` in dot-separated labels; "
                                   "no IP literal)";
    cr_assert_str_eq(refusal("a.test:0"), port_msg);
    cr_assert_str_eq(refusal("a.test:65536"), port_msg);
    cr_assert_str_eq(refusal("a.test:"), port_msg);
    cr_assert_str_eq(refusal("a.test:08"), port_msg);
    cr_assert_str_eq(refusal("*"), "a wildcard is only `*.` before a name");
    cr_assert_str_eq(refusal("a.*.test"), "a wildcard is only `*.` before a name");
    cr_assert_str_eq(refusal("*example.com"), "a wildcard is only `*.` before a name");
    cr_assert_str_eq(refusal("a.test."), "a name has no trailing dot here");
    cr_assert_str_eq(refusal("10.0.0.1"), name_msg);
    cr_assert_str_eq(refusal("[::1]"), port_msg); /* an IPv6 literal reads as a bad port */
    cr_assert_str_eq(refusal("-a.test"), name_msg);
    cr_assert_str_eq(refusal("a..test"), name_msg);
    cr_assert_str_eq(refusal(""), name_msg);
}

Test(net_policy, deny_wins_and_ports_default_to_web)
{
    struct dshx__net_pattern allow[] = {pat("*.example.com"), pat("db.internal.test:5432")};
    struct dshx__net_pattern deny[] = {pat("secret.example.com"), pat("api.example.com:80")};
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "api.example.com", 443), DSHX_NET_OK);
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "api.example.com", 80), DSHX_NET_DENIED);
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "api.example.com", 0), DSHX_NET_OK,
                 "a question is refused only by a port-less deny pattern");
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "secret.example.com", 0), DSHX_NET_DENIED);
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "a.b.example.com", 443), DSHX_NET_OK);
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "example.com", 443), DSHX_NET_NOT_ALLOWED,
                 "a wildcard names what lies below, not the suffix itself");
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "badexample.com", 443), DSHX_NET_NOT_ALLOWED);
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "api.example.com", 8080), DSHX_NET_PORT);
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "db.internal.test", 5432), DSHX_NET_OK);
    cr_assert_eq(dshx__net_decide(allow, 2, deny, 2, "db.internal.test", 443), DSHX_NET_PORT);
    uint16_t ports[DSHX_NET_MAX_PORTS];
    cr_assert_eq(dshx__net_ports(allow, 2, ports), 3);
    cr_assert(ports[0] == 80 && ports[1] == 443 && ports[2] == 5432);
    cr_assert_str_eq(dshx__net_verdict_text(DSHX_NET_DENIED), "matches a deny pattern");
}

static bool private_text(const char *text)
{
    struct sockaddr_storage ss = {0};
    if (strchr(text, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        cr_assert_eq(inet_pton(AF_INET6, text, &a->sin6_addr), 1);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        cr_assert_eq(inet_pton(AF_INET, text, &a->sin_addr), 1);
    }
    return dshx__net_address_private((struct sockaddr *)&ss);
}

Test(net_policy, private_addresses_in_every_form)
{
    static const char *const private_ones[] = {
        "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
        "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1",
        "fd12:3456::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1",
        "64:ff9b::a9fe:a9fe", "ff02::1"};
    static const char *const public_ones[] = {"93.184.216.34", "172.32.0.1", "8.8.8.8",
                                              "2606:4700::1111", "::ffff:8.8.8.8"};
    for (size_t i = 0; i < sizeof(private_ones) / sizeof(*private_ones); i++)
        cr_assert(private_text(private_ones[i]), "%s is private", private_ones[i]);
    for (size_t i = 0; i < sizeof(public_ones) / sizeof(*public_ones); i++)
        cr_assert(!private_text(public_ones[i]), "%s is public", public_ones[i]);
}

static const uint8_t query[] = {0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                7,    'a',  'l',  'l',  'o',  'w',  'e',  'd',  4,    't',  'e',  's',
                                't',  0,    0x00, 0x01, 0x00, 0x01};

Test(dns_wire, a_query_and_its_answer)
{
    struct dshx__dns_query q;
    cr_assert_eq(dshx__dns_parse_query(query, sizeof query, &q), 0);
    cr_assert_str_eq(q.name, "allowed.test");
    cr_assert_eq(q.qtype, DSHX_DNS_TYPE_A);
    cr_assert_eq(q.id, 0x1234);
    uint8_t out[DSHX_DNS_MAX_QUERY + 32];
    static const uint8_t addr[4] = {127, 77, 0, 1};
    size_t n = dshx__dns_answer(&q, DSHX_DNS_NOERROR, 1, addr, 60, out);
    static const uint8_t want_tail[] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 77, 0, 1};
    cr_assert_eq(n, sizeof query + sizeof want_tail);
    cr_assert_eq(out[2], 0x85, "QR, AA, RD");
    cr_assert_eq(out[3], 0x80, "RA, NOERROR");
    cr_assert_eq(out[7], 1, "one answer");
    cr_assert_eq(memcmp(out + sizeof query, want_tail, sizeof want_tail), 0);
    n = dshx__dns_answer(&q, DSHX_DNS_NXDOMAIN, 0, addr, 60, out);
    cr_assert_eq(n, sizeof query);
    cr_assert_eq(out[3], 0x83, "NXDOMAIN");
}

Test(dns_wire, refuses_what_is_no_plain_query)
{
    struct dshx__dns_query q;
    uint8_t m[sizeof query];
    memcpy(m, query, sizeof m);
    m[2] |= 0x80; /* a response */
    cr_assert_eq(dshx__dns_parse_query(m, sizeof m, &q), -1);
    memcpy(m, query, sizeof m);
    m[5] = 2; /* two questions */
    cr_assert_eq(dshx__dns_parse_query(m, sizeof m, &q), -1);
    memcpy(m, query, sizeof m);
    m[12] = 0xc0; /* a compression pointer */
    cr_assert_eq(dshx__dns_parse_query(m, sizeof m, &q), -1);
    cr_assert_eq(dshx__dns_parse_query(query, sizeof query - 1, &q), -1, "truncated");
    memcpy(m, query, sizeof m);
    m[12] = 60; /* a label beyond the message */
    cr_assert_eq(dshx__dns_parse_query(m, sizeof m, &q), -1);
}

/* A ClientHello record naming sni (NULL: no server_name extension). */
static size_t client_hello(const char *sni, uint8_t *out)
{
    uint8_t ext[300];
    size_t e = 0;
    if (sni) {
        size_t n = strlen(sni);
        uint8_t h[] = {0, 0, 0, (uint8_t)(n + 5), 0, (uint8_t)(n + 3), 0, 0, (uint8_t)n};
        memcpy(ext, h, sizeof h);
        memcpy(ext + sizeof h, sni, n);
        e = sizeof h + n;
    }
    uint8_t versions[] = {0, 0x2b, 0, 3, 2, 3, 4};
    memcpy(ext + e, versions, sizeof versions);
    e += sizeof versions;
    uint8_t body[400];
    size_t b = 0;
    body[b++] = 3;
    body[b++] = 3;
    memset(body + b, 0x11, 32);
    b += 32;
    body[b++] = 0;                       /* session id */
    body[b++] = 0, body[b++] = 2;        /* one cipher suite */
    body[b++] = 0x13, body[b++] = 0x01;
    body[b++] = 1, body[b++] = 0;        /* null compression */
    body[b++] = (uint8_t)(e >> 8), body[b++] = (uint8_t)e;
    memcpy(body + b, ext, e);
    b += e;
    size_t hs = b + 4, o = 0;
    out[o++] = 0x16, out[o++] = 3, out[o++] = 1, out[o++] = (uint8_t)(hs >> 8), out[o++] = (uint8_t)hs;
    out[o++] = 1, out[o++] = 0, out[o++] = (uint8_t)(b >> 8), out[o++] = (uint8_t)b;
    memcpy(out + o, body, b);
    return o + b;
}

Test(first_bytes, tls_server_name)
{
    uint8_t hello[512];
    char name[256];
    int tls;
    size_t n = client_hello("Allowed.Test", hello);
    cr_assert_eq(dshx__first_bytes_inspect(hello, n, name, &tls), DSHX_FIRST_NAMED);
    cr_assert_str_eq(name, "Allowed.Test");
    cr_assert_eq(tls, 1);
    cr_assert_eq(dshx__first_bytes_inspect(hello, n - 1, name, &tls), DSHX_FIRST_MORE, "a record cut short");
    n = client_hello(NULL, hello);
    cr_assert_eq(dshx__first_bytes_inspect(hello, n, name, &tls), DSHX_FIRST_UNNAMED);
    n = client_hello("a.test", hello);
    hello[3] = 0x50; /* a record longer than TLS allows */
    cr_assert_eq(dshx__first_bytes_inspect(hello, n, name, &tls), DSHX_FIRST_MALFORMED);
}

static enum dshx__first_bytes http(const char *text, char *name)
{
    int tls;
    return dshx__first_bytes_inspect((const unsigned char *)text, strlen(text), name, &tls);
}

Test(first_bytes, http_host)
{
    char name[256];
    cr_assert_eq(http("GET / HTTP/1.1\r\nAccept: */*\r\nHost:  allowed.test:8443 \r\n\r\n", name), DSHX_FIRST_NAMED);
    cr_assert_str_eq(name, "allowed.test");
    cr_assert_eq(http("GET / HTTP/1.1\r\nHost: a.test\r\n", name), DSHX_FIRST_MORE);
    cr_assert_eq(http("GET / HTTP/1.1\r\nHost: a.test\r\nhost: b.test\r\n\r\n", name), DSHX_FIRST_UNNAMED);
    cr_assert_eq(http("GET / HTTP/1.1\r\nAccept: x\r\n\r\n", name), DSHX_FIRST_UNNAMED);
    cr_assert_eq(http("GET / HTTP/1.1\r\nHost: a.test:x\r\n\r\n", name), DSHX_FIRST_MALFORMED);
    cr_assert_eq(http("GET /\r\n\r\n", name), DSHX_FIRST_MALFORMED);
    cr_assert_eq(http("SSH-2.0-OpenSSH\r\n", name), DSHX_FIRST_OTHER);
    cr_assert_eq(http("GE", name), DSHX_FIRST_MORE);
}

static enum dshx__connect_head connect_head(const char *text, char *host, uint16_t *port, size_t *head)
{
    return dshx__connect_head_parse((const unsigned char *)text, strlen(text), host, port, head);
}

Test(connect_head, the_proxy_port_reads_connect_requests)
{
    char host[256];
    uint16_t port = 0;
    size_t head = 0;
    static const char req[] = "CONNECT allowed.test:8443 HTTP/1.1\r\nHost: allowed.test:8443\r\n\r\n\x16\x03";
    cr_assert_eq(connect_head(req, host, &port, &head), DSHX_CONNECT_OK);
    cr_assert_str_eq(host, "allowed.test");
    cr_assert_eq(port, 8443);
    cr_assert_eq(head, sizeof req - 3, "the bytes after the head stay for the TLS check");
    cr_assert_eq(connect_head("CONNECT a.test:443 HTTP/1.1\r\n", host, &port, &head), DSHX_CONNECT_MORE);
    cr_assert_eq(connect_head("CONN", host, &port, &head), DSHX_CONNECT_MORE);
    cr_assert_eq(connect_head("GET / HTTP/1.1\r\n\r\n", host, &port, &head), DSHX_CONNECT_MALFORMED);
    cr_assert_eq(connect_head("CONNECT a.test HTTP/1.1\r\n\r\n", host, &port, &head), DSHX_CONNECT_MALFORMED);
    cr_assert_eq(connect_head("CONNECT a.test:0 HTTP/1.1\r\n\r\n", host, &port, &head), DSHX_CONNECT_MALFORMED);
    cr_assert_eq(connect_head("CONNECT a.test:70000 HTTP/1.1\r\n\r\n", host, &port, &head), DSHX_CONNECT_MALFORMED);
    cr_assert_eq(connect_head("CONNECT :443 HTTP/1.1\r\n\r\n", host, &port, &head), DSHX_CONNECT_MALFORMED);
    cr_assert_eq(connect_head("CONNECT a.test:443 HTTP/2\r\n\r\n", host, &port, &head), DSHX_CONNECT_MALFORMED);
    cr_assert_eq(connect_head("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", host, &port, &head), DSHX_CONNECT_OK);
    cr_assert_str_eq(host, "[::1]", "an IPv6 literal comes out as it is: no host name, refused as a literal");
}

Test(datagram, a_captured_udp_header_and_what_is_not_one)
{
    /* 127.0.0.1:40000 -> 198.51.100.7:443, 8 bytes of payload, an IP header with 4 option bytes. */
    unsigned char p[] = {0x46, 0, 0, 40, 0, 0, 0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 198, 51, 100, 7, 1, 1, 1, 1,
                         0x9c, 0x40, 0x01, 0xbb, 0, 16, 0, 0, 'p', 'r', 'o', 'g', 'r', 'a', 'm', 0};
    struct dshx__datagram d;
    cr_assert_eq(dshx__datagram_parse(p, sizeof p, sizeof p, &d), 0);
    cr_expect_eq(d.destination, 0xc6336407u);
    cr_expect_eq(d.port, 443);
    cr_expect_eq(d.payload, 8);
    /* Captured only to the UDP header: the length is the header's, bounded by the packet's. */
    cr_assert_eq(dshx__datagram_parse(p, 32, sizeof p, &d), 0);
    cr_expect_eq(d.payload, 8);
    p[28] = 0, p[29] = 200; /* a UDP length beyond the packet */
    cr_assert_eq(dshx__datagram_parse(p, sizeof p, sizeof p, &d), 0);
    cr_expect_eq(d.payload, 8, "never more than the packet carried");
    cr_expect_eq(dshx__datagram_parse(p, 31, sizeof p, &d), -1, "the UDP header cut");
    p[9] = 6;
    cr_expect_eq(dshx__datagram_parse(p, sizeof p, sizeof p, &d), -1, "TCP");
    p[9] = 17, p[7] = 1;
    cr_expect_eq(dshx__datagram_parse(p, sizeof p, sizeof p, &d), -1, "a later fragment");
    p[7] = 0, p[0] = 0x44;
    cr_expect_eq(dshx__datagram_parse(p, sizeof p, sizeof p, &d), -1, "a header shorter than 20 bytes");
    p[0] = 0x66;
    cr_expect_eq(dshx__datagram_parse(p, sizeof p, sizeof p, &d), -1, "IPv6");
}

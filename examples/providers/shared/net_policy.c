/* Host patterns of the network allow-list and the private-address rule (net_policy.h). */
#include "net_policy.h"

#include <arpa/inet.h>
#include <string.h>

static const char *const verdict_texts[] = {
#define DSHX_NET_VERDICT_TEXT(name, text) text,
    DSHX_NET_VERDICT_TABLE(DSHX_NET_VERDICT_TEXT)
#undef DSHX_NET_VERDICT_TEXT
};

const char *dshx__net_verdict_text(enum dshx__net_verdict v)
{
    return (size_t)v < sizeof(verdict_texts) / sizeof(verdict_texts[0]) ? verdict_texts[v] : "?";
}

static bool label_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int dshx__net_name_normalize(const char *name, size_t len, char *out)
{
    if (len > 0 && name[len - 1] == '.')
        len--;
    if (len == 0 || len > DSHX_NET_NAME_MAX)
        return -1;
    size_t label = 0;
    bool last_all_digits = true;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c == '.') {
            if (label == 0 || out[i - 1] == '-')
                return -1;
            label = 0;
            last_all_digits = true;
        } else {
            if (!label_char(c) || (label == 0 && c == '-') || ++label > 63)
                return -1;
            if (c < '0' || c > '9')
                last_all_digits = false;
        }
        out[i] = c;
    }
    if (out[len - 1] == '-' || last_all_digits) /* an all-digit last label: an IPv4 literal */
        return -1;
    out[len] = '\0';
    return 0;
}

int dshx__net_pattern_parse(const char *text, struct dshx__net_pattern *ret, const char **ret_why)
{
    memset(ret, 0, sizeof(*ret));
    const char *colon = strchr(text, ':');
    size_t len = colon ? (size_t)(colon - text) : strlen(text);
    if (colon) {
        const char *p = colon + 1;
        unsigned long port = 0;
        if (!*p || *p == '0') {
            *ret_why = "the port must be a number from 1 to 65535";
            return -1;
        }
        for (; *p; p++) {
            if (*p < '0' || *p > '9' || (port = port * 10 + (unsigned long)(*p - '0')) > 65535) {
                *ret_why = "the port must be a number from 1 to 65535";
                return -1;
            }
        }
        ret->port = (uint16_t)port;
    }
    if (len >= 2 && text[0] == '*' && text[1] == '.') {
        ret->wildcard = true;
        text += 2;
        len -= 2;
    }
    if (memchr(text, '*', len)) {
        *ret_why = "a wildcard is only `*.` before a name";
        return -1;
    }
    if (len > 0 && text[len - 1] == '.') {
        *ret_why = "a name has no trailing dot here";
        return -1;
    }
    if (dshx__net_name_normalize(text, len, ret->name) < 0) {
        *ret_why = "not a host name (letters, digits, `-` and `_` in dot-separated labels; "
                   "no IP literal)";
        return -1;
    }
    return 0;
}

bool dshx__net_pattern_matches(const struct dshx__net_pattern *p, const char *name, uint16_t port)
{
    if (!p->wildcard) {
        if (strcmp(p->name, name) != 0)
            return false;
    } else {
        size_t n = strlen(name), s = strlen(p->name);
        if (n <= s + 1 || name[n - s - 1] != '.' || strcmp(name + n - s, p->name) != 0)
            return false;
    }
    return port == 0 || p->port == 0 || p->port == port;
}

static bool allow_port(const struct dshx__net_pattern *p, uint16_t port)
{
    if (port == 0)
        return true;
    return p->port ? p->port == port : (port == 80 || port == 443);
}

enum dshx__net_verdict dshx__net_decide(const struct dshx__net_pattern *allow, size_t nallow,
                                        const struct dshx__net_pattern *deny, size_t ndeny,
                                        const char *name, uint16_t port)
{
    for (size_t i = 0; i < ndeny; i++) /* a question (port 0) is refused by port-less ones */
        if ((port || !deny[i].port) && dshx__net_pattern_matches(&deny[i], name, port))
            return DSHX_NET_DENIED;
    bool named = false;
    for (size_t i = 0; i < nallow; i++) {
        if (!dshx__net_pattern_matches(&allow[i], name, 0))
            continue;
        named = true;
        if (allow_port(&allow[i], port))
            return DSHX_NET_OK;
    }
    return named ? DSHX_NET_PORT : DSHX_NET_NOT_ALLOWED;
}

static int add_port(uint16_t *ports, int n, uint16_t port)
{
    for (int i = 0; i < n; i++)
        if (ports[i] == port)
            return n;
    if (n >= DSHX_NET_MAX_PORTS)
        return -1;
    int i = n;
    while (i > 0 && ports[i - 1] > port) {
        ports[i] = ports[i - 1];
        i--;
    }
    ports[i] = port;
    return n + 1;
}

int dshx__net_ports(const struct dshx__net_pattern *allow, size_t nallow, uint16_t *ports)
{
    int n = 0;
    for (size_t i = 0; i < nallow && n >= 0; i++) {
        if (allow[i].port)
            n = add_port(ports, n, allow[i].port);
        else if ((n = add_port(ports, n, 80)) >= 0)
            n = add_port(ports, n, 443);
    }
    return n;
}

static bool v4_private(uint32_t a) /* host byte order */
{
    uint8_t b0 = (uint8_t)(a >> 24), b1 = (uint8_t)(a >> 16);
    return b0 == 0 || b0 == 10 || b0 == 127 || b0 >= 224 /* multicast, reserved, broadcast */ ||
           (b0 == 100 && (b1 & 0xc0) == 64) || (b0 == 169 && b1 == 254) ||
           (b0 == 172 && (b1 & 0xf0) == 16) || (b0 == 192 && b1 == 168) ||
           (b0 == 192 && b1 == 0 && (uint8_t)(a >> 8) == 0) /* 192.0.0/24 */ ||
           (b0 == 198 && (b1 & 0xfe) == 18) /* benchmarking */;
}

bool dshx__net_address_private(const struct sockaddr *addr)
{
    if (addr->sa_family == AF_INET)
        return v4_private(ntohl(((const struct sockaddr_in *)addr)->sin_addr.s_addr));
    if (addr->sa_family != AF_INET6)
        return true;
    const uint8_t *b = ((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const uint8_t compat[12] = {0};
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (!memcmp(b, mapped, 12) || !memcmp(b, compat, 12) || !memcmp(b, nat64, 12)) {
        uint32_t v4 = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
        return v4_private(v4); /* :: and ::1 fall here too (0.0.0.0/8) */
    }
    return b[0] == 0xff /* multicast */ || (b[0] & 0xfe) == 0xfc /* ULA */ ||
           (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) /* link-local */ ||
           (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) /* site-local */ ||
           (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) /* documentation */;
}

/* TLS ClientHello SNI and HTTP Host parsing (first_bytes.h). Every length is checked against
 * the bytes at hand before use; nothing is allocated. */
#include "first_bytes.h"

#include <string.h>

struct cursor {
    const unsigned char *p;
    size_t n;
    int bad;
};

static unsigned take(struct cursor *c, size_t k) /* a big-endian number of k <= 3 bytes */
{
    unsigned v = 0;
    if (c->bad || c->n < k) {
        c->bad = 1;
        return 0;
    }
    for (size_t i = 0; i < k; i++)
        v = v << 8 | c->p[i];
    c->p += k;
    c->n -= k;
    return v;
}

static struct cursor sub(struct cursor *c, size_t k) /* the next k bytes as a cursor of their own */
{
    struct cursor s = {c->p, k, c->bad || c->n < k};
    if (!s.bad) {
        c->p += k;
        c->n -= k;
    } else {
        c->bad = 1;
    }
    return s;
}

static enum dshx__first_bytes tls(const unsigned char *buf, size_t len, char name[256])
{
    if (len < 5)
        return DSHX_FIRST_MORE;
    size_t record = (size_t)buf[3] << 8 | buf[4];
    if (buf[1] != 3 || record == 0 || record > 16384)
        return DSHX_FIRST_MALFORMED;
    if (len < 5 + record)
        return DSHX_FIRST_MORE;
    struct cursor c = {buf + 5, record, 0};
    if (take(&c, 1) != 1) /* handshake type: ClientHello */
        return DSHX_FIRST_MALFORMED;
    size_t hello_len = take(&c, 3);
    if (c.bad || hello_len > c.n) /* a ClientHello spread over several records is not followed */
        return DSHX_FIRST_UNNAMED;
    struct cursor h = sub(&c, hello_len);
    take(&h, 2);                     /* legacy version */
    sub(&h, 32);                     /* random */
    sub(&h, take(&h, 1));            /* session id */
    sub(&h, take(&h, 2));            /* cipher suites */
    sub(&h, take(&h, 1));            /* compression methods */
    if (h.bad)
        return DSHX_FIRST_MALFORMED;
    if (h.n == 0)
        return DSHX_FIRST_UNNAMED;   /* no extensions at all */
    struct cursor ext = sub(&h, take(&h, 2));
    if (h.bad)
        return DSHX_FIRST_MALFORMED;
    int found = 0;
    while (ext.n > 0) {
        unsigned type = take(&ext, 2);
        struct cursor body = sub(&ext, take(&ext, 2));
        if (ext.bad)
            return DSHX_FIRST_MALFORMED;
        if (type != 0)
            continue;
        if (found++) /* server_name twice */
            return DSHX_FIRST_MALFORMED;
        struct cursor list = sub(&body, take(&body, 2));
        if (body.bad || body.n != 0)
            return DSHX_FIRST_MALFORMED;
        int hosts = 0;
        while (list.n > 0) {
            unsigned kind = take(&list, 1);
            struct cursor host = sub(&list, take(&list, 2));
            if (list.bad || host.n == 0 || host.n > 255)
                return DSHX_FIRST_MALFORMED;
            if (kind != 0)
                continue;
            if (hosts++) /* one host_name only (RFC 6066) */
                return DSHX_FIRST_MALFORMED;
            if (memchr(host.p, 0, host.n))
                return DSHX_FIRST_MALFORMED;
            memcpy(name, host.p, host.n);
            name[host.n] = '\0';
        }
        if (!hosts)
            return DSHX_FIRST_UNNAMED;
    }
    return found ? DSHX_FIRST_NAMED : DSHX_FIRST_UNNAMED;
}

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static enum dshx__first_bytes http(const unsigned char *buf, size_t len, char name[256])
{
    /* The request line: METHOD SP target SP HTTP/1.x CRLF, then header lines up to an empty one. */
    const unsigned char *end = NULL;
    for (size_t i = 3; i < len; i++) {
        if (buf[i - 3] == '\r' && buf[i - 2] == '\n' && buf[i - 1] == '\r' && buf[i] == '\n') {
            end = buf + i + 1;
            break;
        }
    }
    if (!end)
        return len >= DSHX_FIRST_BYTES_MAX ? DSHX_FIRST_MALFORMED : DSHX_FIRST_MORE;
    const unsigned char *line = buf, *eol = memchr(buf, '\r', (size_t)(end - buf));
    const unsigned char *sp = memchr(line, ' ', (size_t)(eol - line));
    if (!sp || (size_t)(eol - line) < 9 || memcmp(eol - 8, "HTTP/1.", 7) != 0 || eol[-9] != ' ' ||
        sp >= eol - 9)
        return DSHX_FIRST_MALFORMED;
    int hosts = 0;
    for (line = eol + 2; line < end - 2; line = eol + 2) {
        eol = memchr(line, '\r', (size_t)(end - line));
        if (!eol || eol[1] != '\n')
            return DSHX_FIRST_MALFORMED;
        const unsigned char *colon = memchr(line, ':', (size_t)(eol - line));
        if (!colon || colon == line)
            return DSHX_FIRST_MALFORMED;
        if (colon - line != 4 || lower(line[0]) != 'h' || lower(line[1]) != 'o' ||
            lower(line[2]) != 's' || lower(line[3]) != 't')
            continue;
        if (hosts++)
            return DSHX_FIRST_UNNAMED; /* two Host headers: ambiguous */
        const unsigned char *v = colon + 1, *ve = eol;
        while (v < ve && (*v == ' ' || *v == '\t'))
            v++;
        while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        const unsigned char *port = memchr(v, ':', (size_t)(ve - v));
        if (port) {
            for (const unsigned char *d = port + 1; d < ve; d++)
                if (*d < '0' || *d > '9')
                    return DSHX_FIRST_MALFORMED;
            ve = port;
        }
        if (ve == v || ve - v > 255 || memchr(v, 0, (size_t)(ve - v)))
            return DSHX_FIRST_MALFORMED;
        memcpy(name, v, (size_t)(ve - v));
        name[ve - v] = '\0';
    }
    return hosts ? DSHX_FIRST_NAMED : DSHX_FIRST_UNNAMED;
}

enum dshx__first_bytes dshx__first_bytes_inspect(const unsigned char *buf, size_t len, char name[256],
                                                 int *ret_tls)
{
    *ret_tls = 0;
    name[0] = '\0';
    if (len == 0)
        return DSHX_FIRST_MORE;
    if (len > DSHX_FIRST_BYTES_MAX)
        len = DSHX_FIRST_BYTES_MAX;
    if (buf[0] == 0x16) {
        *ret_tls = 1;
        return tls(buf, len, name);
    }
    /* HTTP: an upper-case method token (at most 16 bytes) and a space. */
    size_t i = 0;
    while (i < len && i < 17 && buf[i] >= 'A' && buf[i] <= 'Z')
        i++;
    if (i == len && i < 17)
        return DSHX_FIRST_MORE;
    if (i == 0 || i > 16 || buf[i] != ' ')
        return DSHX_FIRST_OTHER;
    return http(buf, len, name);
}

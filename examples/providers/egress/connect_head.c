/* CONNECT request heads (connect_head.h). */
#include "connect_head.h"

#include <string.h>

enum dshx__connect_head dshx__connect_head_parse(const unsigned char *buf, size_t len, char host[256],
                                                 uint16_t *ret_port, size_t *ret_head_len)
{
    static const char method[] = "CONNECT ";
    size_t m = sizeof method - 1;
    if (memcmp(buf, method, len < m ? len : m) != 0)
        return DSHX_CONNECT_MALFORMED;
    size_t end = 0;
    for (size_t i = 3; i < len && i < DSHX_CONNECT_HEAD_MAX; i++) {
        if (buf[i - 3] == '\r' && buf[i - 2] == '\n' && buf[i - 1] == '\r' && buf[i] == '\n') {
            end = i + 1;
            break;
        }
    }
    if (!end)
        return len >= DSHX_CONNECT_HEAD_MAX ? DSHX_CONNECT_MALFORMED : DSHX_CONNECT_MORE;
    const unsigned char *eol = memchr(buf, '\r', end), *a = buf + m;
    if (!eol || eol[1] != '\n')
        return DSHX_CONNECT_MALFORMED;
    /* "host:port HTTP/1.x" up to the line's end. */
    const unsigned char *sp = memchr(a, ' ', (size_t)(eol - a));
    if (!sp || eol - sp != 9 || memcmp(sp + 1, "HTTP/1.", 7) != 0 || sp[8] < '0' || sp[8] > '9')
        return DSHX_CONNECT_MALFORMED;
    const unsigned char *colon = NULL;
    for (const unsigned char *p = a; p < sp; p++)
        if (*p == ':')
            colon = p;
    if (!colon || colon == a || colon - a > 255 || sp - colon < 2 || sp - colon > 6)
        return DSHX_CONNECT_MALFORMED;
    unsigned long port = 0;
    for (const unsigned char *p = colon + 1; p < sp; p++) {
        if (*p < '0' || *p > '9')
            return DSHX_CONNECT_MALFORMED;
        port = port * 10 + (unsigned long)(*p - '0');
    }
    if (port == 0 || port > 65535 || memchr(a, 0, (size_t)(colon - a)))
        return DSHX_CONNECT_MALFORMED;
    memcpy(host, a, (size_t)(colon - a));
    host[colon - a] = '\0';
    *ret_port = (uint16_t)port;
    *ret_head_len = end;
    return DSHX_CONNECT_OK;
}

/* Strict JSON text validated and measured without building a tree (dshh.h, "json_span.c"): dsh
 * passes a downstream server's answers on as the text it received, so a large answer costs its
 * bytes, not a json-c object per value (examples/host/README.md, "Downstream MCP servers"). The
 * rules are those of common/dsh_json_strict.h: RFC 8259, UTF-8 validated, bounded nesting. */
#include "dsh_json_strict.h"
#include "dshh.h"

#include <stdint.h>
#include <string.h>

struct scan {
    const char *p, *end;
    size_t nodes;
};

static void space(struct scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int unit(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        if (hex(p[i]) < 0)
            return -1;
        v = v * 16 + hex(p[i]);
    }
    return v;
}

/* One UTF-8 sequence at p (not ASCII): its length, or 0 when invalid (overlong, surrogate,
 * beyond U+10FFFF, truncated). */
static size_t utf8(const unsigned char *p, const unsigned char *end)
{
    size_t n = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (!n || p[0] > 0xF4 || (size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] > 0x9F) || (p[0] == 0xF0 && p[1] < 0x90) ||
        (p[0] == 0xF4 && p[1] > 0x8F))
        return 0;
    return n;
}

/* A string starting at its opening quote. */
static bool string(struct scan *s)
{
    s->p++;
    while (s->p < s->end) {
        unsigned char c = (unsigned char)*s->p;
        if (c == '"') {
            s->p++;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (s->end - s->p < 2)
                return false;
            char e = s->p[1];
            if (e != 'u') {
                if (!strchr("\"\\/bfnrt", e) || !e)
                    return false;
                s->p += 2;
                continue;
            }
            int u = s->end - s->p >= 6 ? unit(s->p + 2) : -1;
            if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
                return false;
            s->p += 6;
            if (u >= 0xD800 && u <= 0xDBFF) { /* a high surrogate needs its low half */
                int low = s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u' ? unit(s->p + 2) : -1;
                if (low < 0xDC00 || low > 0xDFFF)
                    return false;
                s->p += 6;
            }
            continue;
        }
        if (c < 0x80) {
            s->p++;
            continue;
        }
        size_t n = utf8((const unsigned char *)s->p, (const unsigned char *)s->end);
        if (!n)
            return false;
        s->p += n;
    }
    return false;
}

static bool digits(struct scan *s)
{
    const char *start = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    return s->p > start;
}

static bool number(struct scan *s)
{
    if (*s->p == '-')
        s->p++;
    if (s->p < s->end && *s->p == '0')
        s->p++;
    else if (!digits(s))
        return false;
    if (s->p < s->end && *s->p == '.' && (s->p++, !digits(s)))
        return false;
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (!digits(s))
            return false;
    }
    return true;
}

static bool word(struct scan *s, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0)
        return false;
    s->p += n;
    return true;
}

static bool value(struct scan *s, int depth)
{
    space(s);
    if (s->p >= s->end || depth > DSH_JSON_MAX_DEPTH)
        return false;
    s->nodes++;
    char c = *s->p;
    if (c == '"')
        return string(s);
    if (c == 't')
        return word(s, "true");
    if (c == 'f')
        return word(s, "false");
    if (c == 'n')
        return word(s, "null");
    if (c != '{' && c != '[')
        return number(s);
    char close = c == '{' ? '}' : ']';
    s->p++;
    space(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        return true;
    }
    for (;;) {
        if (c == '{') {
            space(s);
            if (s->p >= s->end || *s->p != '"' || !string(s))
                return false;
            space(s);
            if (s->p >= s->end || *s->p++ != ':')
                return false;
        }
        if (!value(s, depth + 1))
            return false;
        space(s);
        if (s->p >= s->end)
            return false;
        if (*s->p == close) {
            s->p++;
            return true;
        }
        if (*s->p++ != ',')
            return false;
    }
}

bool dshh__json_check(const char *text, size_t len, size_t *ret_nodes)
{
    struct scan s = {.p = text, .end = text + len};
    bool ok = value(&s, 1);
    space(&s);
    if (ret_nodes)
        *ret_nodes = s.nodes;
    return ok && s.p == s.end;
}

/* Whether the member name (a checked string, quotes included) is key. */
static bool name_is(const char *quoted, size_t len, const char *key)
{
    char decoded[64];
    size_t n;
    if (len - 2 > sizeof decoded || !dsh_json_decode_string(quoted + 1, quoted + len, decoded, &n))
        return false;
    return n == strlen(key) && memcmp(decoded, key, n) == 0;
}

bool dshh__json_members(const char *text, size_t len, const char *const *keys, struct dshh_json_span *ret)
{
    for (size_t k = 0; keys[k]; k++)
        ret[k] = (struct dshh_json_span){0};
    struct scan s = {.p = text, .end = text + len};
    space(&s);
    if (s.p >= s.end || *s.p++ != '{')
        return false;
    space(&s);
    if (s.p < s.end && *s.p == '}')
        return true;
    for (;;) {
        space(&s);
        const char *name = s.p;
        if (s.p >= s.end || *s.p != '"' || !string(&s))
            return false;
        size_t name_len = (size_t)(s.p - name);
        space(&s);
        if (s.p >= s.end || *s.p++ != ':')
            return false;
        space(&s);
        const char *start = s.p;
        if (!value(&s, 2))
            return false;
        for (size_t k = 0; keys[k]; k++)
            if (name_is(name, name_len, keys[k])) /* the last of repeated names, as json-c */
                ret[k] = (struct dshh_json_span){start, (size_t)(s.p - start)};
        space(&s);
        if (s.p >= s.end)
            return false;
        if (*s.p == '}')
            return true;
        if (*s.p++ != ',')
            return false;
    }
}

bool dshh__json_elements(const char *text, size_t len, dshh_json_element_fn fn, void *arg)
{
    struct scan s = {.p = text, .end = text + len};
    space(&s);
    if (s.p >= s.end || *s.p++ != '[')
        return false;
    space(&s);
    if (s.p < s.end && *s.p == ']')
        return true;
    for (size_t i = 0;; i++) {
        space(&s);
        const char *start = s.p;
        if (!value(&s, 2))
            return false;
        if (!fn(arg, i, (struct dshh_json_span){start, (size_t)(s.p - start)}))
            return false;
        space(&s);
        if (s.p >= s.end)
            return false;
        if (*s.p == ']')
            return true;
        if (*s.p++ != ',')
            return false;
    }
}

/* See dsh_json_strict.h. A small recursive-descent parser of RFC 8259 text that builds json-c
 * objects itself: json-c's tokener, even in strict mode, accepts single-quoted strings, NaN and
 * Infinity, and clamps integers beyond 64 bits. Numbers keep their exact value: integers that fit
 * become int64 (or uint64), every other number a double that serializes with its original text. */
#include "dsh_json_strict.h"

#include <errno.h>
#include <json-c/printbuf.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct parser {
    const char *p, *end;
    int depth;
    size_t nodes_left; /* the node budget of the tree being built */
    bool failed;
    bool nul_names; /* member names may contain NUL (dsh_json_parse_strict_value) */
};

static json_object *fail(struct parser *ps)
{
    ps->failed = true;
    return NULL;
}

static void skip_space(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static bool literal(struct parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return false;
    ps->p += n;
    return true;
}

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the well-formed UTF-8 sequence at s (no overlongs, surrogates or values past
 * U+10FFFF), or 0. */
static size_t utf8_length(const unsigned char *s, const unsigned char *end)
{
    size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || (size_t)(end - s) < n)
        return 0;
    uint32_t cp = n == 1 ? s[0] : n == 2 ? s[0] & 0x1Fu : n == 3 ? s[0] & 0x0Fu : s[0] & 0x07u;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Bytes in [p, end) before the first one a JSON string cannot copy as it is: a quote, a
 * backslash, a control character or a byte of a multi-byte sequence. Sixteen (SSE2) or eight
 * at a time: whole output texts pass through here. */
static size_t plain_prefix(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *s = p;
#ifdef __SSE2__
    const __m128i space = _mm_set1_epi8(0x20), quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    while (end - s >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
        /* Signed: bytes from 0x80 compare below 0x20 too. */
        __m128i special = _mm_or_si128(_mm_cmplt_epi8(v, space),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
        unsigned mask = (unsigned)_mm_movemask_epi8(special);
        if (mask)
            return (size_t)(s - p) + (size_t)__builtin_ctz(mask);
        s += 16;
    }
#else
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = ones * 0x80;
    while (end - s >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
        uint64_t special = ((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote) |
                           ((backslash - ones) & ~backslash) | w;
        if (special & highs)
            break;
        s += 8;
    }
#endif
    while (s < end && *s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
        s++;
    return (size_t)(s - p);
}

/* The strict string body at p (see dsh_json_decode_string); out NULL only validates. */
static const char *string_body(const char *p, const char *end, char *out, size_t *ret_len)
{
    size_t len = 0;
    char scratch[4];
    while (p < end) {
        size_t plain = plain_prefix((const unsigned char *)p, (const unsigned char *)end);
        if (plain) {
            if (out && out + len != p)
                memmove(out + len, p, plain);
            len += plain;
            p += plain;
            continue;
        }
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            *ret_len = len;
            return p + 1;
        }
        if (c < 0x20)
            return NULL;
        if (c != '\\') {
            size_t n = utf8_length((const unsigned char *)p, (const unsigned char *)end);
            if (n == 0)
                return NULL;
            if (out)
                memmove(out + len, p, n);
            len += n;
            p += n;
            continue;
        }
        if (end - p < 2)
            return NULL;
        char e = p[1];
        p += 2;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e != '\0' && simple) {
            if (out)
                out[len] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            len++;
            continue;
        }
        if (e != 'u' || end - p < 4)
            return NULL;
        int unit = hex4(p);
        p += 4;
        if (unit < 0)
            return NULL;
        uint32_t cp = (uint32_t)unit;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return NULL; /* a lone low surrogate has no UTF-8 form */
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
                return NULL;
            int low = hex4(p + 2);
            if (low < 0xDC00 || low > 0xDFFF)
                return NULL;
            p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)low - 0xDC00);
        }
        /* An escape takes at least as many bytes as the UTF-8 it stands for (6 for up to 3,
         * 12 for 4), so decoding in place never overtakes the input. */
        len += put_utf8(out ? out + len : scratch, cp);
    }
    return NULL;
}

const char *dsh_json_decode_string(const char *p, const char *end, char *out, size_t *ret_len)
{
    return string_body(p, end, out, ret_len);
}

/* What byte c becomes inside a JSON string as the project prints it (json-c's escapes with '/'
 * left as is): its escape's length and, when out is not NULL, the escape itself. */
static size_t escape_byte(unsigned char c, char *out)
{
    static const char named[] = "btn\0fr";
    char name = c == '"' || c == '\\' ? (char)c : c >= 0x08 && c <= 0x0d ? named[c - 0x08] : '\0';
    if (c >= 0x20 && c != '"' && c != '\\') {
        if (out)
            out[0] = (char)c;
        return 1;
    }
    if (name) {
        if (out) {
            out[0] = '\\';
            out[1] = name;
        }
        return 2;
    }
    if (out) {
        static const char hex[] = "0123456789abcdef";
        memcpy(out, "\\u00", 4);
        out[4] = hex[c >> 4];
        out[5] = hex[c & 0xf];
    }
    return 6;
}

size_t dsh_json_escaped_length(const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    size_t n = 0;
    while (p < end) {
        size_t plain = plain_prefix(p, end);
        n += plain;
        p += plain;
        /* Bytes of multi-byte sequences stop plain_prefix but stay as they are. */
        for (; p < end && (*p >= 0x80 || *p < 0x20 || *p == '"' || *p == '\\'); p++)
            n += *p >= 0x80 ? 1 : escape_byte(*p, NULL);
    }
    return n;
}

size_t dsh_json_escape(char *out, const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    size_t n = 0;
    while (p < end) {
        size_t plain = plain_prefix(p, end);
        memcpy(out + n, p, plain);
        n += plain;
        p += plain;
        for (; p < end && (*p >= 0x80 || *p < 0x20 || *p == '"' || *p == '\\'); p++) {
            if (*p >= 0x80)
                out[n++] = (char)*p;
            else
                n += escape_byte(*p, out + n);
        }
    }
    return n;
}

size_t dsh_json_escape_backward(char *buf, size_t len, size_t escaped_len, size_t shift)
{
    /* Every byte lands at or after where it was read (shift >= 0, escapes only grow), so no
     * byte is overwritten before it is read. Plain runs move with one memmove each. */
    size_t w = shift + escaped_len, r = len;
    if (escaped_len == len) {
        if (shift)
            memmove(buf + shift, buf, len);
        return w;
    }
    size_t total = w;
    while (r > 0) {
        size_t run = 0;
        while (run < r) {
            unsigned char c = (unsigned char)buf[r - run - 1];
            if (c < 0x20 || c == '"' || c == '\\')
                break;
            run++;
        }
        if (run) {
            w -= run;
            r -= run;
            if (w != r)
                memmove(buf + w, buf + r, run);
            continue;
        }
        char escaped[6];
        size_t n = escape_byte((unsigned char)buf[--r], escaped);
        w -= n;
        memcpy(buf + w, escaped, n);
    }
    return total;
}

static json_object *parse_string(struct parser *ps)
{
    ps->p++; /* the opening quote */
    /* The decoded text is never longer than its source up to the closing quote. */
    const char *close = ps->p;
    while (close < ps->end && *close != '"') {
        close += plain_prefix((const unsigned char *)close, (const unsigned char *)ps->end);
        if (close < ps->end && *close != '"')
            close += *close == '\\' && close + 1 < ps->end ? 2 : 1;
    }
    char *buf = malloc((size_t)(close - ps->p) + 1);
    size_t len = 0;
    if (!buf)
        return fail(ps);
    const char *after = dsh_json_decode_string(ps->p, ps->end, buf, &len);
    if (!after) {
        free(buf);
        return fail(ps);
    }
    ps->p = after;
    json_object *s = json_object_new_string_len(buf, (int)len);
    free(buf);
    return s ? s : fail(ps);
}

/* The end of the strict number at q, or NULL; *ret_integer: no fraction and no exponent. */
static const char *number_end(const char *q, const char *end, bool *ret_integer)
{
    *ret_integer = true;
    if (q < end && *q == '-')
        q++;
    if (q < end && *q == '0')
        q++;
    else if (q < end && *q >= '1' && *q <= '9')
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    else
        return NULL;
    if (q < end && *q == '.') {
        *ret_integer = false;
        if (++q >= end || *q < '0' || *q > '9')
            return NULL;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        *ret_integer = false;
        if (++q < end && (*q == '+' || *q == '-'))
            q++;
        if (q >= end || *q < '0' || *q > '9')
            return NULL;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
    }
    return q;
}

static json_object *parse_number(struct parser *ps)
{
    const char *start = ps->p;
    bool integer;
    const char *q = number_end(start, ps->end, &integer);
    if (!q)
        return fail(ps);
    ps->p = q;
    char text[512];
    size_t n = (size_t)(q - start);
    if (n >= sizeof text)
        return fail(ps);
    memcpy(text, start, n);
    text[n] = '\0';
    /* "-0" is no int64 (that would print as 0): it stays a double with its text, as JSON.parse
     * gives -0 for it. */
    if (integer && strcmp(text, "-0") != 0) {
        errno = 0;
        long long v = strtoll(text, NULL, 10);
        if (errno == 0)
            return json_object_new_int64(v);
        errno = 0;
        unsigned long long u = text[0] == '-' ? 0 : strtoull(text, NULL, 10);
        if (text[0] != '-' && errno == 0)
            return json_object_new_uint64(u);
    }
    /* Beyond 64-bit integers or fractional: a double that prints as it was written. */
    double d = strtod(text, NULL);
    if (!isfinite(d))
        return fail(ps);
    json_object *o = json_object_new_double_s(d, text);
    return o ? o : fail(ps);
}

static json_object *parse_value(struct parser *ps);

/* Skips whitespace and then c, if c is next. */
static bool consume(struct parser *ps, char c)
{
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return true;
    }
    return false;
}

static json_object *parse_array(struct parser *ps)
{
    ps->p++;
    json_object *array = json_object_new_array();
    if (!array)
        return fail(ps);
    if (consume(ps, ']'))
        return array;
    do {
        json_object *v = parse_value(ps);
        if (ps->failed || json_object_array_add(array, v) != 0) {
            json_object_put(v);
            goto bad;
        }
    } while (consume(ps, ','));
    if (consume(ps, ']'))
        return array;
bad:
    json_object_put(array);
    return fail(ps);
}

/* The members of an object one of whose names contains NUL. json-c keys are C strings, so such
 * a member cannot be a json-c member: every member of the object lives in this list, in text
 * order, and the object prints from it. Its NUL-free members are json-c members as well, so
 * looking them up works. */
struct named_members {
    size_t n, cap;
    struct named_member {
        json_object *name; /* a json-c string: it keeps the name's length */
        json_object *value;
    } *items;
};

static void free_named_members(json_object *object, void *userdata)
{
    (void)object;
    struct named_members *members = userdata;
    for (size_t i = 0; i < members->n; i++) {
        json_object_put(members->items[i].name);
        json_object_put(members->items[i].value);
    }
    free(members->items);
    free(members);
}

static int append_json(struct printbuf *pb, json_object *value, int flags)
{
    size_t len = 4;
    const char *text = value ? json_object_to_json_string_length(value, flags, &len) : "null";
    return text && len <= INT32_MAX ? printbuf_memappend(pb, text, (int)len) : -1;
}

static int print_named_members(json_object *object, struct printbuf *pb, int level, int flags)
{
    (void)level;
    const struct named_members *members = json_object_get_userdata(object);
    if (printbuf_memappend(pb, "{", 1) < 0)
        return -1;
    for (size_t i = 0; i < members->n; i++) {
        if ((i && printbuf_memappend(pb, ",", 1) < 0) || append_json(pb, members->items[i].name, flags) < 0 ||
            printbuf_memappend(pb, ":", 1) < 0 || append_json(pb, members->items[i].value, flags) < 0)
            return -1;
    }
    return printbuf_memappend(pb, "}", 1);
}

/* Records name: value (a reference of each is taken) in text order; a repeated name keeps its
 * first position and its last value, as JSON.parse does. */
static bool add_named_member(struct named_members *members, json_object *name, json_object *value)
{
    for (size_t i = 0; i < members->n; i++) {
        json_object *known = members->items[i].name;
        if (json_object_get_string_len(known) == json_object_get_string_len(name) &&
            memcmp(json_object_get_string(known), json_object_get_string(name),
                   (size_t)json_object_get_string_len(name)) == 0) {
            json_object_put(members->items[i].value);
            members->items[i].value = json_object_get(value);
            return true;
        }
    }
    if (members->n == members->cap) {
        size_t cap = members->cap ? members->cap * 2 : 8;
        struct named_member *items = realloc(members->items, cap * sizeof *items);
        if (!items)
            return false;
        members->items = items;
        members->cap = cap;
    }
    members->items[members->n++] = (struct named_member){json_object_get(name), json_object_get(value)};
    return true;
}

/* The list for `object` once a name with NUL appears, starting with the members before it. */
static struct named_members *start_named_members(json_object *object)
{
    struct named_members *members = calloc(1, sizeof *members);
    if (!members)
        return NULL;
    json_object_object_foreach(object, key, value)
    {
        json_object *name = json_object_new_string(key);
        bool ok = name && add_named_member(members, name, value);
        json_object_put(name);
        if (!ok) {
            free_named_members(object, members);
            return NULL;
        }
    }
    return members;
}

static json_object *parse_object(struct parser *ps)
{
    ps->p++;
    json_object *object = json_object_new_object();
    struct named_members *members = NULL;
    if (!object)
        return fail(ps);
    if (consume(ps, '}'))
        return object;
    do {
        skip_space(ps);
        if (ps->p >= ps->end || *ps->p != '"')
            goto bad;
        json_object *key = parse_string(ps);
        if (ps->failed)
            goto bad;
        /* json-c keys are C strings: a name with NUL is no json-c member (named_members). */
        bool has_nul = !dsh_json_is_text(key);
        bool usable = (!has_nul || ps->nul_names) && consume(ps, ':');
        json_object *v = usable ? parse_value(ps) : NULL;
        if (usable && !ps->failed && has_nul && !members && !(members = start_named_members(object)))
            usable = false;
        if (usable && !ps->failed && members && !add_named_member(members, key, v))
            usable = false;
        /* A repeated key keeps its last value, as JSON.parse does. json-c takes v's reference. */
        if (usable && !ps->failed && !has_nul &&
            json_object_object_add(object, json_object_get_string(key), v) == 0)
            v = NULL;
        else if (!usable || ps->failed || !has_nul)
            usable = false;
        json_object_put(v); /* the list holds its own reference of a NUL-named member's value */
        json_object_put(key);
        if (!usable || ps->failed)
            goto bad;
    } while (consume(ps, ','));
    if (consume(ps, '}')) {
        if (members)
            json_object_set_serializer(object, print_named_members, members, free_named_members);
        return object;
    }
bad:
    if (members)
        free_named_members(object, members);
    json_object_put(object);
    return fail(ps);
}

static json_object *parse_value(struct parser *ps)
{
    skip_space(ps);
    if (ps->p >= ps->end || ps->nodes_left == 0)
        return fail(ps);
    ps->nodes_left--;
    switch (*ps->p) {
    case '{':
    case '[': {
        if (++ps->depth > DSH_JSON_MAX_DEPTH)
            return fail(ps);
        json_object *v = *ps->p == '{' ? parse_object(ps) : parse_array(ps);
        ps->depth--;
        return v;
    }
    case '"':
        return parse_string(ps);
    case 't':
        return literal(ps, "true") ? json_object_new_boolean(1) : fail(ps);
    case 'f':
        return literal(ps, "false") ? json_object_new_boolean(0) : fail(ps);
    case 'n':
        return literal(ps, "null") ? NULL : fail(ps);
    default:
        return parse_number(ps);
    }
}

static json_object *parse_text(const char *text, size_t len, bool nul_names)
{
    if (!text)
        return NULL;
    struct parser ps = {.p = text, .end = text + len, .nodes_left = SIZE_MAX, .nul_names = nul_names};
    json_object *v = parse_value(&ps);
    skip_space(&ps);
    if (ps.failed || ps.p != ps.end) {
        json_object_put(v);
        return NULL;
    }
    return v;
}

json_object *dsh_json_parse_strict(const char *text, size_t len)
{
    return parse_text(text, len, false);
}

json_object *dsh_json_parse_strict_value(const char *text, size_t len)
{
    return parse_text(text, len, true);
}

bool dsh_json_is_text(json_object *v)
{
    return json_object_is_type(v, json_type_string) &&
           strlen(json_object_get_string(v)) == (size_t)json_object_get_string_len(v);
}

/* ---- values as text: validated without a tree ---------------------------------------------- */

static const char *skip_blank(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

static const char *word_end(const char *p, const char *end, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

/* Whether the strict number text [p, end) (under 512 characters) is a finite double. */
static bool finite_number(const char *p, const char *end)
{
    char text[512];
    memcpy(text, p, (size_t)(end - p));
    text[end - p] = '\0';
    return isfinite(strtod(text, NULL));
}

const char *dsh_json_scan_value(const char *p, const char *end, size_t max_depth, struct dsh_json_extent *ret)
{
    /* One bit per open container (set: object), so the depth costs no C stack per level. */
    unsigned char objects[(DSH_JSON_VALUE_MAX_DEPTH + 1) / 8 + 1];
    size_t depth = 0, deepest = 0, nodes = 0;
    if (max_depth > DSH_JSON_VALUE_MAX_DEPTH + 1)
        max_depth = DSH_JSON_VALUE_MAX_DEPTH + 1;
    bool integer, expect_name = false;
    for (;;) {
        p = skip_blank(p, end);
        if (p >= end)
            return NULL;
        if (expect_name) {
            /* A member name, then ':' (names may contain NUL, as in JavaScript). */
            size_t n;
            if (*p != '"' || !(p = string_body(p + 1, end, NULL, &n)))
                return NULL;
            p = skip_blank(p, end);
            if (p >= end || *p != ':')
                return NULL;
            p = skip_blank(p + 1, end);
            if (p >= end)
                return NULL;
            expect_name = false;
        }
        char c = *p;
        if (c == '{' || c == '[') {
            if (depth >= max_depth)
                return NULL;
            if (c == '{')
                objects[depth / 8] |= (unsigned char)(1u << depth % 8);
            else
                objects[depth / 8] &= (unsigned char)~(1u << depth % 8);
            depth++;
            deepest = depth > deepest ? depth : deepest;
            p = skip_blank(p + 1, end);
            if (p < end && *p == (c == '{' ? '}' : ']')) {
                p++;
                depth--;
            } else {
                expect_name = c == '{';
                continue;
            }
        } else if (c == '"') {
            size_t n;
            p = string_body(p + 1, end, NULL, &n);
        } else if (c == 't') {
            p = word_end(p, end, "true");
        } else if (c == 'f') {
            p = word_end(p, end, "false");
        } else if (c == 'n') {
            p = word_end(p, end, "null");
        } else {
            const char *start = p;
            p = number_end(p, end, &integer);
            /* The tree parser's rules: at most 511 characters, and finite (1e400 is not). */
            if (p && (p - start >= 512 || ((!integer || p - start > 15) && !finite_number(start, p))))
                return NULL;
        }
        if (!p)
            return NULL;
        nodes++;
        /* After a complete value: close containers, or go on with the next element. */
        for (;;) {
            if (depth == 0) {
                if (ret)
                    *ret = (struct dsh_json_extent){nodes, deepest};
                return p;
            }
            p = skip_blank(p, end);
            if (p >= end)
                return NULL;
            bool in_object = objects[(depth - 1) / 8] >> (depth - 1) % 8 & 1u;
            if (*p == ',') {
                p++;
                expect_name = in_object;
                break;
            }
            if (*p != (in_object ? '}' : ']'))
                return NULL;
            p++;
            depth--;
            nodes++;
        }
    }
}

bool dsh_json_is_value(const char *text, size_t len, size_t max_depth, struct dsh_json_extent *ret)
{
    if (!text)
        return false;
    const char *end = text + len, *after = dsh_json_scan_value(text, end, max_depth, ret);
    return after && skip_blank(after, end) == end;
}

size_t dsh_json_compact(char *out, const char *text, size_t len)
{
    size_t n = 0;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            out[n++] = c;
            if (c == '\\' && i + 1 < len)
                out[n++] = text[++i];
            else if (c == '"')
                in_string = false;
        } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            out[n++] = c;
            in_string = c == '"';
        }
    }
    return n;
}

/* Steps through the container text[0..len) opened by `open`: visit(arg, index, name, value) for
 * each entry, name the quoted member name (NULL in an array); false when text is no such
 * container, an entry is not strict, or visit returns false. */
typedef bool (*entry_fn)(void *arg, size_t index, struct dsh_json_slice name, struct dsh_json_slice value);

static bool each_entry(const char *text, size_t len, char open, entry_fn visit, void *arg)
{
    if (!text)
        return false;
    const char *end = text + len, *p = skip_blank(text, end);
    if (p >= end || *p != open)
        return false;
    char close = open == '{' ? '}' : ']';
    p = skip_blank(p + 1, end);
    if (p < end && *p == close)
        return true;
    for (size_t index = 0;; index++) {
        struct dsh_json_slice name = {NULL, 0};
        p = skip_blank(p, end);
        if (open == '{') {
            size_t n;
            const char *after = p < end && *p == '"' ? string_body(p + 1, end, NULL, &n) : NULL;
            if (!after)
                return false;
            name = (struct dsh_json_slice){p, (size_t)(after - p)};
            p = skip_blank(after, end);
            if (p >= end || *p++ != ':')
                return false;
            p = skip_blank(p, end);
        }
        const char *after = dsh_json_scan_value(p, end, DSH_JSON_VALUE_MAX_DEPTH + 1, NULL);
        if (!after || !visit(arg, index, name, (struct dsh_json_slice){p, (size_t)(after - p)}))
            return false;
        p = skip_blank(after, end);
        if (p >= end)
            return false;
        if (*p == close)
            return true;
        if (*p++ != ',')
            return false;
    }
}

struct wanted_members {
    const char *const *names;
    struct dsh_json_slice *ret;
};

static bool take_member(void *arg, size_t index, struct dsh_json_slice name, struct dsh_json_slice value)
{
    (void)index;
    struct wanted_members *w = arg;
    char decoded[64];
    size_t n;
    /* Names longer than any wanted one need not be decoded (decoding never lengthens). */
    if (name.len - 2 > sizeof decoded || !string_body(name.text + 1, name.text + name.len, decoded, &n))
        return true;
    for (size_t k = 0; w->names[k]; k++)
        if (n == strlen(w->names[k]) && memcmp(decoded, w->names[k], n) == 0)
            w->ret[k] = value;
    return true;
}

bool dsh_json_members(const char *text, size_t len, const char *const *names, struct dsh_json_slice *ret)
{
    for (size_t k = 0; names[k]; k++)
        ret[k] = (struct dsh_json_slice){NULL, 0};
    struct wanted_members w = {names, ret};
    return each_entry(text, len, '{', take_member, &w);
}

struct element_visit {
    dsh_json_element_fn fn;
    void *arg;
};

static bool visit_element(void *arg, size_t index, struct dsh_json_slice name, struct dsh_json_slice value)
{
    (void)name;
    struct element_visit *v = arg;
    return v->fn(v->arg, index, value);
}

bool dsh_json_elements(const char *text, size_t len, dsh_json_element_fn fn, void *arg)
{
    struct element_visit v = {fn, arg};
    return each_entry(text, len, '[', visit_element, &v);
}

json_object *dsh_json_parse_envelope(const char *text, size_t len, const char *const *raw_names,
                                     struct dsh_json_slice *ret_raw, size_t max_nodes)
{
    if (!text)
        return NULL;
    for (size_t i = 0; raw_names[i]; i++)
        ret_raw[i] = (struct dsh_json_slice){NULL, 0};
    struct parser ps = {.p = text, .end = text + len, .depth = 1, .nodes_left = max_nodes};
    skip_space(&ps);
    if (ps.p >= ps.end || *ps.p != '{')
        return NULL;
    ps.p++;
    json_object *object = json_object_new_object();
    if (!object)
        return NULL;
    if (consume(&ps, '}'))
        goto done;
    do {
        skip_space(&ps);
        if (ps.p >= ps.end || *ps.p != '"')
            goto bad;
        json_object *key = parse_string(&ps);
        if (ps.failed || !dsh_json_is_text(key) || !consume(&ps, ':')) {
            json_object_put(key);
            goto bad;
        }
        const char *name = json_object_get_string(key);
        size_t raw = 0;
        while (raw_names[raw] && strcmp(raw_names[raw], name) != 0)
            raw++;
        if (raw_names[raw]) {
            /* Passed on as text: validated, never built. A repeated name keeps its last value.
             * One level more than a value: a call's args array holds values. */
            skip_space(&ps);
            const char *after = dsh_json_scan_value(ps.p, ps.end, DSH_JSON_VALUE_MAX_DEPTH + 1, NULL);
            if (after) {
                ret_raw[raw] = (struct dsh_json_slice){ps.p, (size_t)(after - ps.p)};
                ps.p = after;
                json_object_object_del(object, name);
            }
            json_object_put(key);
            if (!after)
                goto bad;
            continue;
        }
        json_object *v = parse_value(&ps);
        /* json-c takes v's reference. */
        if (ps.failed || json_object_object_add(object, name, v) != 0) {
            json_object_put(v);
            json_object_put(key);
            goto bad;
        }
        json_object_put(key);
    } while (consume(&ps, ','));
    if (!consume(&ps, '}'))
        goto bad;
done:
    skip_space(&ps);
    if (ps.p == ps.end)
        return object;
bad:
    json_object_put(object);
    return NULL;
}

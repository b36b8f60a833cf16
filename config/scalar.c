/* Scalar typing. libyaml tags every untagged scalar !!str, so plain scalars are
 * resolved here with a strict subset of the YAML 1.2 core schema: only plain
 * `true`/`false` are booleans (no yes/on/True), only plain decimal digits are
 * integers (no leading zeros), and anything quoted is a string. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"

static bool all_digits(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* No leading zeros: YAML 1.1 readers take 0100 for octal 64. */
static bool is_decimal_int(const char *s, size_t len)
{
    if (len > 0 && (s[0] == '-' || s[0] == '+'))
        s++, len--;
    return all_digits(s, len) && (s[0] != '0' || len == 1);
}

/* YAML 1.2 core floats, .inf/.nan and 0x/0o integers: numbers, but not ours. */
static bool is_other_number(const char *s, size_t len)
{
    static const char *const special[] = {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"};
    const char *p = s;
    if (len > 0 && (*p == '-' || *p == '+'))
        p++;
    size_t rest = len - (size_t)(p - s);
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
        if (rest == strlen(special[i]) && memcmp(p, special[i], rest) == 0)
            return true;
    if (p == s && len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
        const char *digits = s[1] == 'x' ? "0123456789abcdefABCDEF" : "01234567";
        return strspn(s + 2, digits) == len - 2;
    }

    /* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
    const char *end = s + len;
    size_t int_digits = 0, frac_digits = 0;
    while (p < end && *p >= '0' && *p <= '9')
        p++, int_digits++;
    if (p < end && *p == '.') {
        p++;
        while (p < end && *p >= '0' && *p <= '9')
            p++, frac_digits++;
    }
    if (int_digits == 0 && frac_digits == 0)
        return false;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '-' || *p == '+'))
            p++;
        if (p == end)
            return false;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    return p == end;
}

static enum dsh_scalar_kind plain_kind(const char *s, size_t len)
{
    if (len == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
        strcmp(s, "NULL") == 0)
        return DSH_SCALAR_NULL;
    if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)
        return DSH_SCALAR_BOOL;
    if (is_decimal_int(s, len))
        return DSH_SCALAR_INT;
    if (is_other_number(s, len))
        return DSH_SCALAR_NUMBER;
    return DSH_SCALAR_STRING;
}

enum dsh_scalar_kind dsh_scalar_kind(const yaml_node_t *node)
{
    const char *tag = (const char *)node->tag;
    const char *s = dsh_node_text(node);
    size_t len = node->data.scalar.length;

    /* An explicit `!!str 5` arrives double-quoted (yaml_load.c), so it is a string. */
    if (!tag || strcmp(tag, YAML_STR_TAG) == 0) {
        if (node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
            return plain_kind(s, len);
        return DSH_SCALAR_STRING;
    }
    if (strcmp(tag, YAML_NULL_TAG) == 0)
        return DSH_SCALAR_NULL;
    if (strcmp(tag, YAML_BOOL_TAG) == 0)
        return plain_kind(s, len) == DSH_SCALAR_BOOL ? DSH_SCALAR_BOOL : DSH_SCALAR_TAGGED;
    if (strcmp(tag, YAML_INT_TAG) == 0 && is_decimal_int(s, len))
        return DSH_SCALAR_INT;
    if (strcmp(tag, YAML_INT_TAG) == 0 || strcmp(tag, YAML_FLOAT_TAG) == 0) {
        bool number = is_decimal_int(s, len) || is_other_number(s, len);
        return number ? DSH_SCALAR_NUMBER : DSH_SCALAR_TAGGED;
    }
    return DSH_SCALAR_TAGGED;
}

int dsh_scalar_int(const yaml_node_t *node, int64_t *ret_value)
{
    const char *s = dsh_node_text(node);
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    if (end == s || *end != '\0')
        return -EINVAL;
    *ret_value = (int64_t)v;
    return 0;
}

/* Quotes at most 40 bytes of s, escaping what would garble a terminal. */
static void quote(const char *s, size_t len, char *buf, size_t size)
{
    size_t o = 0;
    if (size < 8)
        return;
    buf[o++] = '"';
    for (size_t i = 0; i < len && i < 40 && o + 6 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    if (len > 40 && o + 4 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '"';
    buf[o] = '\0';
}

const char *dsh_node_describe(const yaml_node_t *node, char *buf, size_t size)
{
    char q[200];
    switch (node->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a sequence";
    case YAML_SCALAR_NODE:
        break;
    default:
        return "an empty node";
    }
    const char *s = dsh_node_text(node);
    size_t len = node->data.scalar.length;
    quote(s, len, q, sizeof(q));
    switch (dsh_scalar_kind(node)) {
    case DSH_SCALAR_NULL:
        return "null";
    case DSH_SCALAR_BOOL:
        snprintf(buf, size, "boolean %s", s);
        break;
    case DSH_SCALAR_INT:
        snprintf(buf, size, "integer %.40s%s", s, len > 40 ? "..." : "");
        break;
    case DSH_SCALAR_NUMBER:
        snprintf(buf, size, "number %.40s", s);
        break;
    case DSH_SCALAR_TAGGED:
        snprintf(buf, size, "%s-tagged value %s", (const char *)node->tag, q);
        break;
    case DSH_SCALAR_STRING:
        snprintf(buf, size, "string %s", q);
        break;
    }
    return buf;
}

bool dsh_node_is_null(const yaml_node_t *node)
{
    return node->type == YAML_SCALAR_NODE && dsh_scalar_kind(node) == DSH_SCALAR_NULL;
}

/* The value of the first key matching key: by its whole text (exact) or by its text up to a first
 * NUL (cstr), as C string comparisons of the key's text see it. */
static yaml_node_t *mapping_get(yaml_document_t *doc, yaml_node_t *map, const char *key, bool exact)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    size_t key_len = strlen(key);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE &&
            (exact ? k->data.scalar.length == key_len : k->data.scalar.length >= key_len) &&
            memcmp(k->data.scalar.value, key, key_len) == 0 &&
            (exact || k->data.scalar.value[key_len] == '\0'))
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

yaml_node_t *dsh_mapping_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    return mapping_get(doc, map, key, true);
}

yaml_node_t *dsh_mapping_get_cstr(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    return mapping_get(doc, map, key, false);
}

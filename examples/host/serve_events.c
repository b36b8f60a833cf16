/* Events of `dsh headless --serve`: one JSON object per stdout line. */
#include "dsh_json_strict.h"
#include "dshh.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void emit_line(const char *text, size_t len)
{
    char *line = malloc(len + 1);
    if (!line)
        return;
    /* Raw newlines in JSON text are whitespace between tokens: blanking them keeps one line. */
    for (size_t i = 0; i < len; i++)
        line[i] = text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
    line[len] = '\n';
    dshh__write_all(STDOUT_FILENO, line, len + 1); /* a vanished client is noticed at stdin EOF */
    free(line);
}

const char *dshh__jstr(json_object *o)
{
    return json_object_to_json_string_ext(o, DSH_JSON_PRINT_FLAGS);
}

/* Event built from a json-c object plus raw JSON fragments spliced in as-is (results and call
 * arguments keep the provider's exact number text). */
void dshh__emit_event(json_object *ev, const char *raw_key, const char *raw, size_t raw_len)
{
    const char *base = dshh__jstr(ev);
    if (!raw_key) {
        emit_line(base, strlen(base));
        return;
    }
    size_t blen = strlen(base); /* "{...}" with at least the type field */
    size_t klen = strlen(raw_key);
    size_t n = blen - 1 + 4 + klen + raw_len + 1;
    char *text = malloc(n + 1);
    if (!text)
        return;
    memcpy(text, base, blen - 1);
    size_t off = blen - 1;
    text[off++] = ',';
    text[off++] = '"';
    memcpy(text + off, raw_key, klen);
    off += klen;
    text[off++] = '"';
    text[off++] = ':';
    memcpy(text + off, raw, raw_len);
    off += raw_len;
    text[off++] = '}';
    emit_line(text, off);
    free(text);
}

json_object *dshh__event(const char *type, const char *id_text)
{
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string(type));
    if (id_text)
        json_object_object_add(ev, "id", json_tokener_parse(id_text));
    return ev;
}

void dshh__emit_error(const char *id_text, const char *fmt, ...)
{
    char msg[DSH_ERROR_MESSAGE_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_object *ev = dshh__event("error", id_text);
    json_object_object_add(ev, "message", json_object_new_string(msg));
    dshh__emit_event(ev, NULL, NULL, 0);
    json_object_put(ev);
}


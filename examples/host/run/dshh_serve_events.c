/* Events of `dsh headless --serve`: one JSON object per line, each client through its own writer
 * (struct dshh_serve_events). */
#include "dshh_serve_events.h"

#include "dsh_abi.h"
#include "dsh_json_strict.h"
#include "dsh_text_buffer.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

void dshh__events_init(struct dshh_serve_events *w, struct dshh_out_queue *q, dshh_timer_fn on_full, void *arg,
                       const char *who)
{
    *w = (struct dshh_serve_events){.out = q, .on_full = on_full, .on_full_arg = arg};
    snprintf(w->who, sizeof w->who, "%s", who);
}

bool dshh__events_dropped(const struct dshh_serve_events *w)
{
    return w->dropped;
}

/* Writes parts as one line: through the queue (never blocking) when there is one, else retrying
 * on EINTR and partial writes (a vanished client is noticed at stdin EOF). iov[owned] (owned >= 0)
 * is handed over: release(arg, its base) once written or dropped. */
static void write_parts(struct dshh_serve_events *w, struct iovec *iov, int n, int owned, dshh_release_fn release,
                        void *arg)
{
    if (w->out) {
        if (w->dropped) {
            if (owned >= 0)
                release(arg, iov[owned].iov_base);
            return;
        }
        if (dshh__out_queue_write_owned(w->out, iov, n, owned, release, arg) != -ENOBUFS)
            return;
        /* The client stopped reading: it is dropped, from the loop (not inside a callback). */
        w->dropped = true;
        fprintf(stderr, "dsh: %s left %zu MiB of events unread; dsh dropped it\n", w->who, w->out->max >> 20);
        if (dshh__loop_add_timer(w->out->loop, 0, w->on_full, w->on_full_arg) < 0)
            w->on_full(w->on_full_arg);
        return;
    }
    char *owned_base = owned >= 0 ? iov[owned].iov_base : NULL;
    while (n > 0) {
        ssize_t w = writev(STDOUT_FILENO, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            break;
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    if (owned_base)
        release(arg, owned_base);
}

static void release_with_free(void *arg, char *data)
{
    (void)arg;
    free(data);
}

const char *dshh__jstr(json_object *o)
{
    return json_object_to_json_string_ext(o, DSH_JSON_PRINT_FLAGS);
}

const char *dshh__one_line(const char *json, size_t len, char **ret_copy)
{
    /* Raw newlines in JSON text are whitespace between tokens: blanking them keeps one line. */
    *ret_copy = NULL;
    if (!memchr(json, '\n', len) && !memchr(json, '\r', len))
        return json;
    if (!(*ret_copy = malloc(len ? len : 1)))
        return NULL;
    for (size_t i = 0; i < len; i++)
        (*ret_copy)[i] = json[i] == '\n' || json[i] == '\r' ? ' ' : json[i];
    return *ret_copy;
}

/* Event built from a json-c object plus raw JSON fragments spliced in as-is (results and call
 * arguments keep the provider's exact number text). */
void dshh__emit_event(struct dshh_serve_events *w, json_object *ev, const char *raw_key, const char *raw, size_t raw_len)
{
    const char *base = dshh__jstr(ev); /* "{...}" with at least the type field; never a raw newline */
    size_t blen = strlen(base);
    if (!raw_key) {
        struct iovec iov[] = {{(char *)base, blen}, {"\n", 1}};
        write_parts(w, iov, 2, -1, NULL, NULL);
        return;
    }
    char *blanked = NULL;
    if (!(raw = dshh__one_line(raw, raw_len, &blanked)))
        return;
    char key[128];
    int klen = snprintf(key, sizeof key, ",\"%s\":", raw_key);
    struct iovec iov[] = {{(char *)base, blen - 1}, {key, (size_t)klen}, {(char *)raw, raw_len}, {"}\n", 2}};
    if (blanked)
        write_parts(w, iov, 4, 2, release_with_free, NULL);
    else
        write_parts(w, iov, 4, -1, NULL, NULL);
}

void dshh__emit_event_owned(struct dshh_serve_events *w, json_object *ev, const char *raw_key, char *raw, size_t raw_len,
                            dshh_release_fn release, void *release_arg)
{
    const char *base = dshh__jstr(ev);
    size_t blen = strlen(base);
    char *blanked = NULL;
    const char *line = dshh__one_line(raw, raw_len, &blanked);
    if (blanked || !line) {
        /* The copy (if any) is what waits now. */
        release(release_arg, raw);
        if (!line)
            return;
        raw = blanked;
        release = release_with_free;
        release_arg = NULL;
    }
    char key[128];
    int klen = snprintf(key, sizeof key, ",\"%s\":", raw_key);
    struct iovec iov[] = {{(char *)base, blen - 1}, {key, (size_t)klen}, {raw, raw_len}, {"}\n", 2}};
    write_parts(w, iov, 4, 2, release, release_arg);
}

json_object *dshh__event(const char *type, const char *id_text)
{
    json_object *ev = json_object_new_object();
    json_object_object_add(ev, "type", json_object_new_string(type));
    if (id_text)
        json_object_object_add(ev, "id", json_tokener_parse(id_text));
    return ev;
}

void dshh__emit_error(struct dshh_serve_events *w, const char *id_text, const char *fmt, ...)
{
    char msg[DSH_ERROR_MESSAGE_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    dsh_utf8_vformat(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_object *ev = dshh__event("error", id_text);
    json_object_object_add(ev, "message", json_object_new_string(msg));
    dshh__emit_event(w, ev, NULL, NULL, 0);
    json_object_put(ev);
}


/* A run result as an MCP tool result: a note when the state owner's earlier environment was
 * released by the provider, the output text, then the completion value as JSON text
 * (unless the session discards completions), the failure kind and message with isError and a note
 * when the sandbox refused an operation, as one text item; each image as an image item (its
 * file's bytes, base64) within maxOutputBytes; an object completion also as structuredContent;
 * and output entries as progress messages. An image's file is found again without
 * following symlinks and must be the inode the provider registered, in the same format and pixel
 * size (examples/host/README.md, "Host opens of paths a program can influence"). */
#include "dshh_mcp_content.h"
#include "dshh_openat2.h"

#include "dsh_abi.h"
#include "dsh_image_probe.h"
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dsh_text_buffer.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/printbuf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Why an image is replaced by a note "[image ID not included: WHY]". */
#define DSHH_IMAGE_MOVED "its path no longer leads to the file that was registered"
#define DSHH_IMAGE_CHANGED "the file changed after it was registered"
#define DSHH_IMAGE_UNDESCRIBED "the provider did not say which file it registered"
#define DSHH_IMAGE_NO_OPENAT2 "this kernel has no openat2 to find the file again safely"

static char *base64(const unsigned char *data, size_t n, size_t *ret_len)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t len = (n + 2) / 3 * 4;
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16 | (i + 1 < n ? (uint32_t)data[i + 1] << 8 : 0) |
                     (i + 2 < n ? data[i + 2] : 0);
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    *ret_len = o;
    return out;
}

static json_object *text_item(const char *text, size_t len)
{
    json_object *item = json_object_new_object();
    json_object_object_add(item, "type", json_object_new_string("text"));
    json_object_object_add(item, "text", json_object_new_string_len(text, (int)len));
    return item;
}

static const char *str(json_object *o, const char *key, const char *fallback)
{
    const char *v = dsh_json_get_text(o, key);
    return v ? v : fallback;
}

/* The file an image descriptor names, as the provider saw it when it registered it. */
struct registered_file {
    const char *path;
    uint64_t dev, ino, size;
    int64_t width, height;
};

static bool get_u64_text(json_object *o, const char *key, uint64_t *ret)
{
    const char *v = dsh_json_get_text(o, key);
    char *end;
    if (!v || *v < '0' || *v > '9')
        return false;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    *ret = n;
    return !errno && !*end;
}

static bool registered_file_of(json_object *entry, struct registered_file *f)
{
    int64_t size;
    f->path = dsh_json_get_text(entry, "path");
    if (!f->path || f->path[0] != '/' || !get_u64_text(entry, "dev", &f->dev) ||
        !get_u64_text(entry, "ino", &f->ino) || !dsh_json_get_int64(entry, "size", 0, INT64_MAX, &size) ||
        !dsh_json_get_int64(entry, "width", 1, INT32_MAX, &f->width) ||
        !dsh_json_get_int64(entry, "height", 1, INT32_MAX, &f->height))
        return false;
    f->size = (uint64_t)size;
    return true;
}

static bool same_file(const struct stat *st, const struct registered_file *f)
{
    return S_ISREG(st->st_mode) && (uint64_t)st->st_dev == f->dev && (uint64_t)st->st_ino == f->ino;
}

/* An O_PATH fd of the registered file, or -1 with why filled. The path is resolved from "/"
 * without following any symlink (a program may have turned a directory on it into one), and what
 * it leads to must be the registered inode: the name is only a hint where to look. */
static int open_registered(const struct registered_file *f, char *why, size_t why_len)
{
    int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
        snprintf(why, why_len, "%s", strerror(errno));
        return -1;
    }
    const char *rel = f->path;
    while (*rel == '/')
        rel++;
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(__NR_openat2, root, *rel ? rel : ".", &how, sizeof how);
    int saved = errno;
    close(root);
    struct stat st;
    if (fd < 0 && saved == ENOSYS) {
        snprintf(why, why_len, "%s", DSHH_IMAGE_NO_OPENAT2);
        return -1;
    }
    if (fd < 0 || fstat(fd, &st) != 0 || !same_file(&st, f)) {
        snprintf(why, why_len, "%s", DSHH_IMAGE_MOVED);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* The registered file's bytes, checked again (size, format, pixel size), at most max of them
 * (transfer full), or NULL with why filled. */
static unsigned char *read_registered(const struct registered_file *f, size_t max, size_t *ret_len,
                                      const char **ret_mime, char *why, size_t why_len)
{
    int path_fd = open_registered(f, why, why_len);
    if (path_fd < 0)
        return NULL;
    /* Its /proc link opens that very inode (never a name again), and only a regular file. */
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", path_fd);
    int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    close(path_fd);
    struct stat st;
    unsigned char *data = NULL;
    if (fd < 0 || fstat(fd, &st) != 0 || !same_file(&st, f)) {
        snprintf(why, why_len, "%s", DSHH_IMAGE_MOVED);
        goto out;
    }
    if ((uint64_t)st.st_size != f->size) {
        snprintf(why, why_len, "%s: it has %llu bytes, not %llu", DSHH_IMAGE_CHANGED,
                 (unsigned long long)st.st_size, (unsigned long long)f->size);
        goto out;
    }
    if (f->size > max) {
        snprintf(why, why_len, "it does not fit in maxOutputBytes");
        goto out;
    }
    size_t got = 0;
    data = malloc(f->size + 1);
    while (data && got < f->size) {
        ssize_t n = read(fd, data + got, f->size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    /* The bytes that will be sent are the ones checked: the file may change while it is read. */
    uint32_t w = 0, h = 0;
    char probe_why[128] = "";
    int format = data && got == f->size ? dsh_image_probe_bytes(data, got, &w, &h, probe_why, sizeof probe_why)
                                        : DSH_IMAGE_OTHER;
    if (!data)
        snprintf(why, why_len, "%s", strerror(ENOMEM));
    else if (got != f->size)
        snprintf(why, why_len, "%s: it has fewer bytes than %llu", DSHH_IMAGE_CHANGED, (unsigned long long)f->size);
    else if (format <= 0)
        snprintf(why, why_len, "%s: %s", DSHH_IMAGE_CHANGED, probe_why);
    else if (w != f->width || h != f->height)
        snprintf(why, why_len, "%s: it is %" PRIu32 "x%" PRIu32 ", not %" PRId64 "x%" PRId64, DSHH_IMAGE_CHANGED, w, h,
                 f->width, f->height);
    else {
        *ret_len = got;
        *ret_mime = dsh_image_mime_type(format);
        close(fd);
        return data;
    }
    free(data);
    data = NULL;
out:
    if (fd >= 0)
        close(fd);
    return data;
}

/* An image item, or a text item saying why the image is not shown. *budget shrinks. */
static json_object *image_item(json_object *entry, uint64_t *budget)
{
    const char *id = str(entry, "attachmentId", "?");
    char note[512], why[256];
    /* The reference services map host paths to the same world paths: the descriptor's path is
     * where dsh finds the file it registered, and its dev/ino say which file that is. */
    struct registered_file f;
    size_t n = 0;
    const char *mime = NULL;
    unsigned char *bytes = NULL;
    if (!registered_file_of(entry, &f))
        snprintf(why, sizeof why, "%s", DSHH_IMAGE_UNDESCRIBED);
    else
        bytes = read_registered(&f, (size_t)(*budget / 4 * 3), &n, &mime, why, sizeof why);
    if (!bytes) {
        snprintf(note, sizeof note, "[image %s not included: %s]", id, why);
        return text_item(note, strlen(note));
    }
    size_t len;
    char *data = base64(bytes, n, &len);
    free(bytes);
    if (!data || len > *budget) {
        free(data);
        snprintf(note, sizeof note, "[image %s not included: it does not fit in maxOutputBytes]", id);
        return text_item(note, strlen(note));
    }
    *budget -= len;
    json_object *item = json_object_new_object();
    json_object_object_add(item, "type", json_object_new_string("image"));
    json_object_object_add(item, "data", json_object_new_string_len(data, (int)len));
    json_object_object_add(item, "mimeType", json_object_new_string(mime));
    free(data);
    return item;
}

/* What the output entries of a result add to the tool result. */
struct content_parts {
    struct dsh_text_buffer text;
    json_object *images;
    uint64_t budget;
    size_t first; /* entries before it were shown already */
};

/* One output entry: a small tree of its own (its text is one string), never the whole output. */
static bool add_entry(void *arg, size_t index, struct dsh_json_slice element)
{
    struct content_parts *parts = arg;
    if (index < parts->first)
        return true;
    json_object *entry = dsh_json_parse_strict_value(element.text, element.len);
    size_t n;
    const char *t = dsh_json_get_string(entry, "text", &n);
    if (!strcmp(str(entry, "type", ""), "image"))
        json_object_array_add(parts->images, image_item(entry, &parts->budget));
    else if (t)
        dsh_text_buffer_write(&parts->text, (unsigned char *)t, n);
    json_object_put(entry);
    return true;
}

/* A JSON node that prints as the text it holds: a completion value reaches the client with its
 * exact text (numbers keep their digits), never as a tree of the whole. */
static int print_raw(json_object *node, struct printbuf *pb, int level, int flags)
{
    (void)level;
    (void)flags;
    const char *text = json_object_get_userdata(node);
    return printbuf_memappend(pb, text, (int)strlen(text));
}

static void free_raw(json_object *node, void *text)
{
    (void)node;
    free(text);
}

static json_object *raw_json(const char *text, size_t len)
{
    char *copy = strndup(text, len);
    json_object *node = copy ? json_object_new_object() : NULL;
    if (!node) {
        free(copy);
        return NULL;
    }
    json_object_set_serializer(node, print_raw, copy, free_raw);
    return node;
}

static void append_line(struct dsh_text_buffer *text, const char *line, size_t n)
{
    if (text->len && text->data[text->len - 1] != '\n')
        dsh_text_buffer_write(text, (unsigned char *)"\n", 1);
    dsh_text_buffer_write(text, (unsigned char *)line, n);
}

json_object *dshh__mcp_tool_result(const char *result_json, size_t len, uint64_t max_bytes,
                                   bool show_value)
{
    return dshh__mcp_tool_result_rest(result_json, len, max_bytes, show_value, 0, NULL, 0);
}

json_object *dshh__mcp_tool_result_rest(const char *result_json, size_t len, uint64_t max_bytes,
                                        bool show_value, size_t first_entry, const char *lead,
                                        size_t lead_len)
{
    /* The value is copied as text and the output is read entry by entry: neither becomes a tree
     * of the whole (common/README.md, "untrusted JSON is parsed with budgets"). */
    static const char *const raw_names[] = {"value", "output", NULL};
    struct dsh_json_slice raw[2];
    json_object *result =
        dsh_json_parse_envelope(result_json, len, raw_names, raw, DSH_JSON_ENVELOPE_MAX_NODES);
    json_object *error = dsh_json_get_object(result, "error"),
                *sandbox = dsh_json_get_object(result, "sandbox");
    json_object *content = json_object_new_array(), *structured = NULL;
    struct content_parts parts = {.images = json_object_new_array(), .budget = max_bytes,
                                  .first = first_entry};
    if (lead_len)
        dsh_text_buffer_write(&parts.text, (unsigned char *)lead, lead_len);
    if (result && raw[1].text)
        dsh_json_elements(raw[1].text, raw[1].len, add_entry, &parts);
    struct dsh_text_buffer text = parts.text;
    /* The model learns first that what it kept in this session's environment is gone. */
    json_object *released = dsh_json_get_object(dsh_json_get_object(result, "retained"), "released");
    if (released) {
        char line[DSH_ERROR_MESSAGE_MAX + 64];
        int n = snprintf(line, sizeof line, DSHH_MCP_RELEASED_NOTE "\n", str(released, "message", "released"));
        text = (struct dsh_text_buffer){0};
        dsh_text_buffer_write(&text, (unsigned char *)line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
        if (parts.text.len)
            dsh_text_buffer_write(&text, (unsigned char *)parts.text.data, parts.text.len);
        free(parts.text.data);
    }
    json_object *images = parts.images;
    bool ok = false, denied = false;
    bool failed = !dsh_json_get_bool(result, "ok", &ok) || !ok;
    if (result && show_value && !failed && raw[0].text) {
        const char *v = raw[0].text, *v_end = v + raw[0].len;
        while (v < v_end && (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r'))
            v++;
        append_line(&text, v, (size_t)(v_end - v));
        dsh_text_buffer_write(&text, (unsigned char *)"\n", 1);
        if (v < v_end && *v == '{')
            structured = raw_json(v, (size_t)(v_end - v));
    }
    if (failed) {
        char line[DSH_ERROR_MESSAGE_MAX + 64];
        int n = snprintf(line, sizeof line, "error (%s): %s", str(error, "kind", "unknown"),
                         str(error, "message", "the result is not valid JSON"));
        append_line(&text, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
    }
    if (dsh_json_get_bool(sandbox, "denied", &denied) && denied) {
        char line[128];
        int n = snprintf(line, sizeof line, DSHH_MCP_DENIAL_NOTE, str(sandbox, "mode", "its"));
        append_line(&text, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
        /* The network allow-list names the hosts it refused, so the model can ask for one. */
        const char *net = str(dsh_json_get_object(sandbox, "network"), "diagnostic", NULL);
        if (net)
            append_line(&text, net, strlen(net));
    }
    if (text.len || json_object_array_length(images) == 0)
        json_object_array_add(content, text.len ? text_item(text.data, text.len) : text_item("(no output)", 11));
    for (size_t i = 0; i < json_object_array_length(images); i++)
        json_object_array_add(content, json_object_get(json_object_array_get_idx(images, i)));
    free(text.data);
    json_object_put(images);
    json_object_put(result);
    json_object *tool_result = json_object_new_object();
    json_object_object_add(tool_result, "content", content);
    /* With completions shown, run_code declares an outputSchema, and a client then requires
     * structuredContent in every result that is not an error: an object completion, else {}. */
    if (show_value && !failed)
        json_object_object_add(tool_result, "structuredContent",
                               structured ? structured : json_object_new_object());
    else
        json_object_put(structured);
    json_object_object_add(tool_result, "isError", json_object_new_boolean(failed));
    return tool_result;
}

char *dshh__mcp_progress_message(const char *entry_json, size_t len)
{
    json_object *entry = dsh_json_parse_strict(entry_json, len);
    char *message;
    if (!strcmp(str(entry, "type", ""), "image")) {
        int64_t w = 0, h = 0;
        dsh_json_get_int64(entry, "width", 0, INT64_MAX, &w);
        dsh_json_get_int64(entry, "height", 0, INT64_MAX, &h);
        if (asprintf(&message, "[image %s %" PRId64 "x%" PRId64 "]", str(entry, "attachmentId", "?"), w, h) < 0)
            message = NULL;
    } else {
        const char *t = dsh_json_get_string(entry, "text", NULL); /* a NUL inside ends the message */
        message = strdup(t ? t : "");
    }
    json_object_put(entry);
    return message;
}

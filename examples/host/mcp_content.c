/* A run result as an MCP tool result: the output text as one text item, each image as an image
 * item (its file's bytes, base64) within maxOutputBytes, the failure kind and message with
 * isError; and output entries as progress messages. */
#include "mcp.h"

#include "dsh_json_strict.h"
#include "dsh_text_buffer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The bytes of a regular file of at most max bytes (transfer full), or NULL with errno. */
static unsigned char *read_bounded(const char *path, size_t max, size_t *ret_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    struct stat st;
    unsigned char *data = NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        errno = EINVAL;
        goto out;
    }
    if ((uint64_t)st.st_size > max) {
        errno = EFBIG;
        goto out;
    }
    data = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (data && got < (size_t)st.st_size) {
        ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    *ret_len = got;
out:
    close(fd);
    return data;
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
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : fallback;
}

/* An image item, or a text item saying why the image is not shown. *budget shrinks. */
static json_object *image_item(json_object *entry, uint64_t *budget)
{
    const char *path = str(entry, "path", ""), *id = str(entry, "attachmentId", "?");
    /* The reference services map host paths to the same world paths: the descriptor's path is
     * the file dsh registered. */
    size_t n = 0;
    unsigned char *bytes = read_bounded(path, (size_t)(*budget / 4 * 3), &n);
    char note[512];
    if (!bytes) {
        snprintf(note, sizeof note, "[image %s not included: %s]", id,
                 errno == EFBIG ? "it does not fit in maxOutputBytes" : strerror(errno));
        return text_item(note, strlen(note));
    }
    bool png = n >= 8 && !memcmp(bytes, "\x89PNG\r\n\x1a\n", 8);
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
    json_object_object_add(item, "mimeType", json_object_new_string(png ? "image/png" : "image/jpeg"));
    free(data);
    return item;
}

json_object *dshh__mcp_tool_result(const char *result_json, size_t len, uint64_t max_bytes)
{
    json_object *result = dsh_json_parse_strict_value(result_json, len), *output, *ok, *error;
    json_object *content = json_object_new_array(), *images = json_object_new_array();
    struct dsh_text_buffer text = {0};
    uint64_t budget = max_bytes;
    if (json_object_object_get_ex(result, "output", &output) && json_object_is_type(output, json_type_array))
        for (size_t i = 0; i < json_object_array_length(output); i++) {
            json_object *entry = json_object_array_get_idx(output, i), *t;
            if (!strcmp(str(entry, "type", ""), "image"))
                json_object_array_add(images, image_item(entry, &budget));
            else if (json_object_object_get_ex(entry, "text", &t))
                dsh_text_buffer_write(&text, (unsigned char *)json_object_get_string(t),
                                      (size_t)json_object_get_string_len(t));
        }
    bool failed = !json_object_object_get_ex(result, "ok", &ok) || !json_object_get_boolean(ok);
    if (failed) {
        json_object_object_get_ex(result, "error", &error);
        char line[DSH_ERROR_MESSAGE_MAX + 64];
        int n = snprintf(line, sizeof line, "%serror (%s): %s", text.len && text.data[text.len - 1] != '\n' ? "\n" : "",
                         str(error, "kind", "unknown"), str(error, "message", "the result is not valid JSON"));
        dsh_text_buffer_write(&text, (unsigned char *)line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
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
    json_object_object_add(tool_result, "isError", json_object_new_boolean(failed));
    return tool_result;
}

char *dshh__mcp_progress_message(const char *entry_json, size_t len)
{
    json_object *entry = dsh_json_parse_strict(entry_json, len), *t;
    char *message;
    if (!strcmp(str(entry, "type", ""), "image")) {
        json_object *w = json_object_object_get(entry, "width"), *h = json_object_object_get(entry, "height");
        if (asprintf(&message, "[image %s %lldx%lld]", str(entry, "attachmentId", "?"),
                     (long long)json_object_get_int64(w), (long long)json_object_get_int64(h)) < 0)
            message = NULL;
    } else {
        message = json_object_object_get_ex(entry, "text", &t) ? strdup(json_object_get_string(t)) : strdup("");
    }
    json_object_put(entry);
    return message;
}

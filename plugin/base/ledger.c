/* See ledger.h. */
#include "ledger.h"
#include "utf8.h"
#include "dsh_json_strict.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ptc__ledger_init(struct ptc_ledger *ledger, uint64_t budget)
{
    memset(ledger, 0, sizeof *ledger);
    ledger->budget = budget;
}

void ptc__ledger_destroy(struct ptc_ledger *ledger)
{
    for (size_t i = 0; i < ledger->count; i++) {
        free(ledger->entries[i].text.data);
        json_object_put(ledger->entries[i].image);
    }
    free(ledger->entries);
    memset(ledger, 0, sizeof *ledger);
}

uint64_t ptc__ledger_remaining(const struct ptc_ledger *ledger)
{
    return ledger->used >= ledger->budget ? 0 : ledger->budget - ledger->used;
}

static struct ptc_entry *append_entry(struct ptc_ledger *ledger)
{
    if (ledger->count == ledger->cap) {
        size_t next = ledger->cap ? ledger->cap * 2 : 8;
        struct ptc_entry *grown = realloc(ledger->entries, next * sizeof *grown);
        if (!grown)
            return NULL;
        ledger->entries = grown;
        ledger->cap = next;
    }
    struct ptc_entry *entry = &ledger->entries[ledger->count++];
    memset(entry, 0, sizeof *entry);
    return entry;
}

static int append_text(struct ptc_ledger *ledger, const char *text, size_t len)
{
    struct ptc_entry *last = ledger->count ? &ledger->entries[ledger->count - 1] : NULL;
    if (!last || last->is_image) {
        last = append_entry(ledger);
        if (!last)
            return -ENOMEM;
    }
    return dsh_text_buffer_write(&last->text, (unsigned char *)text, len) ? 0 : -ENOMEM;
}

int ptc__ledger_text(struct ptc_ledger *ledger, const char *text, size_t len)
{
    if (ledger->overflowed)
        return 1;
    if (len == 0)
        return 0;
    uint64_t room = ptc__ledger_remaining(ledger);
    size_t take = len <= room ? len : ptc__utf8_prefix(text, len, (size_t)room);
    if (take > 0) {
        int rc = append_text(ledger, text, take);
        if (rc < 0)
            return rc;
        ledger->used += take;
    }
    if (take < len) {
        ledger->overflowed = true;
        return 1;
    }
    return 0;
}

int ptc__ledger_image(struct ptc_ledger *ledger, json_object *image)
{
    if (ledger->overflowed) {
        json_object_put(image);
        return 1;
    }
    size_t size = strlen(json_object_to_json_string_ext(image, JSON_C_TO_STRING_PLAIN));
    if (size > ptc__ledger_remaining(ledger)) {
        json_object_put(image);
        ledger->overflowed = true;
        return 1;
    }
    struct ptc_entry *entry = append_entry(ledger);
    if (!entry) {
        json_object_put(image);
        return -ENOMEM;
    }
    entry->is_image = true;
    entry->image = image;
    ledger->used += size;
    return 0;
}

int ptc__ledger_charge(struct ptc_ledger *ledger, uint64_t bytes)
{
    if (ledger->overflowed || bytes > ptc__ledger_remaining(ledger)) {
        ledger->overflowed = true;
        return 1;
    }
    ledger->used += bytes;
    return 0;
}

static const char text_head[] = "{\"type\":\"text\",\"text\":\"", text_tail[] = "\"}";

static const char *image_json(const struct ptc_entry *entry, size_t *ret_len)
{
    return json_object_to_json_string_length(entry->image, DSH_JSON_PRINT_FLAGS, ret_len);
}

/* Bytes of an entry's JSON and, for text, of its escaped body. */
static size_t entry_json_length(const struct ptc_entry *entry, size_t *ret_escaped)
{
    size_t n = 0;
    if (entry->is_image) {
        image_json(entry, &n);
        return n;
    }
    *ret_escaped = dsh_json_escaped_length(entry->text.data, entry->text.len);
    return sizeof text_head - 1 + *ret_escaped + sizeof text_tail - 1;
}

static char *put(char *out, const char *bytes, size_t len)
{
    memcpy(out, bytes, len);
    return out + len;
}

/* Writes entry i (not the one whose buffer holds the result) at out; returns its end. */
static char *put_entry(char *out, const struct ptc_entry *entry)
{
    if (entry->is_image) {
        size_t n;
        const char *json = image_json(entry, &n);
        return put(out, json, n);
    }
    out = put(out, text_head, sizeof text_head - 1);
    out += dsh_json_escape(out, entry->text.data, entry->text.len);
    return put(out, text_tail, sizeof text_tail - 1);
}

char *ptc__ledger_take_json(struct ptc_ledger *ledger, const char *head, size_t head_len, const char *tail,
                            size_t tail_len, size_t *ret_len)
{
    /* The largest text stays where it is: its buffer grows into the whole result and the text
     * moves (escaped) to its place in it, so a large output is never held twice. */
    size_t total = head_len + 2 + tail_len + (ledger->count ? ledger->count - 1 : 0), largest = SIZE_MAX;
    size_t largest_escaped = 0;
    for (size_t i = 0; i < ledger->count; i++) {
        size_t escaped = 0;
        total += entry_json_length(&ledger->entries[i], &escaped);
        if (!ledger->entries[i].is_image &&
            (largest == SIZE_MAX || ledger->entries[i].text.len > ledger->entries[largest].text.len)) {
            largest = i;
            largest_escaped = escaped;
        }
    }
    char *buf;
    size_t at = head_len + 1; /* where the largest text's entry starts */
    if (largest == SIZE_MAX) {
        buf = malloc(total + 1);
    } else {
        struct ptc_entry *entry = &ledger->entries[largest];
        buf = realloc(entry->text.data, total + 1);
        if (buf) {
            entry->text.data = NULL; /* taken: the result owns it now */
            for (size_t i = 0; i < largest; i++) {
                size_t escaped;
                at += entry_json_length(&ledger->entries[i], &escaped) + 1;
            }
            dsh_json_escape_backward(buf, entry->text.len, largest_escaped, at + sizeof text_head - 1);
        }
    }
    if (!buf)
        return NULL;
    char *out = put(buf, head, head_len);
    *out++ = '[';
    for (size_t i = 0; i < ledger->count; i++) {
        if (i)
            *out++ = ',';
        if (i == largest) {
            out = put(out, text_head, sizeof text_head - 1) + largest_escaped;
            out = put(out, text_tail, sizeof text_tail - 1);
        } else {
            out = put_entry(out, &ledger->entries[i]);
        }
    }
    *out++ = ']';
    out = put(out, tail, tail_len);
    *out = '\0';
    *ret_len = (size_t)(out - buf);
    uint64_t budget = ledger->budget, used = ledger->used;
    bool overflowed = ledger->overflowed;
    ptc__ledger_destroy(ledger);
    ledger->budget = budget;
    ledger->used = used;
    ledger->overflowed = overflowed;
    return buf;
}

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
        free(ledger->entries[i].block);
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

const char *ptc__entry_text(const struct ptc_entry *entry)
{
    return entry->block ? entry->block + PTC_LEDGER_HEAD_ROOM : "";
}

static int append_text(struct ptc_ledger *ledger, const char *text, size_t len)
{
    struct ptc_entry *last = ledger->count ? &ledger->entries[ledger->count - 1] : NULL;
    if (!last || last->is_image) {
        last = append_entry(ledger);
        if (!last)
            return -ENOMEM;
    }
    if (last->len + len > last->cap) {
        size_t cap = last->cap ? last->cap : 256;
        while (cap < last->len + len)
            cap *= 2;
        char *block = realloc(last->block, PTC_LEDGER_HEAD_ROOM + cap);
        if (!block)
            return -ENOMEM;
        last->block = block;
        last->cap = cap;
    }
    memcpy(last->block + PTC_LEDGER_HEAD_ROOM + last->len, text, len);
    last->len += len;
    /* Counted while the bytes are fresh in the cache, not in one pass over all at the end. */
    last->escaped += dsh_json_escaped_length(text, len);
    return 0;
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

/* Bytes of an entry's JSON. */
static size_t entry_json_length(const struct ptc_entry *entry)
{
    size_t n = 0;
    if (entry->is_image) {
        image_json(entry, &n);
        return n;
    }
    return sizeof text_head - 1 + entry->escaped + sizeof text_tail - 1;
}

static char *put(char *out, const char *bytes, size_t len)
{
    memcpy(out, bytes, len);
    return out + len;
}

/* Writes an entry (not the one whose block holds the result) at out; returns its end. */
static char *put_entry(char *out, const struct ptc_entry *entry)
{
    if (entry->is_image) {
        size_t n;
        const char *json = image_json(entry, &n);
        return put(out, json, n);
    }
    out = put(out, text_head, sizeof text_head - 1);
    out += dsh_json_escape(out, ptc__entry_text(entry), entry->len);
    return put(out, text_tail, sizeof text_tail - 1);
}

char *ptc__ledger_take_json(struct ptc_ledger *ledger, const char *head, size_t head_len, const char *tail,
                            size_t tail_len, size_t *ret_len, void **ret_block)
{
    /* The largest text stays in its block and the result grows around it: what precedes the
     * text goes into the room before it (moving the text only when that is too small), and the
     * text is escaped in place. A large output is never held twice. */
    size_t total = head_len + 2 + tail_len + (ledger->count ? ledger->count - 1 : 0), largest = SIZE_MAX;
    for (size_t i = 0; i < ledger->count; i++) {
        total += entry_json_length(&ledger->entries[i]);
        if (!ledger->entries[i].is_image && ledger->entries[i].block &&
            (largest == SIZE_MAX || ledger->entries[i].len > ledger->entries[largest].len))
            largest = i;
    }
    char *block, *json;
    if (largest == SIZE_MAX) {
        json = block = malloc(total + 1);
        if (!block)
            return NULL;
    } else {
        struct ptc_entry *entry = &ledger->entries[largest];
        /* Bytes of the result before the largest text's escaped body. */
        size_t before = head_len + 1 + sizeof text_head - 1;
        for (size_t i = 0; i < largest; i++)
            before += entry_json_length(&ledger->entries[i]) + 1;
        /* The result starts `start` bytes into the block; the body then starts at or after the
         * text, so escaping in place never overtakes what it reads. */
        size_t start = before < PTC_LEDGER_HEAD_ROOM ? PTC_LEDGER_HEAD_ROOM - before : 0;
        size_t shift = start + before - PTC_LEDGER_HEAD_ROOM;
        block = realloc(entry->block, start + total + 1);
        if (!block)
            return NULL;
        entry->block = NULL; /* taken: the result owns it now */
        dsh_json_escape_backward(block + PTC_LEDGER_HEAD_ROOM, entry->len, entry->escaped, shift);
        json = block + start;
    }
    char *out = put(json, head, head_len);
    *out++ = '[';
    for (size_t i = 0; i < ledger->count; i++) {
        if (i)
            *out++ = ',';
        if (i == largest) {
            out = put(out, text_head, sizeof text_head - 1) + ledger->entries[i].escaped;
            out = put(out, text_tail, sizeof text_tail - 1);
        } else {
            out = put_entry(out, &ledger->entries[i]);
        }
    }
    *out++ = ']';
    out = put(out, tail, tail_len);
    *out = '\0';
    *ret_len = (size_t)(out - json);
    *ret_block = block;
    uint64_t budget = ledger->budget, used = ledger->used;
    bool overflowed = ledger->overflowed;
    ptc__ledger_destroy(ledger);
    ledger->budget = budget;
    ledger->used = used;
    ledger->overflowed = overflowed;
    return json;
}

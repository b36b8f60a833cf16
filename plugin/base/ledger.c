/* See ledger.h. */
#include "ledger.h"
#include "utf8.h"

#include <errno.h>
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

json_object *ptc__ledger_to_json(const struct ptc_ledger *ledger)
{
    json_object *array = json_object_new_array();
    if (!array)
        return NULL;
    for (size_t i = 0; i < ledger->count; i++) {
        const struct ptc_entry *entry = &ledger->entries[i];
        json_object *item;
        if (entry->is_image) {
            item = json_object_get(entry->image);
        } else {
            item = json_object_new_object();
            json_object_object_add(item, "type", json_object_new_string("text"));
            json_object_object_add(item, "text",
                                   json_object_new_string_len(entry->text.data, (int)entry->text.len));
        }
        json_object_array_add(array, item);
    }
    return array;
}

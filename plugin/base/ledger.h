/* Output ledger: the ordered text and image entries of one run and the shared maxOutputBytes
 * budget that logs and the completion or diagnostic draw from. Adjacent text is merged. */
#ifndef PTC_LEDGER_H
#define PTC_LEDGER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


/* Room kept before each text: the result's head and the entries before the text usually fit
 * there, so the largest text becomes the result where it lies (ptc__ledger_take_json). */
#define PTC_LEDGER_HEAD_ROOM 512

struct ptc_entry {
    bool is_image;
    char *block;    /* PTC_LEDGER_HEAD_ROOM bytes, then the text (valid UTF-8); NULL: none yet */
    size_t len;     /* bytes of text */
    size_t cap;     /* bytes the block holds after the room */
    size_t escaped; /* dsh_json_escaped_length of the text, kept as it grows */
    json_object *image; /* owned */
};

/* The entry's text (len bytes). */
const char *ptc__entry_text(const struct ptc_entry *entry);

struct ptc_ledger {
    struct ptc_entry *entries;
    size_t count, cap;
    uint64_t budget, used;
    bool overflowed; /* something did not fit: the entries are the fitting prefix */
};

void ptc__ledger_init(struct ptc_ledger *ledger, uint64_t budget);
void ptc__ledger_destroy(struct ptc_ledger *ledger);
/* Appends UTF-8 text. Returns 0 when it fit, 1 when only a prefix fit (ledger overflowed),
 * -ENOMEM. After an overflow nothing more is recorded. */
int ptc__ledger_text(struct ptc_ledger *ledger, const char *text, size_t len);
/* Appends an image descriptor (ownership taken). Counted as its serialized JSON length. */
int ptc__ledger_image(struct ptc_ledger *ledger, json_object *image);
/* Charges the completion or diagnostic: 0 when it fits, 1 when not (ledger overflowed). */
int ptc__ledger_charge(struct ptc_ledger *ledger, uint64_t bytes);
uint64_t ptc__ledger_remaining(const struct ptc_ledger *ledger);
/* head + the JSON array of the entries ([{"type":"text","text":..}|{"type":"image",...}], printed
 * as json-c prints it with DSH_JSON_PRINT_FLAGS) + tail, NUL-terminated (*ret_len without the
 * NUL), or NULL when out of memory. Built in the largest text's own block, where that text
 * mostly stays as it is, so the output is held once; free *ret_block (not the text) when done.
 * The entries are gone afterwards (used, budget and overflowed stay). */
char *ptc__ledger_take_json(struct ptc_ledger *ledger, const char *head, size_t head_len, const char *tail,
                            size_t tail_len, size_t *ret_len, void **ret_block);

#endif

/* Output ledger: ordering, merging, the shared budget and UTF-8-safe prefixes. */
#include "ledger.h"
#include "utf8.h"
#include "dsh_json_strict.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The entries as the result prints them (which empties the ledger). */
static const char *entries_json(struct ptc_ledger *ledger)
{
    static char buf[4096];
    size_t len;
    void *block;
    char *json = ptc__ledger_take_json(ledger, "<", 1, ">", 1, &len, &block);
    cr_assert(json);
    cr_assert_eq(len, strlen(json));
    cr_assert(len >= 2 && json[0] == '<' && json[len - 1] == '>', "%s", json);
    snprintf(buf, sizeof buf, "%.*s", (int)(len - 2), json + 1);
    free(block);
    cr_expect_eq(ledger->count, 0, "the entries were taken");
    return buf;
}

Test(ledger, merges_adjacent_text_in_order)
{
    struct ptc_ledger l;
    ptc__ledger_init(&l, 100);
    cr_expect_eq(ptc__ledger_text(&l, "a\n", 2), 0);
    cr_expect_eq(ptc__ledger_text(&l, "b", 1), 0);
    json_object *img = json_tokener_parse("{\"type\":\"image\",\"attachmentId\":\"i\",\"path\":\"/p\",\"width\":1,\"height\":2}");
    cr_expect_eq(ptc__ledger_image(&l, img), 0);
    cr_expect_eq(ptc__ledger_text(&l, "c", 1), 0);
    cr_expect_str_eq(entries_json(&l),
                     "[{\"type\":\"text\",\"text\":\"a\\nb\"},{\"type\":\"image\",\"attachmentId\":\"i\","
                     "\"path\":\"/p\",\"width\":1,\"height\":2},{\"type\":\"text\",\"text\":\"c\"}]");
    ptc__ledger_destroy(&l);
}

Test(ledger, overflow_keeps_fitting_prefix_and_stops)
{
    struct ptc_ledger l;
    ptc__ledger_init(&l, 5);
    cr_expect_eq(ptc__ledger_text(&l, "abc", 3), 0);
    cr_expect_eq(ptc__ledger_text(&l, "defg", 4), 1);
    cr_expect(l.overflowed);
    cr_expect_eq(ptc__ledger_text(&l, "h", 1), 1, "nothing is recorded after an overflow");
    cr_expect_str_eq(entries_json(&l), "[{\"type\":\"text\",\"text\":\"abcde\"}]");
    ptc__ledger_destroy(&l);
}

Test(ledger, prefix_never_splits_a_character)
{
    struct ptc_ledger l;
    ptc__ledger_init(&l, 4);
    /* "a" + U+20AC (3 bytes) + U+20AC: only "a€" (4 bytes) fits */
    cr_expect_eq(ptc__ledger_text(&l, "a\xE2\x82\xAC\xE2\x82\xAC", 7), 1);
    cr_expect_eq(l.used, 4);
    ptc__ledger_destroy(&l);
    ptc__ledger_init(&l, 3);
    cr_expect_eq(ptc__ledger_text(&l, "a\xE2\x82\xAC", 4), 1);
    cr_expect_eq(l.used, 1, "the euro sign does not fit in the 2 remaining bytes");
    ptc__ledger_destroy(&l);
}

Test(ledger, completion_charge_shares_the_budget)
{
    struct ptc_ledger l;
    ptc__ledger_init(&l, 10);
    cr_expect_eq(ptc__ledger_text(&l, "12345678", 8), 0);
    cr_expect_eq(ptc__ledger_charge(&l, 2), 0);
    cr_expect_eq(ptc__ledger_remaining(&l), 0);
    cr_expect_eq(ptc__ledger_charge(&l, 1), 1);
    cr_expect(l.overflowed);
    ptc__ledger_destroy(&l);
}

Test(ledger, image_that_does_not_fit_is_dropped_whole)
{
    struct ptc_ledger l;
    ptc__ledger_init(&l, 20);
    json_object *img = json_tokener_parse("{\"type\":\"image\",\"attachmentId\":\"i\",\"path\":\"/p\",\"width\":1,\"height\":2}");
    cr_expect_eq(ptc__ledger_text(&l, "x", 1), 0);
    cr_expect_eq(ptc__ledger_image(&l, img), 1);
    cr_expect_eq(l.count, 1);
    ptc__ledger_destroy(&l);
}

Test(ledger, utf8_prefix)
{
    cr_expect_eq(ptc__utf8_prefix("abc", 3, 10), 3);
    cr_expect_eq(ptc__utf8_prefix("\xF0\x9F\x98\x80z", 5, 3), 0);
    cr_expect_eq(ptc__utf8_prefix("\xF0\x9F\x98\x80z", 5, 4), 4);
}

/* Every entry may be the largest (the one the result is built in): the text is the same as
 * json-c prints for the same entries, whatever it holds and wherever it stands. */
Test(ledger, result_text_equals_json_c_wherever_the_largest_entry_is)
{
    static const char *const texts[] = {"tab\there \"q\" \\ \x01\x1f\x7f \xc3\xa9 /", "short", "x"};
    for (int largest = 0; largest < 3; largest++) {
        struct ptc_ledger l;
        ptc__ledger_init(&l, 1 << 20);
        json_object *expected = json_object_new_array();
        for (int i = 0; i < 3; i++) {
            char text[256];
            /* The largest entry is made long enough for the eight-byte scans. */
            snprintf(text, sizeof text, "%s%s", texts[i], i == largest ? " and a long plain tail of text" : "");
            cr_assert_eq(ptc__ledger_text(&l, text, strlen(text)), 0);
            json_object *t = json_object_new_object();
            json_object_object_add(t, "type", json_object_new_string("text"));
            json_object_object_add(t, "text", json_object_new_string(text));
            json_object_array_add(expected, t);
            json_object *img = json_tokener_parse("{\"type\":\"image\",\"attachmentId\":\"i\",\"path\":\"/p\",\"width\":1,\"height\":2}");
            json_object_array_add(expected, json_object_get(img));
            cr_assert_eq(ptc__ledger_image(&l, img), 0);
        }
        cr_expect_str_eq(entries_json(&l), json_object_to_json_string_ext(expected, DSH_JSON_PRINT_FLAGS),
                         "largest entry %d", largest);
        json_object_put(expected);
        ptc__ledger_destroy(&l);
    }
    struct ptc_ledger empty;
    ptc__ledger_init(&empty, 10);
    cr_expect_str_eq(entries_json(&empty), "[]");
    ptc__ledger_destroy(&empty);
}

/* The result grows around the largest text: in the room before it when the head fits there,
 * moved when it does not; with escapes in the text and without. */
Test(ledger, result_text_is_exact_for_any_head_and_text)
{
    static char head[PTC_LEDGER_HEAD_ROOM * 2];
    memset(head, 'h', sizeof head);
    const char *const texts[] = {"plain text without anything to escape, long enough for the scan",
                                 "\"quoted\"\n\ttext\x01 with escapes"};
    const size_t heads[] = {1, PTC_LEDGER_HEAD_ROOM - 40, PTC_LEDGER_HEAD_ROOM, sizeof head};
    for (size_t t = 0; t < 2; t++)
        for (size_t h = 0; h < sizeof heads / sizeof heads[0]; h++) {
            struct ptc_ledger l;
            ptc__ledger_init(&l, 1 << 20);
            cr_assert_eq(ptc__ledger_text(&l, "ab", 2), 0);
            json_object *img = json_tokener_parse("{\"type\":\"image\",\"attachmentId\":\"i\",\"path\":\"/p\",\"width\":1,\"height\":2}");
            cr_assert_eq(ptc__ledger_image(&l, img), 0);
            cr_assert_eq(ptc__ledger_text(&l, texts[t], strlen(texts[t])), 0);
            json_object *expected = json_object_new_array();
            json_object *a = json_object_new_object(), *b = json_object_new_object();
            json_object_object_add(a, "type", json_object_new_string("text"));
            json_object_object_add(a, "text", json_object_new_string("ab"));
            json_object_object_add(b, "type", json_object_new_string("text"));
            json_object_object_add(b, "text", json_object_new_string(texts[t]));
            json_object_array_add(expected, a);
            json_object_array_add(expected, json_tokener_parse("{\"type\":\"image\",\"attachmentId\":\"i\",\"path\":\"/p\",\"width\":1,\"height\":2}"));
            json_object_array_add(expected, b);
            char *want = NULL;
            cr_assert(asprintf(&want, "%.*s%s}", (int)heads[h], head, json_object_to_json_string_ext(expected, DSH_JSON_PRINT_FLAGS)) > 0);
            size_t len;
            void *block;
            char *json = ptc__ledger_take_json(&l, head, heads[h], "}", 1, &len, &block);
            cr_assert(json);
            cr_expect_eq(len, strlen(want), "text %zu, head %zu", t, heads[h]);
            cr_expect_str_eq(json, want, "text %zu, head %zu", t, heads[h]);
            free(block);
            free(want);
            json_object_put(expected);
            ptc__ledger_destroy(&l);
        }
}

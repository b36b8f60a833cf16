/* The growing text buffer: NUL-terminated after every write, content kept across growth. */
#include "dsh_text_buffer.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static int append(struct dsh_text_buffer *b, const char *s)
{
    return dsh_text_buffer_write(b, (unsigned char *)s, strlen(s));
}

Test(text_buffer, appends_and_stays_nul_terminated)
{
    struct dsh_text_buffer b = {0};
    cr_assert_eq(append(&b, "key: "), 1);
    cr_assert_eq(append(&b, "value\n"), 1);
    cr_expect_eq(b.len, 11);
    cr_expect_str_eq(b.data, "key: value\n");
    free(b.data);
}

Test(text_buffer, keeps_content_across_growth)
{
    struct dsh_text_buffer b = {0};
    char chunk[1000];
    memset(chunk, 'x', sizeof chunk - 1);
    chunk[sizeof chunk - 1] = '\0';
    for (int i = 0; i < 10; i++)
        cr_assert_eq(append(&b, chunk), 1);
    cr_expect_eq(b.len, 9990);
    cr_expect_geq(b.cap, b.len + 1);
    cr_expect_eq(b.data[b.len], '\0');
    cr_expect_eq(strspn(b.data, "x"), 9990);
    free(b.data);
}

Test(text_buffer, an_empty_write_still_terminates)
{
    struct dsh_text_buffer b = {0};
    cr_assert_eq(dsh_text_buffer_write(&b, (unsigned char *)"", 0), 1);
    cr_assert_not_null(b.data);
    cr_expect_str_eq(b.data, "");
    free(b.data);
}

Test(utf8_cut, never_ends_inside_a_sequence)
{
    const char *text = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* a, e-acute, euro, emoji */
    size_t len = strlen(text);
    size_t want[] = {0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 10};
    for (size_t max = 0; max < sizeof want / sizeof want[0]; max++)
        cr_expect_eq(dsh_utf8_cut(text, len, max), want[max], "max %zu", max);
    cr_expect_eq(dsh_utf8_cut("abc", 3, 2), 2);
    cr_expect_eq(dsh_utf8_cut("abc", 3, 99), 3);
    cr_expect_eq(dsh_utf8_cut("\xc3", 1, 99), 0, "an incomplete last sequence goes");
}

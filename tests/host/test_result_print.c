/* A result printed for a person (examples/host/run/dshh_result_print.c): text as-is, images as one line,
 * the value as JSON, the error on stderr, the sandbox denial noted. Images need a provider that
 * registers them, so this level is where their line format is pinned. */
#include "dshh_result_print.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

struct printed {
    int status;
    char *out, *err;
};

static struct printed print(const char *json)
{
    struct printed p = {0};
    size_t out_len, err_len;
    FILE *out = open_memstream(&p.out, &out_len);
    FILE *err = open_memstream(&p.err, &err_len);
    cr_assert(out && err);
    p.status = dshh__print_result(json, strlen(json), NULL, out, err);
    fclose(out);
    fclose(err);
    return p;
}

static void release(struct printed *p)
{
    free(p->out);
    free(p->err);
}

Test(result_print, text_image_and_value_in_order)
{
    struct printed p = print(
        "{\"ok\":true,\"value\":{\"n\":1.50,\"big\":12345678901234567890},"
        "\"output\":[{\"type\":\"text\",\"text\":\"a\\nb\"},"
        "{\"type\":\"image\",\"attachmentId\":\"a1\",\"path\":\"/w/a1.png\",\"width\":64,\"height\":32},"
        "{\"type\":\"text\",\"text\":\"after\\n\"}],"
        "\"sandbox\":{\"mode\":\"read-only\",\"denied\":false,\"enforcement\":\"full\"}}");
    cr_assert_eq(p.status, DSHH_EXIT_OK);
    /* Text that lacks its newline is completed before the image's own line. */
    cr_assert_str_eq(p.out, "a\nb\n[image a1 64x32 /w/a1.png]\nafter\n"
                            "{\"n\":1.50,\"big\":12345678901234567890}\n");
    cr_assert_str_eq(p.err, "");
    release(&p);
}

Test(result_print, the_newline_ending_an_inspected_image_is_not_doubled)
{
    /* inspect("see", image): text, the image entry, then the group's "\n". */
    struct printed p = print("{\"ok\":true,\"output\":[{\"type\":\"text\",\"text\":\"see [Image a1 2x2]\"},"
                             "{\"type\":\"image\",\"attachmentId\":\"a1\",\"path\":\"/w/a.png\",\"width\":2,\"height\":2},"
                             "{\"type\":\"text\",\"text\":\"\\nnext\\n\"}]}");
    cr_assert_str_eq(p.out, "see [Image a1 2x2]\n[image a1 2x2 /w/a.png]\nnext\n");
    release(&p);
}

Test(result_print, value_starts_on_its_own_line)
{
    struct printed p = print("{\"ok\":true,\"value\":\"v\",\"output\":[{\"type\":\"text\",\"text\":\"x\"}]}");
    cr_assert_str_eq(p.out, "x\n\"v\"\n");
    release(&p);
}

Test(result_print, no_value_prints_only_output)
{
    struct printed p = print("{\"ok\":true,\"output\":[{\"type\":\"text\",\"text\":\"only\\n\"}]}");
    cr_assert_eq(p.status, DSHH_EXIT_OK);
    cr_assert_str_eq(p.out, "only\n");
    release(&p);
}

Test(result_print, failure_goes_to_stderr_and_exits_1)
{
    struct printed p = print(
        "{\"ok\":false,\"error\":{\"kind\":\"timeout\",\"message\":\"execution timed out\"},"
        "\"output\":[{\"type\":\"text\",\"text\":\"partial\\n\"}],"
        "\"sandbox\":{\"mode\":\"workspace-write\",\"denied\":true}}");
    cr_assert_eq(p.status, DSHH_EXIT_FAILURE);
    cr_assert_str_eq(p.out, "partial\n");
    cr_assert_str_eq(p.err, "error (timeout): execution timed out\n"
                            "note: the sandbox (workspace-write) denied an operation of the program\n");
    release(&p);
}

Test(result_print, denial_is_noted_on_success_too)
{
    struct printed p = print("{\"ok\":true,\"output\":[],\"sandbox\":{\"mode\":\"read-only\",\"denied\":true}}");
    cr_assert_eq(p.status, DSHH_EXIT_OK);
    cr_assert_str_eq(p.err, "note: the sandbox (read-only) denied an operation of the program\n");
    release(&p);
}

Test(result_print, invalid_result_is_a_failure)
{
    struct printed p = print("not json");
    cr_assert_eq(p.status, DSHH_EXIT_FAILURE);
    cr_assert(strstr(p.err, "invalid result"));
    release(&p);
}

/* String vectors: always NULL-terminated, owned copies, failures leave nothing behind. */
#include "dsh_strv.h"

#include <criterion/criterion.h>
#include <string.h>

Test(strv, builds_a_null_terminated_vector_of_copies)
{
    struct dsh_strv sv = {0};
    char name[] = "HOME";
    cr_assert_eq(dsh_strv_push(&sv, name), 0);
    cr_assert_eq(dsh_strv_pushf(&sv, "%s=%d", "N", 42), 0);
    for (int i = 0; i < 20; i++) /* past the first growth */
        cr_assert_eq(dsh_strv_pushf(&sv, "%d", i), 0);
    name[0] = 'X';
    char **v = dsh_strv_finish(&sv);
    cr_assert_not_null(v);
    cr_expect_eq(sv.v, NULL, "finish resets the builder");
    cr_expect_str_eq(v[0], "HOME");
    cr_expect_str_eq(v[1], "N=42");
    cr_expect_str_eq(v[21], "19");
    cr_expect_null(v[22]);
    dsh_strv_free(v);
}

Test(strv, an_empty_builder_finishes_as_an_empty_vector)
{
    struct dsh_strv sv = {0};
    char **v = dsh_strv_finish(&sv);
    cr_assert_not_null(v);
    cr_expect_null(v[0]);
    dsh_strv_free(v);
    dsh_strv_free(NULL);
}

Test(strv, clear_frees_and_resets)
{
    struct dsh_strv sv = {0};
    cr_assert_eq(dsh_strv_push(&sv, "a"), 0);
    dsh_strv_clear(&sv);
    cr_expect_null(sv.v);
    cr_expect_eq(sv.n, 0);
    cr_expect_eq(sv.cap, 0);
}

Test(strv, dup_copies_and_accepts_null)
{
    const char *const in[] = {"a", "b", NULL};
    char **copy = dsh_strv_dup(in);
    cr_assert_not_null(copy);
    cr_expect_neq((void *)copy[0], (void *)in[0]);
    cr_expect_str_eq(copy[1], "b");
    cr_expect_null(copy[2]);
    dsh_strv_free(copy);
    char **empty = dsh_strv_dup(NULL);
    cr_assert_not_null(empty);
    cr_expect_null(empty[0]);
    dsh_strv_free(empty);
}

Test(strv, contains_compares_whole_strings)
{
    char *v[] = {"read-only", "workspace-write", NULL};
    cr_expect(dsh_strv_contains(v, "workspace-write"));
    cr_expect_not(dsh_strv_contains(v, "read"));
    cr_expect_not(dsh_strv_contains(v, "read-only-x"));
    cr_expect_not(dsh_strv_contains(NULL, "read-only"));
}

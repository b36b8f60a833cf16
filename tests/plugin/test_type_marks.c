/* The marks of TypeScript a retained run's program is scanned for (plugin/base/type_marks.c):
 * each mark alone is found, JavaScript without one is not, and a word counts only whole. */
#include "type_marks.h"

#include <criterion/criterion.h>
#include <string.h>

static bool marked(const char *program)
{
    return ptc__program_may_have_types(program, strlen(program));
}

Test(type_marks, each_mark_is_found)
{
    static const char *const programs[] = {
        "let x: number = 1",    "f<T>(x)",           "y as number",          "function f(a?) {}",
        "x!.y",                 "f()!",              "a[0]!",                "let v = x!",
        "x! = 1",               "type T = 1",        "enum E { A }",         "interface I { a }",
        "namespace N {}",       "declare const x",   "abstract class A {}",  "class A implements I {}",
        "class A { private x }", "class A { protected x }", "class A { public x }", "class A { readonly x }",
        "class B extends A { override m() {} }", "a satisfies T", "as", "x\xc3\xb1" " as T",
    };
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
        cr_expect(marked(programs[i]), "%s", programs[i]);
}

/* `"a ?" "?= b"` is `a ??= b` split in two: `??=` is a trigraph to C. */
Test(type_marks, javascript_without_one_is_not_marked)
{
    static const char *const programs[] = {
        "x += 1; x",   "a ?? b",        "a ?" "?= b",        "a?.b",          "a?.[0]",       "a?.()",
        "if (!x) y",   "a !== b",       "a != b",         "!!x",           "asa = 1",      "typeof x",
        "types = 2",   "enumerate()",   "o.publicKey",    "x\xc3\xb1" "as",   "",             "[1, 2].map(f)",
    };
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
        cr_expect_not(marked(programs[i]), "%s", programs[i]);
}

Test(type_marks, only_the_given_length_is_read)
{
    cr_expect_not(ptc__program_may_have_types("x; y: 1", 2));
    cr_expect(ptc__program_may_have_types("x; y: 1", 5));
    cr_expect_not(ptc__program_may_have_types("x\0: 1", 1));
    cr_expect(ptc__program_may_have_types("x\0: 1", 3));
    cr_expect(ptc__program_may_have_types("a?", 2), "a `?` at the end is optional, not `?.` or `??`");
    cr_expect_not(ptc__program_may_have_types("x!", 1));
}

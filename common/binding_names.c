/* See dsh_binding_names.h. The sets follow the issue on portable names: runtime globals of either
 * bootstrap, members of error objects in either language, dunder names, and the union of
 * ECMAScript reserved and strict-mode words with Python keywords and soft keywords. */
#include "dsh_binding_names.h"

#include <stdbool.h>
#include <string.h>

/* Globals a runtime defines itself (bootstrap/ and bootstrap-python/). */
#define DSH_RESERVED_GLOBAL_TABLE(X)                                                           \
    X("console") X("inspect") X("Image") X("globalThis") X("process") X("require") X("module") \
    X("undefined") X("eval") X("__dsh_main__") X("__builtins__") X("__name__") X("__debug__")

/* Members of error objects: Error (JavaScript) and BaseException (Python). */
#define DSH_RESERVED_ERROR_MEMBER_TABLE(X) \
    X("name") X("message") X("stack") X("args") X("with_traceback") X("add_note")

/* ECMAScript reserved words, strict-mode reserved words, Python keywords and soft keywords. */
#define DSH_RESERVED_WORD_TABLE(X)                                                               \
    X("await") X("break") X("case") X("catch") X("class") X("const") X("continue")               \
    X("debugger") X("default") X("delete") X("do") X("else") X("enum") X("export") X("extends")  \
    X("false") X("finally") X("for") X("function") X("if") X("import") X("in") X("instanceof")  \
    X("new") X("null") X("return") X("super") X("switch") X("this") X("throw") X("true")         \
    X("try") X("typeof") X("var") X("void") X("while") X("with") X("yield") X("let")             \
    X("static") X("implements") X("interface") X("package") X("private") X("protected")          \
    X("public") X("arguments") X("False") X("None") X("True") X("and") X("as") X("assert")       \
    X("async") X("def") X("del") X("elif") X("except") X("from") X("global") X("is")            \
    X("lambda") X("nonlocal") X("not") X("or") X("pass") X("raise") X("match") X("type") X("_")

#define DSH_NAME_ENTRY(word) word,
static const char *const reserved_globals[] = {DSH_RESERVED_GLOBAL_TABLE(DSH_NAME_ENTRY) NULL};
static const char *const reserved_error_members[] = {DSH_RESERVED_ERROR_MEMBER_TABLE(DSH_NAME_ENTRY) NULL};
static const char *const reserved_words[] = {DSH_RESERVED_WORD_TABLE(DSH_NAME_ENTRY) NULL};
#undef DSH_NAME_ENTRY

/* A run's spec is checked twice (resolve, run), each binding name against every set: the first
 * byte decides most comparisons without a call. */
static bool listed(const char *const *set, const char *name)
{
    for (size_t i = 0; set[i]; i++)
        if (set[i][0] == name[0] && strcmp(set[i], name) == 0)
            return true;
    return false;
}

bool dsh_is_portable_identifier(const char *s)
{
    if (!*s)
        return false;
    for (const char *p = s; *p; p++) {
        bool alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';
        bool digit = *p >= '0' && *p <= '9';
        if (!alpha && !(digit && p != s))
            return false;
    }
    return true;
}

static bool is_dunder(const char *s)
{
    size_t n = strlen(s);
    return n > 4 && strncmp(s, "__", 2) == 0 && strcmp(s + n - 2, "__") == 0;
}

const char *dsh_binding_name_problem(enum dsh_binding_name_role role, const char *name)
{
    if (!dsh_is_portable_identifier(name))
        return "is not an identifier (ASCII letters, digits and _, not starting with a digit)";
    if (listed(reserved_words, name))
        return "is a reserved word in JavaScript or Python";
    if (role != DSH_BINDING_FUNCTION && listed(reserved_globals, name))
        return "is a global the runtime defines";
    if (is_dunder(name))
        return "is a __dunder__ name, reserved by Python";
    if (role == DSH_BINDING_FUNCTION && listed(reserved_error_members, name))
        return "is a member of error objects";
    return NULL;
}

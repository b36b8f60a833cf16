/* Portable binding names: every reserved name of either language or runtime is refused in the
 * roles where it would collide, ordinary names pass. */
#include "dsh_binding_names.h"

#include <criterion/criterion.h>
#include <string.h>

#define OK(role, name) cr_expect_null(dsh_binding_name_problem(role, name), "%s should be usable", name)
#define REFUSED(role, name, why)                                                        \
    do {                                                                                \
        const char *problem = dsh_binding_name_problem(role, name);                    \
        cr_expect(problem && strcmp(problem, why) == 0, "%s: %s", name, problem ? problem : "(accepted)"); \
    } while (0)

static const char *const words[] = {
    "await", "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
    "else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in",
    "instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true", "try", "typeof", "var",
    "void", "while", "with", "yield", "let", "static", "implements", "interface", "package", "private",
    "protected", "public", "arguments", "False", "None", "True", "and", "as", "assert", "async", "def", "del",
    "elif", "except", "from", "global", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "match",
    "type", "_", NULL};

Test(binding_names, reserved_words_of_either_language_are_refused_everywhere)
{
    for (size_t i = 0; words[i]; i++) {
        REFUSED(DSH_BINDING_GLOBAL, words[i], "is a reserved word in JavaScript or Python");
        REFUSED(DSH_BINDING_FUNCTION, words[i], "is a reserved word in JavaScript or Python");
        REFUSED(DSH_BINDING_ERROR_CLASS, words[i], "is a reserved word in JavaScript or Python");
    }
}

Test(binding_names, runtime_globals_are_refused_as_globals_only)
{
    static const char *const globals[] = {"console", "inspect", "Image", "globalThis", "process", "require",
                                          "module", "undefined", "eval", NULL};
    for (size_t i = 0; globals[i]; i++) {
        REFUSED(DSH_BINDING_GLOBAL, globals[i], "is a global the runtime defines");
        REFUSED(DSH_BINDING_ERROR_CLASS, globals[i], "is a global the runtime defines");
        OK(DSH_BINDING_FUNCTION, globals[i]);
    }
    static const char *const python_globals[] = {"__dsh_main__", "__builtins__", "__name__", "__debug__", NULL};
    for (size_t i = 0; python_globals[i]; i++)
        REFUSED(DSH_BINDING_GLOBAL, python_globals[i], "is a global the runtime defines");
}

Test(binding_names, dunder_names_are_refused_everywhere)
{
    REFUSED(DSH_BINDING_GLOBAL, "__init__", "is a __dunder__ name, reserved by Python");
    REFUSED(DSH_BINDING_FUNCTION, "__getattr__", "is a __dunder__ name, reserved by Python");
    REFUSED(DSH_BINDING_FUNCTION, "__proto__", "is a __dunder__ name, reserved by Python");
    REFUSED(DSH_BINDING_ERROR_CLASS, "__X__", "is a __dunder__ name, reserved by Python");
    OK(DSH_BINDING_FUNCTION, "____"); /* ^__.+__$ needs something between the underscores */
    OK(DSH_BINDING_FUNCTION, "__private");
    OK(DSH_BINDING_FUNCTION, "trailing__");
}

Test(binding_names, error_object_members_are_refused_as_functions)
{
    static const char *const members[] = {"name", "message", "stack", "args", "with_traceback", "add_note", NULL};
    for (size_t i = 0; members[i]; i++) {
        REFUSED(DSH_BINDING_FUNCTION, members[i], "is a member of error objects");
        OK(DSH_BINDING_GLOBAL, members[i]);
    }
}

Test(binding_names, only_portable_identifiers)
{
    static const char *const bad[] = {"", "1x", "a-b", "a b", "$", "a$", "é", "a.b", NULL};
    for (size_t i = 0; bad[i]; i++)
        REFUSED(DSH_BINDING_FUNCTION, bad[i], "is not an identifier (ASCII letters, digits and _, not starting with a digit)");
    static const char *const good[] = {"tools", "search_v2", "_private", "X1", "registerImage", "WorkflowBindingError", NULL};
    for (size_t i = 0; good[i]; i++) {
        OK(DSH_BINDING_GLOBAL, good[i]);
        OK(DSH_BINDING_FUNCTION, good[i]);
        OK(DSH_BINDING_ERROR_CLASS, good[i]);
    }
}

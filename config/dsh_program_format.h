/* The closed vocabulary of program formats, from one table, and the one mapping from an
 * execution mode to the format a provider speaks (catalog.yaml: executionMode, replScoped).
 * Self-contained: the config library, the plugin and hosts include it alike. */
#ifndef DSH_PROGRAM_FORMAT_H
#define DSH_PROGRAM_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* X(SUFFIX, "format", "executionMode", repl_scoped): repl_scoped -1 when the mode has one format. */
#define DSH_PROGRAM_FORMAT_TABLE(X)                                                                \
    X(ASYNC_FUNCTION, "async-function", "per-call", -1)                                            \
    X(VM_SCRIPT, "vm-script", "vm-script", -1)                                                     \
    X(SCOPED_REPL, "scoped-repl", "persistent-in-memory", 1)                                       \
    X(REPL, "repl", "persistent-in-memory", 0)

enum dsh_program_format {
#define DSH__PROGRAM_FORMAT_ENUM(suffix, format, mode, scoped) DSH_PROGRAM_FORMAT_##suffix,
    DSH_PROGRAM_FORMAT_TABLE(DSH__PROGRAM_FORMAT_ENUM)
#undef DSH__PROGRAM_FORMAT_ENUM
};

/* The format of an execution mode ("per-call" -> "async-function", "vm-script" -> "vm-script",
 * "persistent-in-memory" -> "scoped-repl" or "repl" by repl_scoped); NULL for another mode. */
static inline const char *dsh_program_format_of_mode(const char *execution_mode, bool repl_scoped)
{
    if (!execution_mode)
        return NULL;
#define DSH__PROGRAM_FORMAT_OF(suffix, format, mode, scoped)                                       \
    if (strcmp(execution_mode, mode) == 0 && ((scoped) < 0 || (scoped) == (int)repl_scoped))       \
        return format;
    DSH_PROGRAM_FORMAT_TABLE(DSH__PROGRAM_FORMAT_OF)
#undef DSH__PROGRAM_FORMAT_OF
    return NULL;
}

/* The enum value of a format name; -1 for another name. */
static inline int dsh_program_format_parse(const char *name)
{
#define DSH__PROGRAM_FORMAT_PARSE(suffix, format, mode, scoped)                                    \
    if (name && strcmp(name, format) == 0)                                                         \
        return DSH_PROGRAM_FORMAT_##suffix;
    DSH_PROGRAM_FORMAT_TABLE(DSH__PROGRAM_FORMAT_PARSE)
#undef DSH__PROGRAM_FORMAT_PARSE
    return -1;
}

#endif

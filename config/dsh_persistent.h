/* resolvePersistentExecution: the settings that retain execution state for an effective program
 * format. Merge all three together (a profile patch replaces the whole config): Script and scoped
 * REPL keep their syntax; function bodies and Node REPL statements switch to
 * persistent-in-memory with its default replScoped, the scoped REPL. */
#ifndef DSH_PERSISTENT_H
#define DSH_PERSISTENT_H

#include <stdbool.h>

struct dsh_persistent_execution {
    const char *execution_mode; /* static: "vm-script" | "persistent-in-memory" */
    bool script_persistence;
    bool repl_scoped;
};

/* program_format: "async-function", "vm-script", "scoped-repl" or "repl" (describe()'s
 * programFormat). Returns 0, or -EINVAL for NULL arguments or another format. */
int dsh_resolve_persistent_execution(const char *program_format, struct dsh_persistent_execution *ret);

/* The effective program format of a row's settings: per-call -> async-function, vm-script ->
 * vm-script, persistent-in-memory -> scoped-repl (repl_scoped) or repl. NULL for another mode. */
const char *dsh_effective_program_format(const char *execution_mode, bool repl_scoped);

#endif

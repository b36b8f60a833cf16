/* resolvePersistentExecution (see dsh_persistent.h). */
#include "dsh_persistent.h"

#include <errno.h>
#include <string.h>

int dsh_resolve_persistent_execution(const char *program_format, struct dsh_persistent_execution *ret)
{
    if (!program_format || !ret)
        return -EINVAL;
    if (strcmp(program_format, "vm-script") == 0) {
        /* Script keeps its syntax: a retained context per owner. */
        *ret = (struct dsh_persistent_execution){"vm-script", true, false};
        return 0;
    }
    /* The scoped REPL keeps its syntax; function bodies and Node REPL statements take the
     * persistent-in-memory default, the scoped REPL. */
    if (strcmp(program_format, "scoped-repl") == 0 || strcmp(program_format, "async-function") == 0 ||
        strcmp(program_format, "repl") == 0) {
        *ret = (struct dsh_persistent_execution){"persistent-in-memory", false, true};
        return 0;
    }
    return -EINVAL;
}

const char *dsh_effective_program_format(const char *execution_mode, bool repl_scoped)
{
    if (!execution_mode)
        return NULL;
    if (strcmp(execution_mode, "per-call") == 0)
        return "async-function";
    if (strcmp(execution_mode, "vm-script") == 0)
        return "vm-script";
    if (strcmp(execution_mode, "persistent-in-memory") == 0)
        return repl_scoped ? "scoped-repl" : "repl";
    return NULL;
}

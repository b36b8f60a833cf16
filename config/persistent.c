/* resolvePersistentExecution (see dsh_persistent.h). */
#include "dsh_persistent.h"
#include "dsh_program_format.h"

#include <errno.h>
#include <string.h>

int dsh_resolve_persistent_execution(const char *program_format, struct dsh_persistent_execution *ret)
{
    if (!program_format || !ret)
        return -EINVAL;
    switch (dsh_program_format_parse(program_format)) {
    case DSH_PROGRAM_FORMAT_VM_SCRIPT:
        /* Script keeps its syntax: a retained context per owner. */
        *ret = (struct dsh_persistent_execution){"vm-script", true, false};
        return 0;
    case DSH_PROGRAM_FORMAT_SCOPED_REPL:
    case DSH_PROGRAM_FORMAT_ASYNC_FUNCTION:
    case DSH_PROGRAM_FORMAT_REPL:
        /* The scoped REPL keeps its syntax; function bodies and Node REPL statements take the
         * persistent-in-memory default, the scoped REPL. */
        *ret = (struct dsh_persistent_execution){"persistent-in-memory", false, true};
        return 0;
    }
    return -EINVAL;
}

const char *dsh_effective_program_format(const char *execution_mode, bool repl_scoped)
{
    return dsh_program_format_of_mode(execution_mode, repl_scoped);
}

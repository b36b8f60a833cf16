/* Landlock: the kernel's ABI version (the library's kernel probe and the launcher). */
#include "landlock_probe.h"
#include "landlock_defs.h"

#include <stddef.h>
#include <unistd.h>

int dshx__landlock_probe_abi(void)
{
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

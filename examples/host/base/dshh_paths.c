/* Where dsh finds its providers (Node, and the experimental Python one), workflow engine, default profile and sandbox launcher. meson
 * compiles this file twice: the build tree's dsh names the files of the build; the installed dsh
 * names them relative to its own executable (/proc/self/exe), so an installed prefix can move.
 * Paths given absolute at build time are used as they are. */
#include "dshh_paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(DSHH_PROVIDER_PATH) || !defined(DSHH_WORKFLOW_PATH) || \
    !defined(DSHH_PROFILE_PATH) || !defined(DSHH_LAUNCHER_PATH) || !defined(DSHH_PYTHON_PROVIDER_PATH)
#error "meson passes DSHH_PROVIDER_PATH, DSHH_WORKFLOW_PATH, DSHH_PROFILE_PATH, DSHH_LAUNCHER_PATH, DSHH_PYTHON_PROVIDER_PATH"
#endif

static const char *const compiled[] = {
    [DSHH_PATH_PROVIDER] = DSHH_PROVIDER_PATH,
    [DSHH_PATH_WORKFLOW] = DSHH_WORKFLOW_PATH,
    [DSHH_PATH_PROFILE] = DSHH_PROFILE_PATH,
    [DSHH_PATH_LAUNCHER] = DSHH_LAUNCHER_PATH,
    [DSHH_PATH_PYTHON_PROVIDER] = DSHH_PYTHON_PROVIDER_PATH,
};

static char resolved[DSHH_PATH_COUNT][PATH_MAX];

const char *dshh__path(enum dshh_path which)
{
    const char *path = compiled[which];
    if (!path[0])
        return NULL; /* the services' own default */
    if (path[0] == '/')
        return path;
    if (!resolved[which][0]) {
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return path; /* relative to the current directory: fails visibly when used */
        exe[n] = '\0';
        *strrchr(exe, '/') = '\0';
        char joined[PATH_MAX * 2];
        snprintf(joined, sizeof joined, "%s/%s", exe, path);
        if (!realpath(joined, resolved[which]) &&
            (size_t)snprintf(resolved[which], sizeof resolved[which], "%s", joined) >=
                sizeof resolved[which])
            return path;
    }
    return resolved[which];
}

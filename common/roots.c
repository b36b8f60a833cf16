/* The root rules: a root that is "/", overlaps the temp root, or (for writing) overlaps the
 * sandbox's own files or a system directory would quietly switch the confinement off while the
 * report still says `full`. Every place a root enters (the services' options, a policy's
 * workspaceRoot at resolve and at confine, dsh's rows) asks this one function. */
#include "dsh_roots.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Never writable, nor anything below them. */
static const char *const system_trees[] = {
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/dev",
    "/proc", "/sys", "/run", "/var/lib", "/var/log", "/var/spool", "/var/cache", "/var/mail",
    "/var/backups", NULL};
/* Shared parents: never writable themselves (every user's or every program's files are in
 * them); a directory below one is fine. */
static const char *const system_parents[] = {"/home", "/root", "/var", "/opt", "/srv", "/mnt",
                                             "/media", "/tmp", "/var/tmp", NULL};

/* path == root or path lies below root (both canonical). */
static bool within(const char *path, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return path[0] == '/';
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

#define SYSTEM_TREES (sizeof system_trees / sizeof *system_trees - 1)
#define SYSTEM_PARENTS (sizeof system_parents / sizeof *system_parents - 1)

/* What each system directory's name resolves to (/lib may be a link into /usr), resolved once
 * per process: about 55 readlink calls that every request's roots check would otherwise repeat.
 * These are the operating system's own links, which only its installer changes; a name that does
 * not resolve keeps its own spelling, and both spellings are always compared. The copies live in
 * static memory (the plugin can be unloaded, taking any pointer to the heap with it); one that
 * does not fit is resolved again at every check (NULL here). */
static char resolved_pool[4096];
static const char *resolved_trees[SYSTEM_TREES];
static const char *resolved_parents[SYSTEM_PARENTS];
static pthread_once_t resolved_once = PTHREAD_ONCE_INIT;

static void resolve_names(const char *const *names, const char **resolved, size_t n, size_t *used)
{
    char canonical[PATH_MAX];
    for (size_t i = 0; i < n; i++) {
        if (!realpath(names[i], canonical)) {
            resolved[i] = names[i];
            continue;
        }
        size_t size = strlen(canonical) + 1;
        if (size > sizeof resolved_pool - *used) {
            resolved[i] = NULL;
            continue;
        }
        resolved[i] = memcpy(resolved_pool + *used, canonical, size);
        *used += size;
    }
}

static void resolve_system_directories(void)
{
    size_t used = 0;
    resolve_names(system_trees, resolved_trees, SYSTEM_TREES, &used);
    resolve_names(system_parents, resolved_parents, SYSTEM_PARENTS, &used);
}

/* The system directory `canonical` is or lies in, judged by its name and by what the name
 * resolves to; *ret_dir gets the spelling that matched. NULL when none. */
static const char *system_directory(const char *canonical, char ret_dir[PATH_MAX])
{
    pthread_once(&resolved_once, resolve_system_directories);
    for (int trees = 1; trees >= 0; trees--) {
        const char *const *names = trees ? system_trees : system_parents;
        for (size_t i = 0; names[i]; i++) {
            const char *resolved = trees ? resolved_trees[i] : resolved_parents[i];
            if (!resolved)
                resolved = realpath(names[i], ret_dir) ? ret_dir : names[i];
            for (int by_name = 0; by_name < 2; by_name++) {
                const char *dir = by_name ? names[i] : resolved;
                if (trees ? within(canonical, dir) : !strcmp(canonical, dir)) {
                    if (dir != ret_dir)
                        snprintf(ret_dir, PATH_MAX, "%s", dir);
                    return names[i];
                }
            }
        }
    }
    return NULL;
}

static const char *refuse(char *msg, size_t size, const char *field, const char *given,
                          const char *canonical, const char *why)
{
    if (strcmp(given, canonical))
        snprintf(msg, size, "%s \"%s\" (resolves to %s) is refused: %s", field, given, canonical, why);
    else
        snprintf(msg, size, "%s \"%s\" is refused: %s", field, given, why);
    return msg;
}

const char *dsh_root_refusal(const char *field, const char *given, const char *canonical,
                             bool writable, const char *temp_root,
                             const char *const *protected_roots, char *msg, size_t size)
{
    char why[PATH_MAX + 128];
    if (!strcmp(canonical, "/"))
        return refuse(msg, size, field, given, canonical, "it is the filesystem root");
    if (temp_root && (within(temp_root, canonical) || within(canonical, temp_root))) {
        snprintf(why, sizeof why, "it %s the temp root %s, where runs keep their private files",
                 within(temp_root, canonical) ? "contains" : "lies inside", temp_root);
        return refuse(msg, size, field, given, canonical, why);
    }
    if (!writable)
        return NULL;
    for (size_t i = 0; protected_roots && protected_roots[i]; i++) {
        const char *p = protected_roots[i];
        if (within(p, canonical) || within(canonical, p)) {
            snprintf(why, sizeof why, "a writable root may not %s %s, which runs read and execute",
                     within(p, canonical) ? "contain" : "lie inside", p);
            return refuse(msg, size, field, given, canonical, why);
        }
    }
    char resolved[PATH_MAX];
    const char *system = system_directory(canonical, resolved);
    if (system) {
        snprintf(why, sizeof why, strcmp(canonical, resolved) ? "it lies inside the system directory %s, never writable"
                                                              : "%s is a system directory, never writable",
                 system);
        return refuse(msg, size, field, given, canonical, why);
    }
    return NULL;
}

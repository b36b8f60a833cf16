/* Where the plugin's own files are. PTC_DEFAULT_NODE, PTC_DEFAULT_BOOTSTRAP and the Python
 * runtime's PYTHON_BOOTSTRAP are relative to
 * the directory of the object the plugin is in (dladdr), so an installed prefix can move and the
 * build tree works through its bootstrap link (plugin/meson.build); an absolute PTC_DEFAULT_NODE
 * (meson -Dnode) is used as it is. */
#include "own_files.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PTC_DEFAULT_NODE
#error "PTC_DEFAULT_NODE must name the pinned Node executable (relative to the plugin) or a Node"
#endif
#ifndef PTC_DEFAULT_BOOTSTRAP
#error "PTC_DEFAULT_BOOTSTRAP must name bootstrap/child.cjs relative to the plugin"
#endif

/* The Python runtime's child, beside the plugin like bootstrap/ (a link in the build tree). */
#define PYTHON_BOOTSTRAP "bootstrap-python/process.py"

static struct {
    bool located;
    char node[PATH_MAX];
    char bootstrap[PATH_MAX];
    char stripper[PATH_MAX];
    char python_bootstrap[PATH_MAX];
    char dirs[3][PATH_MAX];
    const char *roots[3];
    const char *python_roots[2];
} own;

static void locate_one(const char *dir, const char *path, char *out)
{
    char joined[PATH_MAX];
    if ((size_t)snprintf(joined, sizeof joined, "%s%s%s", path[0] == '/' ? "" : dir,
                         path[0] == '/' ? "" : "/", path) >= sizeof joined)
        joined[0] = '\0'; /* too long to exist: launching names the empty path */
    if (!realpath(joined, out))
        memcpy(out, joined, sizeof joined);
}

static void parent(const char *path, char *out)
{
    snprintf(out, PATH_MAX, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash && slash != out)
        *slash = '\0';
}

static void locate(void)
{
    if (own.located)
        return;
    own.located = true;
    char self[PATH_MAX] = ".";
    Dl_info info;
    if (dladdr((void *)locate, &info) && info.dli_fname && realpath(info.dli_fname, self))
        *strrchr(self, '/') = '\0';
    locate_one(self, PTC_DEFAULT_NODE, own.node);
    locate_one(self, PTC_DEFAULT_BOOTSTRAP, own.bootstrap);
    size_t n = 0;
    parent(own.bootstrap, own.dirs[0]);
    snprintf(own.stripper, sizeof own.stripper, "%.*s/stripper.js", PATH_MAX - 16, own.dirs[0]);
    own.roots[n++] = own.dirs[0];
    /* The pinned Node lives inside the bootstrap directory; another one needs its own. */
    size_t len = strlen(own.dirs[0]);
    if (strncmp(own.node, own.dirs[0], len) != 0 || own.node[len] != '/') {
        parent(own.node, own.dirs[1]);
        own.roots[n++] = own.dirs[1];
    }
    own.roots[n] = NULL;
    locate_one(self, PYTHON_BOOTSTRAP, own.python_bootstrap);
    parent(own.python_bootstrap, own.dirs[2]);
    own.python_roots[0] = own.dirs[2];
}

const char *ptc__own_node(void)
{
    locate();
    return own.node;
}

const char *ptc__own_bootstrap(void)
{
    locate();
    return own.bootstrap;
}

const char *ptc__own_stripper(void)
{
    locate();
    return own.stripper;
}

bool ptc__own_node_is_pinned(void)
{
    return PTC_DEFAULT_NODE[0] != '/';
}

const char *const *ptc__own_readable_roots(void)
{
    locate();
    return own.roots;
}

const char *ptc__own_python_bootstrap(void)
{
    locate();
    return own.python_bootstrap;
}

const char *const *ptc__own_python_readable_roots(void)
{
    locate();
    return own.python_roots;
}

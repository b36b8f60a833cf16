/* Installed or build-tree locations (dshh_paths.c, compiled into each executable with its own
 * defaults: examples/host/meson.build and install/meson.build). */
#ifndef DSHH_PATHS_H
#define DSHH_PATHS_H

enum dshh_path { DSHH_PATH_PROVIDER, DSHH_PATH_WORKFLOW, DSHH_PATH_PROFILE, DSHH_PATH_LAUNCHER,
                 DSHH_PATH_PYTHON_PROVIDER, DSHH_PATH_COUNT };
/* The default location of a file dsh uses; NULL for the launcher of an installed dsh (the
 * services library finds its own). */
const char *dshh__path(enum dshh_path which);

#endif

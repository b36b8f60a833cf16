/* The sandbox report (sandbox_report.c). */
#ifndef DSHX_SANDBOX_REPORT_H
#define DSHX_SANDBOX_REPORT_H

#include "dsh_strv.h"
#include "kernel_probe.h"

#include <stdbool.h>

/* The report JSON (NULL: out of memory); ret_weak (may be NULL) collects "name: level" of every
 * capability a restricted mode enforces less than fully. dedicated_identity: the program runs as
 * an unprivileged uid/gid of its own (program_identity.c). */
char *dshx__report_json(const char *mode, int landlock_abi, const struct dshx__kernel *kernel,
                        bool dedicated_identity, struct dsh_strv *ret_weak);
/* The report of a run with a network allow-list: capabilities.network (full otherwise: nothing
 * but an empty namespace) becomes "allow-list". Takes report (freed), returns the new text or NULL
 * on out of memory. */
char *dshx__report_network_allow_list(char *report);
/* Pushes what keeps `resources` from full ("no memory cgroup", ...) onto ret_gaps; 0 or -ENOMEM. */
int dshx__resource_gaps(const struct dshx__kernel *kernel, struct dsh_strv *ret_gaps);
/* "; ..." naming what a container withholds (read-only cgroups, refused namespaces), or "". */
const char *dshx__container_hint(const struct dshx__kernel *kernel);

#endif /* DSHX_SANDBOX_REPORT_H */

/* What every file of the services library shares (services_config.c): the configuration copied
 * from the options at create, the modes and defaults, logging and failing. The files of each
 * service include it; only the composition root (dsh_linux_services.c) fills it. */
#ifndef DSHX_SERVICES_CONFIG_H
#define DSHX_SERVICES_CONFIG_H

#include "dsh_linux_services.h"
#include "kernel_probe.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DSHX_MODE_READ_ONLY "read-only"
#define DSHX_MODE_WORKSPACE_WRITE "workspace-write"
#define DSHX_MODE_DANGER "danger-full-access"
#define DSHX_DEFAULT_SESSION "default"
#define DSHX_DEFAULT_MAX_PROCESSES 512u
#define DSHX_DEFAULT_MAX_TEMP_BYTES (256ull << 20) /* a policy without maxTempBytes */
/* The session's totals when the options give none (README, "Limits"): sized for a 24 GiB machine. */
#define DSHX_DEFAULT_MAX_TOTAL_MEMORY_BYTES (16ull << 30)
#define DSHX_DEFAULT_MAX_TOTAL_PROCESSES 4096u

/* The library's public functions (dsh-linux-services.map lists them); everything else is hidden. */
#define DSHX_EXPORT __attribute__((visibility("default")))

/* ---- configuration copied from the options ---- */
struct dshx__config {
    char *launcher_path;
    char *supervisor_path;
    char *temp_root; /* canonical; the per-host directories live in it (tempdir.c) */
    char *workspace_root; /* canonical */
    char *default_mode;
    char *cgroup_proc_file;  /* /proc/self/cgroup, or the test knob cgroup_root's self-cgroup */
    char *cgroup_mount_root; /* /sys/fs/cgroup, or the test knob cgroup_root */
    char **extra_writable_roots; /* canonical, NULL-terminated, never NULL */
    char **extra_readable_roots; /* canonical, NULL-terminated, never NULL */
    char **protected_roots;      /* canonical: what a writable root must not overlap */
    int max_landlock_abi;
    uint32_t confine_delay_ms;
    uint32_t max_processes;
    uint64_t max_total_memory_bytes; /* the session's totals (range_cgroup.h, session group) */
    uint32_t max_total_processes;
    uint32_t fail_quiescence_observations; /* test-only fault injection */
    uint32_t fault_freeze_skipped_ms;      /* test-only fault injection */
    bool require_full_enforcement;
    /* The network policy of restricted runs (1.7): mode "none" (NULL) or "allow-list". */
    char *network_mode;
    char **network_allow, **network_deny, **network_override; /* NULL-terminated, never NULL */
    bool network_allow_private;
    dsh_defer_fn defer;
    void *loop;
    const struct dsh_logger *logger;
    struct dshx__kernel kernel;
};

bool dshx__mode_valid(const char *mode);
void dshx__log(const struct dshx__config *cfg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define dshx__fail dsh_error_setf /* fills ret_error (may be NULL), returns code */

#endif /* DSHX_SERVICES_CONFIG_H */

/* Internals shared by the files of the reference Linux services (library side). */
#ifndef DSHX_INTERNAL_H
#define DSHX_INTERNAL_H

#include "dsh_linux_services.h"
#include "dsh_strv.h"

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

/* ---- kernel facts, probed once at create ---- */
struct dshx__kernel {
    int landlock_abi;    /* 0 when Landlock is missing */
    bool seccomp;        /* seccomp filters with SECCOMP_RET_ERRNO */
    bool root;           /* euid 0: no user namespace needed */
    bool pid_ns;         /* the supervisor can own a PID namespace */
    bool namespaces;     /* the launcher can build mount/net/ipc namespaces with read-only mounts */
    bool pid_max_per_ns; /* kernel >= 6.14: pid_max bounds one PID namespace */
    unsigned cgroup_controllers; /* bit set (range_cgroup.h controllers) a new range can get */
    uint64_t file_max;           /* fs.file-max; 0 when unreadable (range_cgroup.h: nofile rule) */
};

int dshx__kernel_probe(struct dshx__kernel *ret_kernel);
int dshx__landlock_probe_abi(void); /* 0 when missing */

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
    dsh_defer_fn defer;
    void *loop;
    const struct dsh_logger *logger;
    struct dshx__kernel kernel;
};

bool dshx__mode_valid(const char *mode);
void dshx__log(const struct dshx__config *cfg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define dshx__fail dsh_error_setf /* fills ret_error (may be NULL), returns code */

/* ---- the execution world (also compiled into the launcher) ---- */
#include "world.h"

/* ---- per-run private temp dirs (tempdir.c) ---- */
/* /tmp/dsh-<euid>, made 0711 when missing; -EPERM when it is not this user's private directory. */
int dshx__temp_root_default(char *buf, size_t size);
/* This instance's directory under root, locked until close; first removes the directories of
 * instances that are gone. */
struct dshx__temp_host;
int dshx__temp_host_open(const char *root, struct dshx__temp_host **ret_host);
void dshx__temp_host_close(struct dshx__temp_host *host); /* removes the whole tree; NULL ok */
int dshx__tempdir_create(const struct dshx__temp_host *host, char **ret_path);
int dshx__tree_remove(const char *path); /* never follows symlinks; 0 or -errno */

/* ---- environment of spawned ranges ---- */
int dshx__build_env(const char *const *additions, const char *cwd, char ***ret_env,
                    struct dsh_error *ret_error);

/* ---- the sandbox report ---- */
/* The report JSON (NULL: out of memory); ret_weak (may be NULL) collects "name: level" of every
 * capability a restricted mode enforces less than fully. dedicated_identity: the program runs as
 * an unprivileged uid/gid of its own (program_identity.c). */
char *dshx__report_json(const char *mode, int landlock_abi, const struct dshx__kernel *kernel,
                        bool dedicated_identity, struct dsh_strv *ret_weak);
/* Pushes what keeps `resources` from full ("no memory cgroup", ...) onto ret_gaps; 0 or -ENOMEM. */
int dshx__resource_gaps(const struct dshx__kernel *kernel, struct dsh_strv *ret_gaps);

/* ---- the four services ---- */
struct dshx__fs;
struct dshx__sandbox;
struct dshx__subprocess;
struct dshx__policy;

int dshx__fs_create(const struct dshx__config *cfg, struct dsh_fs_service *vt,
                    struct dshx__fs **ret_fs);
void dshx__fs_destroy(struct dshx__fs *fs);

int dshx__sandbox_create(const struct dshx__config *cfg, struct dsh_sandbox_service *vt,
                         struct dshx__sandbox **ret_sandbox);
void dshx__sandbox_destroy(struct dshx__sandbox *sandbox);

int dshx__subprocess_create(const struct dshx__config *cfg, struct dsh_subprocess_service *vt,
                            struct dshx__subprocess **ret_subprocess);
void dshx__subprocess_destroy(struct dshx__subprocess *subprocess);

int dshx__policy_create(const struct dshx__config *cfg, struct dsh_sandbox_policy_service *vt,
                        struct dshx__policy **ret_policy);
void dshx__policy_destroy(struct dshx__policy *policy);
int dshx__policy_set_mode(struct dshx__policy *policy, const char *session_id, const char *mode,
                          struct dsh_error *ret_error);

/* ---- ranges (range_spawn.c) ---- */
struct dshx__range_cgroup;

struct dshx__range {
    struct dsh_process pub; /* first: the handle the host sees */
    int cmd_fd;             /* seqpacket to the supervisor: terminate in, status out */
    struct dshx__range_cgroup *cgroup; /* the range's own cgroup (range_cgroup.c), or NULL */
    bool freeze_sent;
    bool in_pid_ns;
    bool reaped;
    bool have_status;
    bool terminate_sent;
    uint32_t terminate_grace;
    struct dsh_exit_status status;
};

/* The session group of a services instance (range_cgroup.h) with cfg's totals written; *ret NULL
 * where no range cgroup can be made here. Fails when a total whose controller the report counted
 * cannot be set. */
int dshx__range_session_create(const struct dshx__config *cfg, struct dshx__range_cgroup **ret_session,
                               struct dsh_error *ret_error);

/* Starts a range; its cgroup is made in session (NULL: the range has none). */
int dshx__range_spawn(const struct dshx__config *cfg, const struct dshx__range_cgroup *session,
                      const struct dsh_spawn_request *request, struct dshx__range **ret_range,
                      struct dsh_error *ret_error);

#endif /* DSHX_INTERNAL_H */

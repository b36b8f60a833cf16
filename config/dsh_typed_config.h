/* Typed, validated configs of the rows the runtime and the reference host read.
 * Included by dsh_config.h. Each parse takes one row's config as a YAML
 * document text (empty = all defaults), validates it through the catalog and
 * fills absent fields from the catalog's defaults. On failure *ret_config is
 * zeroed (destroying it is harmless). */
#ifndef DSH_TYPED_CONFIG_H
#define DSH_TYPED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

struct dsh_catalog_provider;
struct dsh_diagnostics;

/* ---- @deepseek-ai/dsh-ptc-runtime-node ------------------------------ */

#define PTC_PROVIDER_NAME "@deepseek-ai/dsh-ptc-runtime-node"

enum ptc_execution_mode {
    PTC_EXECUTION_PER_CALL,
    PTC_EXECUTION_VM_SCRIPT,
    PTC_EXECUTION_PERSISTENT_IN_MEMORY,
};

enum ptc_launch_kind {
    PTC_LAUNCH_NODE_SCRIPT,
    PTC_LAUNCH_EMBEDDED,
};

struct ptc_launch {
    /* false: `launch` was omitted; the plugin uses its local carrier (pinned
     * Node + bootstrap) and kind/executable/bootstrap_path are unset. */
    bool is_explicit;
    enum ptc_launch_kind kind;
    char *executable;     /* owned; NULL unless is_explicit */
    char *bootstrap_path; /* owned; NULL = the plugin's bootstrap */
    char *stripper_path;  /* owned; NULL = the plugin's bootstrap/stripper.js */
};

struct ptc_config {
    enum ptc_execution_mode execution_mode;
    bool script_persistence;
    bool repl_scoped; /* conditional default already resolved */
    int64_t timeout_ms;
    int64_t max_timeout_ms;
    int64_t max_output_bytes;
    int64_t max_old_generation_size_mb;
    int64_t max_message_bytes;
    int64_t max_pending_calls;
    int64_t stop_grace_ms;
    int64_t grace_ms;
    int64_t prewarm_processes; /* 0: no pool */
    int64_t prewarm_idle_ms;
    int64_t prewarm_total_processes; /* 0: prewarm_processes */
    int64_t idle_release_ms;     /* 0: retained environments never expire (the Python row has none) */
    int64_t max_retained_owners; /* 0: no bound */
    /* Limits of the whole process range (0 where the row has no such field). */
    int64_t max_memory_mb;
    int64_t max_processes;
    int64_t max_cpu_percent;
    int64_t max_temp_bytes;
    bool require_resource_limits;
    bool discard_completion; /* the default of a run's discardCompletion */
    struct ptc_launch launch;
};

int ptc_config_parse(const char *yaml_text, size_t len, struct ptc_config *ret_config,
                     struct dsh_diagnostics *ret_diags);
void ptc_config_destroy(struct ptc_config *config); /* NULL ok; leaves it zeroed */
/* Loads provider's row and fills ret_config from it with fill_row; both runtimes' parsers are
 * this with their own row name and fill. On failure ret_config is destroyed. */
struct dsh_row;
typedef int (*ptc_config_fill_fn)(struct dsh_row *row, struct ptc_config *config);
/* An integer field of the row and where it lands in struct ptc_config. */
struct ptc_config_int {
    const char *key;
    size_t offset;
};
/* Reads each listed integer field (defaults from the catalog) into cfg. */
int ptc_config_fill_ints(struct dsh_row *row, const struct ptc_config_int *fields, size_t n,
                         struct ptc_config *cfg);
int ptc_config_parse_row(const char *provider, ptc_config_fill_fn fill_row, const char *yaml_text,
                         size_t len, struct ptc_config *ret_config, struct dsh_diagnostics *ret_diags);
const char *ptc_execution_mode_name(enum ptc_execution_mode mode);

/* ---- @deepseek-ai/dsh-ptc-runtime-python (ptc_python_config.c) ------ */

#define PTC_PYTHON_PROVIDER_NAME "@deepseek-ai/dsh-ptc-runtime-python"

/* The Python row in the shared struct: executionMode per-call, maxTimeoutMs = timeoutMs,
 * stopGraceMs = graceMs, launch.is_explicit with executable = `python` and bootstrap_path =
 * `bootstrapPath` (NULL: the plugin's bootstrap-python). Destroy with ptc_config_destroy. */
int ptc_python_config_parse(const char *yaml_text, size_t len, struct ptc_config *ret_config,
                            struct dsh_diagnostics *ret_diags);

/* ---- the reference host's service rows (service_config.c) ----------- */
/* Each _read (dsh-subprocess-local has only this one) takes a row's config that is already loaded and validated (the host composes rows
 * from several files): doc and config as the getters take them (config NULL: empty). It returns
 * 0 or a getter's negative errno, and zeroes *ret_config on failure. */

/* ---- dsh-sandbox-linux ---------------------------------------------- */

struct dsh_sandbox_linux_config {
    char **extra_writable_roots; /* owned, NULL-terminated, never NULL after parse */
    size_t n_extra_writable_roots;
    bool has_max_landlock_abi; /* false: use the kernel's ABI */
    int64_t max_landlock_abi;
    int64_t confine_delay_ms; /* test-only fault injection */
    bool require_full_enforcement;
};

int dsh_sandbox_linux_config_parse(const char *yaml_text, size_t len,
                                   struct dsh_sandbox_linux_config *ret_config,
                                   struct dsh_diagnostics *ret_diags);
int dsh_sandbox_linux_config_read(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                                  yaml_node_t *config, struct dsh_sandbox_linux_config *ret_config);
void dsh_sandbox_linux_config_destroy(struct dsh_sandbox_linux_config *config); /* NULL ok */

/* ---- dsh-subprocess-local ------------------------------------------- */

struct dsh_subprocess_local_config {
    int64_t max_total_memory_mb; /* the session's totals: every range of one host */
    int64_t max_total_processes;
    int64_t fail_quiescence_observations; /* test-only fault injection */
    int64_t fault_freeze_skipped_ms;      /* test-only fault injection */
    char *cgroup_root; /* owned; NULL: the host's cgroup filesystem (test-only otherwise) */
};

int dsh_subprocess_local_config_read(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                                     yaml_node_t *config, struct dsh_subprocess_local_config *ret_config);
void dsh_subprocess_local_config_destroy(struct dsh_subprocess_local_config *config); /* NULL ok */

/* ---- dsh-sandbox-policy --------------------------------------------- */

enum dsh_sandbox_mode {
    DSH_SANDBOX_READ_ONLY,
    DSH_SANDBOX_WORKSPACE_WRITE,
    DSH_SANDBOX_DANGER_FULL_ACCESS,
};

struct dsh_sandbox_policy_config {
    enum dsh_sandbox_mode mode;
    char *workspace_root; /* owned; NULL = the host's current directory */
    /* network: mode "none" or "allow-list" (owned); lists NULL-terminated, owned */
    char *network_mode;
    char **network_allow, **network_deny, **network_resolver_override;
    size_t n_network_allow, n_network_deny, n_network_resolver_override;
    bool network_allow_private_addresses;
};

int dsh_sandbox_policy_config_parse(const char *yaml_text, size_t len,
                                    struct dsh_sandbox_policy_config *ret_config,
                                    struct dsh_diagnostics *ret_diags);
int dsh_sandbox_policy_config_read(const struct dsh_catalog_provider *provider, yaml_document_t *doc,
                                   yaml_node_t *config, struct dsh_sandbox_policy_config *ret_config);
void dsh_sandbox_policy_config_destroy(struct dsh_sandbox_policy_config *config); /* NULL ok */
const char *dsh_sandbox_mode_name(enum dsh_sandbox_mode mode);

#endif

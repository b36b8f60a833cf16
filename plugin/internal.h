/* Internal types shared by the plugin's files: the instance, resolved specs and runs. */
#ifndef PTC_INTERNAL_H
#define PTC_INTERNAL_H

#include "control.h"
#include "dsh_config.h"
#include "dsh_provider.h"
#include "ledger.h"
#include "loop.h"

#include <json-c/json.h>
#include <stdbool.h>

#define PTC_NAME "@deepseek-ai/dsh-ptc-runtime-node"
#define PTC_VERSION "0.1.0"

struct ptc_run;
struct ptc_env;

struct ptc_initializer {
    struct ptc_initializer *next;
    dsh_registration id;
    char *program;
};

struct dsh_instance {
    struct ptc_config config;
    struct dsh_services services; /* copy of the bundle; vtables are borrowed */
    struct ptc_loop loop;
    const char *program_format; /* async-function | vm-script | scoped-repl | repl */
    bool retains_state;         /* stateOwner selects a retained environment */
    struct ptc_run *runs;       /* live runs, newest first */
    struct ptc_env *envs;       /* every environment not yet freed */
    dsh_run_id next_run_id;
    bool admitted_any;          /* initializers may only be registered before this */
    struct ptc_initializer *initializers;
    dsh_registration next_registration;
    bool subscribed;
    uint64_t subscription;
    bool unloading;
};

/* A resolved spec (schemas/spec.json). Strings point into root. */
struct ptc_spec {
    json_object *root;
    const char *program;
    const char *cwd;
    bool has_timeout; /* false: timeoutMs null, no elapsed timer */
    int64_t timeout_ms;
    bool discard_completion;
    const char *state_owner; /* NULL when absent */
    json_object *policy;     /* {mode, workspaceRoot, sessionId} */
    const char *mode;
    json_object *bindings; /* [{global, functions, errorClass}] */
};

int ptc__spec_parse(const char *json, size_t len, struct ptc_spec *ret_spec, struct dsh_error *err);
bool ptc__is_sandbox_mode(const char *mode);
/* A run's cwd must be an existing directory the execution world can see (caller misuse otherwise:
 * the program would fail before starting, with Node's internal frames). */
int ptc__check_cwd(struct dsh_instance *inst, const char *cwd, struct dsh_error *err);
void ptc__spec_destroy(struct ptc_spec *spec);
/* True when global.name is declared by the spec's bindings. */
bool ptc__spec_allows(const struct ptc_spec *spec, const char *global, const char *name);

int ptc__resolve(struct dsh_instance *inst, const char *request_json, size_t request_len,
                 char **ret_spec_json, size_t *ret_spec_len, struct dsh_error *err);

/* The joined source of every registered initializer, or NULL (transfer full). */
char *ptc__initializer_source(struct dsh_instance *inst);

/* Builds the argv that starts the bootstrap (transfer full, NULL-terminated; free with
 * ptc__argv_free) and the env additions the launch needs. */
int ptc__launch_argv(struct dsh_instance *inst, char ***ret_argv, char ***ret_env,
                     struct dsh_error *err);
void ptc__argv_free(char **argv);

/* Runs: run.c */
int ptc__run_start(struct dsh_instance *inst, const char *spec_json, size_t spec_len,
                   const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run,
                   struct dsh_error *err);
struct ptc_run *ptc__run_find(struct dsh_instance *inst, dsh_run_id id);
int ptc__run_cancel(struct ptc_run *run, const char *reason);
int ptc__run_reply(struct ptc_run *run, uint64_t call, bool ok, const char *text, size_t len);

/* error helper: fills err (may be NULL) and returns code */
#define ptc__fail dsh_error_setf
void ptc__log(struct dsh_instance *inst, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

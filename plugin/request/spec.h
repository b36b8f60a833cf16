/* Resolved specs (host-abi/schemas/spec.json): parsing and validation. run() fills no defaults,
 * so every field must be present. */
#ifndef PTC_SPEC_H
#define PTC_SPEC_H

#include "ptc_host.h"

#include <json-c/json.h>
#include <stdbool.h>

/* Strings point into root. */
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
void ptc__spec_destroy(struct ptc_spec *spec);
bool ptc__is_sandbox_mode(const char *mode);
/* The first member of obj whose name is not in known (NULL-terminated), or NULL. */
const char *ptc__unknown_key(json_object *obj, const char *const *known);
/* A run's cwd must be an existing directory the execution world can see (caller misuse otherwise:
 * the program would fail before starting, with Node's internal frames). */
int ptc__check_cwd(struct ptc_host *host, const char *cwd, struct dsh_error *err);
/* True when global.name is declared by the spec's bindings. */
bool ptc__spec_allows(const struct ptc_spec *spec, const char *global, const char *name);
/* A string field of the spec's policy ("" when absent). */
const char *ptc__spec_policy_string(const struct ptc_spec *spec, const char *key);

#endif

/* resolve(request) -> spec: fills every default a run needs. See host-abi/schemas/request.json
 * and spec.json. */
#include "resolve.h"
#include "image.h"
#include "language.h"
#include "spec.h"
#include "dsh_json_strict.h"
#include "dsh_roots.h"
#include "own_files.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Standing policy of a session from the sandboxPolicy service. */
static json_object *standing_policy(struct ptc_host *host, const char *session_id,
                                    struct dsh_error *err, int *rc)
{
    const struct dsh_sandbox_policy_service *svc = host->services.sandbox_policy;
    char small[1024];
    int n = svc->resolve(svc->ctx, session_id, small, sizeof small);
    if (n < 0) {
        *rc = ptc__fail(err, n, "sandboxPolicy could not resolve the session policy: %s", dsh_strerror(n));
        return NULL;
    }
    char *text = small;
    if ((size_t)n >= sizeof small) {
        text = malloc((size_t)n + 1);
        if (!text || svc->resolve(svc->ctx, session_id, text, (size_t)n + 1) != n) {
            free(text);
            *rc = ptc__fail(err, -ENOMEM, "sandboxPolicy resolution failed");
            return NULL;
        }
    }
    json_object *policy = dsh_json_parse_strict(text, (size_t)n);
    if (text != small)
        free(text);
    json_object *mode, *root;
    if (!policy || !json_object_is_type(policy, json_type_object) ||
        !json_object_object_get_ex(policy, "mode", &mode) || !json_object_is_type(mode, json_type_string) ||
        !ptc__is_sandbox_mode(json_object_get_string(mode)) ||
        !json_object_object_get_ex(policy, "workspaceRoot", &root) ||
        !json_object_is_type(root, json_type_string) || json_object_get_string(root)[0] != '/') {
        json_object_put(policy);
        *rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "sandboxPolicy returned an invalid policy");
        return NULL;
    }
    return policy;
}

/* The host's policy names the workspace; a confined run given "/", or for writing a system
 * directory or one overlapping the plugin's own files, would run unconfined in effect while the
 * report says otherwise (common/roots.c has the rules; the temp root is the services' to check). */
static int check_workspace(const char *root, const char *mode, struct dsh_error *err)
{
    if (!strcmp(mode, "danger-full-access"))
        return 0;
    char canonical[PATH_MAX], msg[sizeof(err->message)];
    if (!realpath(root, canonical))
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "sandboxPolicy workspaceRoot \"%s\" is not an existing directory",
                         root);
    /* The bootstrap and the Node it launches, of either runtime: runs read and execute them. */
    const char *own[5] = {NULL};
    size_t n = 0;
    for (const char *const *r = ptc__own_readable_roots(); *r && n < 2; r++)
        own[n++] = *r;
    for (const char *const *r = ptc__own_python_readable_roots(); *r && n < 4; r++)
        own[n++] = *r;
    if (dsh_root_refusal("sandboxPolicy workspaceRoot", root, canonical, !strcmp(mode, "workspace-write"),
                         NULL, own, msg, sizeof msg))
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "%s", msg);
    return 0;
}

static int resolve_timeout(struct ptc_host *host, json_object *request, json_object *spec,
                           struct dsh_error *err)
{
    json_object *v;
    if (!json_object_object_get_ex(request, "timeoutMs", &v)) {
        json_object_object_add(spec, "timeoutMs", json_object_new_int64(host->config.timeout_ms));
        return 0;
    }
    if (!v) { /* explicit null: no elapsed timer (service callers) */
        json_object_object_add(spec, "timeoutMs", NULL);
        return 0;
    }
    double d = json_object_get_double(v);
    bool numeric = json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
    if (numeric && !host->language->timeout_overrides)
        return ptc__fail(err, DSH_E_UNSUPPORTED,
                         "timeoutMs overrides are not supported by %s: every run has the configured deadline "
                         "(%lld ms); only null (no deadline, for service callers) is accepted",
                         host->language->provider_name, (long long)host->config.timeout_ms);
    if (!numeric || !isfinite(d) || d <= 0 || d != floor(d))
        return ptc__fail(err, DSH_E_REQUEST_INVALID,
                         "timeoutMs must be a positive integer number of milliseconds or null");
    int64_t ms = d > (double)host->config.max_timeout_ms ? host->config.max_timeout_ms : (int64_t)d;
    json_object_object_add(spec, "timeoutMs", json_object_new_int64(ms));
    return 0;
}

static int copy_optional(json_object *request, json_object *spec, const char *key, json_type type,
                         json_object *fallback, struct dsh_error *err)
{
    json_object *v;
    if (!json_object_object_get_ex(request, key, &v)) {
        json_object_object_add(spec, key, fallback);
        return 0;
    }
    json_object_put(fallback);
    if (v && !json_object_is_type(v, type))
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "request field %s has the wrong type", key);
    json_object_object_add(spec, key, json_object_get(v));
    return 0;
}

/* An approved one-time escalation may also carry another network list (1.7): the request's
 * `network` replaces the standing one for this run, which the sandbox service then validates as
 * it validates the row's. The test-only resolverOverride stays the standing policy's. */
static int escalated_network(json_object *request, json_object *policy, bool escalated, struct dsh_error *err)
{
    json_object *network;
    if (!json_object_object_get_ex(request, "network", &network) || !network)
        return 0;
    if (!escalated)
        return ptc__fail(err, DSH_E_REQUEST_INVALID,
                         "request network needs mode: another network list is a one-time escalation");
    if (!json_object_is_type(network, json_type_object))
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "request network must be an object");
    if (json_object_object_get_ex(network, "resolverOverride", NULL))
        return ptc__fail(err, DSH_E_REQUEST_INVALID,
                         "request network.resolverOverride is refused: it is test-only configuration");
    json_object *copy = NULL, *standing, *override;
    if (json_object_deep_copy(network, &copy, NULL) < 0)
        return ptc__fail(err, -ENOMEM, "out of memory");
    if (json_object_object_get_ex(policy, "network", &standing) &&
        json_object_object_get_ex(standing, "resolverOverride", &override))
        json_object_object_add(copy, "resolverOverride", json_object_get(override));
    json_object_object_add(policy, "network", copy);
    return 0;
}

int ptc__resolve(struct ptc_host *host, const char *request_json, size_t request_len,
                 char **ret_spec_json, size_t *ret_spec_len, struct dsh_error *err)
{
    json_object *request = dsh_json_parse_strict(request_json, request_len);
    json_object *spec = NULL, *policy = NULL, *v;
    int rc = 0;
    if (!request || !json_object_is_type(request, json_type_object)) {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "the request is not a JSON object");
        goto out;
    }
    static const char *const known[] = {"program", "cwd", "timeoutMs", "discardCompletion", "stateOwner",
                                        "sessionId", "mode", "network", "bindings", "images", NULL};
    const char *unknown = ptc__unknown_key(request, known);
    if (unknown) {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "request has unknown or unsupported field \"%s\"", unknown);
        goto out;
    }
    if (!json_object_object_get_ex(request, "program", &v) || !json_object_is_type(v, json_type_string)) {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "request field program must be a string");
        goto out;
    }
    const char *session_id = NULL;
    if (json_object_object_get_ex(request, "sessionId", &v) && v) {
        if (!json_object_is_type(v, json_type_string)) {
            rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "request field sessionId must be a string");
            goto out;
        }
        session_id = json_object_get_string(v);
    }
    policy = standing_policy(host, session_id, err, &rc);
    if (!policy)
        goto out;
    /* An approved one-time escalation names a different mode for this run only. */
    bool escalated = false;
    if (json_object_object_get_ex(request, "mode", &v) && v) {
        escalated = true;
        if (!json_object_is_type(v, json_type_string) || !ptc__is_sandbox_mode(json_object_get_string(v))) {
            rc = ptc__fail(err, DSH_E_REQUEST_INVALID,
                           "request mode must be read-only, workspace-write or danger-full-access");
            goto out;
        }
        json_object_object_add(policy, "mode", json_object_get(v));
    }
    if ((rc = escalated_network(request, policy, escalated, err)) < 0)
        goto out;
    json_object *root;
    json_object_object_get_ex(policy, "workspaceRoot", &root);
    if ((rc = check_workspace(json_object_get_string(root),
                              json_object_get_string(json_object_object_get(policy, "mode")), err)) < 0)
        goto out;
    spec = json_object_new_object();
    json_object_object_add(spec, "program", json_object_get(json_object_object_get(request, "program")));
    if (json_object_object_get_ex(request, "cwd", &v) && v) {
        if (!json_object_is_type(v, json_type_string) || json_object_get_string(v)[0] != '/') {
            rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "request cwd must be an absolute path");
            goto out;
        }
        json_object_object_add(spec, "cwd", json_object_get(v));
    } else {
        json_object_object_add(spec, "cwd", json_object_get(root));
    }
    if ((rc = resolve_timeout(host, request, spec, err)) < 0)
        goto out;
    /* Absent: the row's discardCompletion. */
    if ((rc = copy_optional(request, spec, "discardCompletion", json_type_boolean,
                            json_object_new_boolean(host->config.discard_completion), err)) < 0)
        goto out;
    if ((rc = copy_optional(request, spec, "stateOwner", json_type_string, NULL, err)) < 0)
        goto out;
    /* An escalation omits the state owner: it runs in a
     * fresh temporary environment released before the call returns, so it can neither read the
     * owner's standing variables nor leave declarations or an elevated process behind. */
    if (escalated)
        json_object_object_add(spec, "stateOwner", NULL);
    if (!host->language->retaining_modes && json_object_object_get(spec, "stateOwner")) {
        rc = ptc__fail(err, DSH_E_UNSUPPORTED, "stateOwner is not supported by %s: it runs per call only, "
                       "nothing is retained", host->language->provider_name);
        goto out;
    }
    if ((rc = copy_optional(request, spec, "bindings", json_type_array, json_object_new_array(), err)) < 0)
        goto out;
    json_object_object_add(spec, "policy", json_object_get(policy));
    /* images pass through; their files are read now so a bad file fails resolve, not the run. */
    if (json_object_object_get_ex(request, "images", &v) && v) {
        if ((rc = ptc__images_check_shape(v, err)) < 0 || (rc = ptc__images_check_files(host, v, err)) < 0)
            goto out;
        json_object_object_add(spec, "images", json_object_get(v));
    }
    /* Validate the result exactly as run() will, so resolve never hands out an unusable spec. */
    const char *text = json_object_to_json_string_ext(spec, DSH_JSON_PRINT_FLAGS);
    struct ptc_spec check;
    if ((rc = ptc__spec_parse(text, strlen(text), &check, err)) < 0)
        goto out;
    rc = ptc__check_cwd(host, check.cwd, err);
    ptc__spec_destroy(&check);
    if (rc < 0)
        goto out;
    *ret_spec_json = strdup(text);
    if (!*ret_spec_json) {
        rc = ptc__fail(err, -ENOMEM, "out of memory");
        goto out;
    }
    if (ret_spec_len)
        *ret_spec_len = strlen(text);
out:
    json_object_put(policy);
    json_object_put(spec);
    json_object_put(request);
    return rc;
}

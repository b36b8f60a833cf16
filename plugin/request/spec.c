/* Parsing of resolved specs. run() never invents defaults: every field must be present. */
#include "spec.h"
#include "dsh_binding_names.h"
#include "image.h"
#include "dsh_json_strict.h"
#include "dsh_strv.h"

#include <string.h>
#include <sys/stat.h>

const char *ptc__unknown_key(json_object *obj, const char *const *known)
{
    json_object_object_foreach(obj, key, val)
    {
        (void)val;
        if (!dsh_strv_contains((char *const *)known, key))
            return key;
    }
    return NULL;
}

bool ptc__is_sandbox_mode(const char *mode)
{
    return strcmp(mode, "read-only") == 0 || strcmp(mode, "workspace-write") == 0 ||
           strcmp(mode, "danger-full-access") == 0;
}

int ptc__check_cwd(struct ptc_host *host, const char *cwd, struct dsh_error *err)
{
    struct stat st;
    if (stat(cwd, &st) != 0 || !S_ISDIR(st.st_mode))
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "cwd %s is not an existing directory", cwd);
    char world[4096];
    const struct dsh_fs_service *fs = host->services.fs;
    if (fs->map_host_path(fs->ctx, cwd, world, sizeof world) < 0)
        return ptc__fail(err, DSH_E_NOT_MAPPED, "cwd %s is not visible in the execution world", cwd);
    return 0;
}

static int check_bindings(json_object *bindings, struct dsh_error *err)
{
    size_t n = json_object_array_length(bindings);
    for (size_t i = 0; i < n; i++) {
        json_object *ns = json_object_array_get_idx(bindings, i), *v, *fns;
        if (!json_object_is_type(ns, json_type_object) ||
            !json_object_object_get_ex(ns, "global", &v) || !json_object_is_type(v, json_type_string))
            return ptc__fail(err, DSH_E_REQUEST_INVALID, "bindings[%zu].global must be a string", i);
        const char *global = json_object_get_string(v), *problem;
        if ((problem = dsh_binding_name_problem(DSH_BINDING_GLOBAL, global)))
            return ptc__fail(err, DSH_E_REQUEST_INVALID, "bindings[%zu].global \"%s\" %s", i, global, problem);
        for (size_t j = 0; j < i; j++) {
            json_object *other, *g;
            other = json_object_array_get_idx(bindings, j);
            json_object_object_get_ex(other, "global", &g);
            if (strcmp(json_object_get_string(g), global) == 0)
                return ptc__fail(err, DSH_E_REQUEST_INVALID, "binding namespace \"%s\" is declared twice",
                                 global);
        }
        if (!json_object_object_get_ex(ns, "functions", &fns) || !json_object_is_type(fns, json_type_array))
            return ptc__fail(err, DSH_E_REQUEST_INVALID, "bindings[%zu].functions must be an array", i);
        for (size_t k = 0; k < json_object_array_length(fns); k++) {
            json_object *fn = json_object_array_get_idx(fns, k);
            if (!json_object_is_type(fn, json_type_string))
                return ptc__fail(err, DSH_E_REQUEST_INVALID, "bindings[%zu].functions[%zu] must be a string", i, k);
            const char *name = json_object_get_string(fn);
            if ((problem = dsh_binding_name_problem(DSH_BINDING_FUNCTION, name)))
                return ptc__fail(err, DSH_E_REQUEST_INVALID, "bindings[%zu].functions[%zu] \"%s\" %s", i, k,
                                 name, problem);
        }
        if (json_object_object_get_ex(ns, "errorClass", &v)) {
            if (!json_object_is_type(v, json_type_string))
                return ptc__fail(err, DSH_E_REQUEST_INVALID, "bindings[%zu].errorClass must be a string", i);
            const char *name = json_object_get_string(v);
            if ((problem = dsh_binding_name_problem(DSH_BINDING_ERROR_CLASS, name)))
                return ptc__fail(err, DSH_E_REQUEST_INVALID, "bindings[%zu].errorClass \"%s\" %s", i, name, problem);
        }
        json_object_object_foreach(ns, key, val)
        {
            (void)val;
            if (strcmp(key, "global") && strcmp(key, "functions") && strcmp(key, "errorClass"))
                return ptc__fail(err, DSH_E_REQUEST_INVALID, "bindings[%zu] has unknown field \"%s\"", i, key);
        }
    }
    return 0;
}

static const char *required_string(json_object *root, const char *key, bool nullable,
                                   struct dsh_error *err, int *rc)
{
    json_object *v;
    if (!json_object_object_get_ex(root, key, &v)) {
        *rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec field %s is missing (run() fills no defaults; use resolve())", key);
        return NULL;
    }
    if (!v && nullable)
        return NULL;
    if (!json_object_is_type(v, json_type_string)) {
        *rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec field %s must be a string%s", key,
                        nullable ? " or null" : "");
        return NULL;
    }
    return json_object_get_string(v);
}

int ptc__spec_parse(const char *json, size_t len, struct ptc_spec *ret_spec, struct dsh_error *err)
{
    memset(ret_spec, 0, sizeof *ret_spec);
    json_object *root = dsh_json_parse_strict(json, len);
    if (!root || !json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        return ptc__fail(err, DSH_E_REQUEST_INVALID, "the spec is not a JSON object");
    }
    ret_spec->root = root;
    int rc = 0;
    static const char *const known[] = {"program", "cwd", "timeoutMs", "discardCompletion",
                                        "stateOwner", "policy", "bindings", "images", NULL};
    const char *unknown = ptc__unknown_key(root, known);
    if (unknown) {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec has unknown field \"%s\"", unknown);
        goto out;
    }
    ret_spec->program = required_string(root, "program", false, err, &rc);
    if (rc)
        goto out;
    ret_spec->cwd = required_string(root, "cwd", false, err, &rc);
    if (rc)
        goto out;
    if (ret_spec->cwd[0] != '/') {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec cwd must be an absolute path");
        goto out;
    }
    ret_spec->state_owner = required_string(root, "stateOwner", true, err, &rc);
    if (rc)
        goto out;
    json_object *v;
    if (!json_object_object_get_ex(root, "timeoutMs", &v)) {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec field timeoutMs is missing (null disables the timer)");
        goto out;
    }
    if (v) {
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) <= 0 ||
            json_object_get_int64(v) > INT32_MAX) {
            rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec timeoutMs must be a positive integer up to 2147483647 or null");
            goto out;
        }
        ret_spec->has_timeout = true;
        ret_spec->timeout_ms = json_object_get_int64(v);
    }
    if (!json_object_object_get_ex(root, "discardCompletion", &v) || !json_object_is_type(v, json_type_boolean)) {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec discardCompletion must be a boolean");
        goto out;
    }
    ret_spec->discard_completion = json_object_get_boolean(v);
    if (!json_object_object_get_ex(root, "policy", &ret_spec->policy) ||
        !json_object_is_type(ret_spec->policy, json_type_object)) {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec policy must be an object");
        goto out;
    }
    ret_spec->mode = required_string(ret_spec->policy, "mode", false, err, &rc);
    if (rc)
        goto out;
    if (!ptc__is_sandbox_mode(ret_spec->mode)) {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec policy mode must be read-only, workspace-write or danger-full-access");
        goto out;
    }
    const char *root_dir = required_string(ret_spec->policy, "workspaceRoot", false, err, &rc);
    if (rc)
        goto out;
    if (root_dir[0] != '/') {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec policy workspaceRoot must be an absolute path");
        goto out;
    }
    if (!json_object_object_get_ex(root, "bindings", &ret_spec->bindings) ||
        !json_object_is_type(ret_spec->bindings, json_type_array)) {
        rc = ptc__fail(err, DSH_E_REQUEST_INVALID, "spec bindings must be an array");
        goto out;
    }
    rc = check_bindings(ret_spec->bindings, err);
    /* Optional images registered when the run frame is sent (run_frames.c). */
    if (rc == 0 && json_object_object_get_ex(root, "images", &v))
        rc = ptc__images_check_shape(v, err);
out:
    if (rc)
        ptc__spec_destroy(ret_spec);
    return rc;
}

void ptc__spec_destroy(struct ptc_spec *spec)
{
    json_object_put(spec->root);
    memset(spec, 0, sizeof *spec);
}

bool ptc__spec_allows(const struct ptc_spec *spec, const char *global, const char *name)
{
    size_t n = json_object_array_length(spec->bindings);
    for (size_t i = 0; i < n; i++) {
        json_object *ns = json_object_array_get_idx(spec->bindings, i), *g, *fns;
        json_object_object_get_ex(ns, "global", &g);
        if (strcmp(json_object_get_string(g), global) != 0)
            continue;
        json_object_object_get_ex(ns, "functions", &fns);
        for (size_t k = 0; k < json_object_array_length(fns); k++)
            if (strcmp(json_object_get_string(json_object_array_get_idx(fns, k)), name) == 0)
                return true;
    }
    return false;
}

const char *ptc__spec_policy_string(const struct ptc_spec *spec, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(spec->policy, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : "";
}

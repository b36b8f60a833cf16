/* Resolved-spec parsing: run() fills no defaults and refuses what would fail later (an unknown
 * sandbox mode, a relative workspace root, a cwd that is no directory of the execution world). */
#include "spec.h"

#include <criterion/criterion.h>
#include <string.h>

static struct dsh_error err;

/* Parses json; err holds the diagnostic. */
static int parse(const char *json)
{
    struct ptc_spec spec;
    memset(&err, 0, sizeof err);
    int rc = ptc__spec_parse(json, strlen(json), &spec, &err);
    if (rc == 0)
        ptc__spec_destroy(&spec);
    return rc;
}

#define SPEC(policy) \
    "{\"program\":\"1\",\"cwd\":\"/tmp\",\"stateOwner\":null,\"timeoutMs\":1000,\"discardCompletion\":false," \
    "\"bindings\":[],\"policy\":" policy "}"

Test(spec, a_complete_spec_parses)
{
    cr_expect_eq(parse(SPEC("{\"mode\":\"read-only\",\"workspaceRoot\":\"/tmp\"}")), 0, "%s", err.message);
}

Test(spec, missing_fields_are_not_defaulted)
{
    const char *no_timeout = "{\"program\":\"1\",\"cwd\":\"/tmp\",\"stateOwner\":null,\"discardCompletion\":false,\"bindings\":[],"
                             "\"policy\":{\"mode\":\"read-only\",\"workspaceRoot\":\"/tmp\"}}";
    cr_expect_eq(parse(no_timeout), DSH_E_REQUEST_INVALID);
    cr_expect(strstr(err.message, "timeoutMs is missing"), "%s", err.message);
}

Test(spec, the_policy_must_name_a_known_mode_and_an_absolute_workspace)
{
    cr_expect_eq(parse(SPEC("{\"mode\":\"bogus\",\"workspaceRoot\":\"/tmp\"}")), DSH_E_REQUEST_INVALID);
    cr_expect(strstr(err.message, "mode must be read-only, workspace-write or danger-full-access"), "%s", err.message);
    cr_expect_eq(parse(SPEC("{\"mode\":\"read-only\"}")), DSH_E_REQUEST_INVALID);
    cr_expect(strstr(err.message, "workspaceRoot"), "%s", err.message);
    cr_expect_eq(parse(SPEC("{\"mode\":\"read-only\",\"workspaceRoot\":\"tmp\"}")), DSH_E_REQUEST_INVALID);
    cr_expect(strstr(err.message, "workspaceRoot must be an absolute path"), "%s", err.message);
}

/* Test double of the fs service: the execution world sees only /tmp. */
static int map_tmp_only(void *ctx, const char *host_path, char *buf, size_t buflen)
{
    (void)ctx;
    if (strncmp(host_path, "/tmp", 4) != 0)
        return DSH_E_NOT_MAPPED;
    return snprintf(buf, buflen, "%s", host_path);
}

Test(spec, cwd_must_be_a_directory_the_world_can_see)
{
    struct dsh_fs_service fs = {.struct_size = sizeof fs, .map_host_path = map_tmp_only};
    struct ptc_host host;
    memset(&host, 0, sizeof host);
    host.services.fs = &fs;
    cr_expect_eq(ptc__check_cwd(&host, "/tmp", &err), 0);
    cr_expect_eq(ptc__check_cwd(&host, "/nonexistent", &err), DSH_E_REQUEST_INVALID);
    cr_expect(strstr(err.message, "not an existing directory"), "%s", err.message);
    cr_expect_eq(ptc__check_cwd(&host, "/etc/passwd", &err), DSH_E_REQUEST_INVALID);
    cr_expect_eq(ptc__check_cwd(&host, "/usr", &err), DSH_E_NOT_MAPPED);
    cr_expect(strstr(err.message, "not visible in the execution world"), "%s", err.message);
}

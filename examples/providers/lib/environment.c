/* The environment of a spawned range: a fixed allow-list plus the request's additions. Nothing
 * is ever taken from the host's environ, so its credentials, NODE_OPTIONS, NODE_PATH, LD_* and
 * the like cannot reach a program. Additions are the caller's explicit choice (a provider may set
 * its own NODE_OPTIONS for the heap limit), except variables that act on the dynamic loader: the
 * environment also reaches the supervisor and the launcher, which run before any confinement. */
#include "environment.h"
#include "services_config.h"
#include "dsh_strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SAFE_PATH "/usr/local/bin:/usr/bin:/bin"

static bool forbidden(const char *entry, size_t name_len)
{
    return (name_len >= 3 && strncmp(entry, "LD_", 3) == 0) ||
           (name_len == strlen("GLIBC_TUNABLES") && strncmp(entry, "GLIBC_TUNABLES", name_len) == 0);
}

/* Index of the entry with the same name, or -1. */
static long find(const struct dsh_strv *sv, const char *entry, size_t name_len)
{
    for (size_t i = 0; i < sv->n; i++)
        if (strncmp(sv->v[i], entry, name_len) == 0 && sv->v[i][name_len] == '=')
            return (long)i;
    return -1;
}

int dshx__build_env(const char *const *additions, const char *cwd, char ***ret_env,
                    struct dsh_error *ret_error)
{
    struct dsh_strv sv = {0};
    int rc = dsh_strv_push(&sv, "PATH=" SAFE_PATH);
    if (rc == 0)
        rc = dsh_strv_pushf(&sv, "HOME=%s", cwd ? cwd : "/");
    if (rc == 0)
        rc = dsh_strv_push(&sv, "LANG=C.UTF-8");
    for (size_t i = 0; rc == 0 && additions && additions[i]; i++) {
        const char *e = additions[i];
        const char *eq = strchr(e, '=');
        if (!eq || eq == e) {
            dsh_strv_clear(&sv);
            return dshx__fail(ret_error, DSH_E_REQUEST_INVALID,
                              "environment entry is not NAME=VALUE: %.64s", e);
        }
        size_t name_len = (size_t)(eq - e);
        if (forbidden(e, name_len)) {
            dsh_strv_clear(&sv);
            return dshx__fail(ret_error, DSH_E_REQUEST_INVALID,
                              "environment entry %.*s would act on the unconfined launcher",
                              (int)name_len, e);
        }
        long at = find(&sv, e, name_len);
        if (at >= 0) {
            char *copy = strdup(e);
            if (!copy) {
                rc = -ENOMEM;
                break;
            }
            free(sv.v[at]);
            sv.v[at] = copy;
        } else {
            rc = dsh_strv_push(&sv, e);
        }
    }
    if (rc < 0) {
        dsh_strv_clear(&sv);
        return dshx__fail(ret_error, rc, "out of memory building the environment");
    }
    *ret_env = dsh_strv_finish(&sv);
    return *ret_env ? 0 : dshx__fail(ret_error, -ENOMEM, "out of memory");
}

/* Shared run plumbing: resolve() + run(), and the cwd each run resolved to. */
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_request.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The last few runs' cwds: enough for the runs a host has in flight at once in tests. */
#define CWD_RING 64
static struct {
    dsh_run_id run;
    char *cwd;
} cwd_ring[CWD_RING];
static size_t cwd_next;

static void remember_cwd(dsh_run_id run, const char *spec, size_t len)
{
    json_object *root = dsh_json_parse_strict_value(spec, len);
    const char *cwd = dsh_json_get_text(root, "cwd");
    if (cwd) {
        free(cwd_ring[cwd_next].cwd);
        cwd_ring[cwd_next].run = run;
        cwd_ring[cwd_next].cwd = strdup(cwd);
        cwd_next = (cwd_next + 1) % CWD_RING;
    }
    json_object_put(root);
}

const char *dshh__run_cwd(dsh_run_id run)
{
    for (size_t i = 0; i < CWD_RING; i++)
        if (cwd_ring[i].cwd && cwd_ring[i].run == run)
            return cwd_ring[i].cwd;
    return NULL;
}

int dshh__start_run(struct dshh_host *host, const char *request_json, size_t request_len,
                    const struct dsh_run_callbacks *callbacks, dsh_run_id *ret_run,
                    struct dsh_error *err)
{
    char *spec = NULL;
    size_t spec_len = 0;
    err->code = 0;
    err->message[0] = '\0';
    int rc = host->provider->resolve(host->instance, request_json, request_len, &spec, &spec_len,
                                     err);
    if (rc < 0)
        return err->code = rc;
    rc = host->provider->run(host->instance, spec, spec_len, callbacks, ret_run, err);
    if (rc == 0)
        remember_cwd(*ret_run, spec, spec_len);
    host->provider->free_text(spec);
    if (rc < 0)
        err->code = rc;
    return rc;
}


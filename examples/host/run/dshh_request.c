/* Shared run plumbing: resolve() + run(), and the cwd each run resolved to. */
#include "dsh_json_strict.h"
#include "dshh_request.h"

#include <errno.h>
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

/* The spec's "cwd" string, found by scanning its text: a tree of the whole spec (the policy, the
 * bindings, the program) for one member cost every run more than the member. */
static char *spec_cwd(const char *spec, size_t len)
{
    static const char *const names[] = {"cwd", NULL};
    struct dsh_json_slice cwd[1];
    if (!dsh_json_is_value(spec, len, DSH_JSON_MAX_DEPTH, NULL) || !dsh_json_members(spec, len, names, cwd) ||
        !cwd[0].text || cwd[0].text[0] != '"')
        return NULL;
    char *text = malloc(cwd[0].len);
    size_t text_len;
    if (!text || !dsh_json_decode_string(cwd[0].text + 1, cwd[0].text + cwd[0].len, text, &text_len) ||
        memchr(text, '\0', text_len)) { /* text only: a cut name would be another directory */
        free(text);
        return NULL;
    }
    text[text_len] = '\0';
    return text;
}

static void remember_cwd(dsh_run_id run, const char *spec, size_t len)
{
    char *cwd = spec_cwd(spec, len);
    if (cwd) {
        free(cwd_ring[cwd_next].cwd);
        cwd_ring[cwd_next].run = run;
        cwd_ring[cwd_next].cwd = cwd;
        cwd_next = (cwd_next + 1) % CWD_RING;
    }
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


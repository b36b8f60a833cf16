/* tools.registerImage({path, attachmentId?}): registers a file the program wrote (relative to
 * the run's cwd) through provider->registerImage and answers with its attachmentId, so the
 * program can display it: inspect(Image.get(await tools.registerImage({path: "chart.png"}))).
 * The provider queues the child's image-register frame before this reply, so Image.get sees it. */
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_demo_images.h"

#include "dshh_request.h"

#include <json-c/json.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void dshh__demo_register_image(struct dshh_host *host, dsh_run_id run, uint64_t call, json_object *arg)
{
    static unsigned long long next_id = 1;
    /* Text only (no NUL inside): a truncated name could name another file or id. */
    const char *p = dsh_json_get_text(arg, "path"), *attachment_id = dsh_json_get_text(arg, "attachmentId");
    if (!p || !*p || (dsh_json_has(arg, "attachmentId") && (!attachment_id || !*attachment_id))) {
        const char *m = "tools.registerImage expects {path: string, attachmentId?: string}";
        host->provider->reply(host->instance, run, call, false, m, strlen(m));
        return;
    }
    char generated[64], full[2 * PATH_MAX + 2];
    if (!attachment_id) {
        snprintf(generated, sizeof generated, "img-%llu", next_id++);
        attachment_id = generated;
    }
    const char *cwd = dshh__run_cwd(run);
    int n = p[0] != '/' && cwd ? snprintf(full, sizeof full, "%s/%s", cwd, p) : snprintf(full, sizeof full, "%s", p);
    if (n < 0 || (size_t)n >= sizeof full) { /* a cut name would be another file */
        const char *m = "tools.registerImage: the path is too long";
        host->provider->reply(host->instance, run, call, false, m, strlen(m));
        return;
    }
    struct dsh_error err = {0};
    /* A provider built before the appendix has no registerImage slot. */
    int rc = host->provider->struct_size < offsetof(struct dsh_provider, registerImage) + sizeof(void *)
                 ? DSH_E_UNSUPPORTED
                 : host->provider->registerImage(host->instance, run, attachment_id, full, NULL, NULL, &err);
    if (rc < 0) {
        char m[sizeof err.message + 64];
        snprintf(m, sizeof m, "tools.registerImage: %s", *err.message ? err.message : dsh_strerror(rc));
        host->provider->reply(host->instance, run, call, false, m, strlen(m));
        return;
    }
    json_object *reply = json_object_new_string(attachment_id);
    const char *text = json_object_to_json_string_ext(reply, DSH_JSON_PRINT_FLAGS);
    host->provider->reply(host->instance, run, call, true, text, strlen(text));
    json_object_put(reply);
}

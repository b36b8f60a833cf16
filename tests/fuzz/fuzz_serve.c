/* `dsh headless --serve` request handling (examples/host/serve/dshh_serve.c) with any client
 * input: the real host (profile, Linux services, demo tools) over the provider double
 * fake_provider.c, opened for each input as a dsh process opens it, and one dshh__cmd_serve with
 * the input as its stdin. Properties: serve
 * ends with exit 0 once stdin ends (every run it started ended), and every line it writes is one
 * strict JSON object with a string "type"; a reply value reaches the provider as one JSON value
 * (the double aborts otherwise). */
#include <string.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_serve.h"
#include "fuzz_host.h"
#include "fuzz_target.h"

#ifndef FAKE_PROVIDER_PATH
#error "meson passes FAKE_PROVIDER_PATH (the built fake_provider.c)"
#endif

static struct dshh_profile profile;

static int serve(struct dshh_host *host, void *arg)
{
    (void)arg;
    return dshh__cmd_serve(host, &profile);
}

static void check_event(void *arg, const char *line, size_t len)
{
    (void)arg;
    json_object *event = dsh_json_parse_strict_value(line, len);
    fuzz_check(json_object_is_type(event, json_type_object) && dsh_json_get_text(event, "type"), "event %.*s",
               (int)len, line);
    json_object_put(event);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!profile.nrows)
        fuzz_host_profile(&profile, FAKE_PROVIDER_PATH, "");
    if (size > 65536)
        return 0;
    char *out;
    size_t len;
    struct fuzz_client client = {.input = data, .size = size};
    int rc = fuzz_host_command(&profile, serve, NULL, &client, &out, &len);
    fuzz_check(rc == 0, "serve exited %d", rc);
    fuzz_host_lines(out, len, check_event, NULL);
    if (getenv("DSH_FUZZ_VERBOSE"))
        fprintf(stderr, "%.*s", (int)len, out);
    free(out);
    return 0;
}

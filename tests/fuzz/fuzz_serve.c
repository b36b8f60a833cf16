/* `dsh headless --serve` request handling (examples/host/serve/dshh_serve.c) with any client
 * input: the real host (profile, Linux services, demo tools) over the provider double
 * fake_provider.c, opened for each input as a dsh process opens it, and one dshh__cmd_serve with
 * the input as its stdin. Properties: serve
 * ends with exit 0 once stdin ends (every run it started ended), and every line it writes is one
 * strict JSON object with a string "type"; a reply value reaches the provider as one JSON value
 * (the double aborts otherwise). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_host.h"
#include "dshh_profile.h"
#include "dshh_serve.h"
#include "fuzz_target.h"

#ifndef FAKE_PROVIDER_PATH
#error "meson passes FAKE_PROVIDER_PATH (the built fake_provider.c)"
#endif

static struct dshh_profile profile;
static struct dshh_host host;

/* The profile, once: its workspace directory stays until the process ends. */
static void compose_profile(void)
{
    static char dir[] = "/tmp/dsh-fuzz-serve-XXXXXX";
    fuzz_check(mkdtemp(dir) != NULL, "mkdtemp");
    char path[64];
    snprintf(path, sizeof path, "%s/profile.yaml", dir);
    FILE *f = fopen(path, "w");
    fuzz_check(f != NULL, "profile");
    fprintf(f,
            "- {id: fs, name: dsh-fs-local, config: {}}\n"
            "- {id: subprocess, name: dsh-subprocess-local, config: {}}\n"
            "- {id: sandbox, name: dsh-sandbox-linux, config: {}}\n"
            "- {id: sandbox-policy, name: dsh-sandbox-policy, config: {mode: read-only, workspaceRoot: '%s'}}\n"
            "- {id: demo-tools, name: dsh-demo-tools, config: {}}\n"
            "- {id: ptc-runtime, name: '@deepseek-ai/dsh-ptc-runtime-node', path: '%s', config: {}}\n",
            dir, FAKE_PROVIDER_PATH);
    fclose(f);
    fuzz_check(dshh__profile_compose(&profile, path, NULL, 0, stderr) == 0, "the profile composes");
    unlink(path);
    /* Kept mapped when each host dlcloses it: libFuzzer keeps the coverage counters of every
     * module it saw load, and clears them between inputs. */
    fuzz_check(dlopen(FAKE_PROVIDER_PATH, RTLD_NOW | RTLD_NODELETE) != NULL, "%s", dlerror());
}

/* Runs serve with data as stdin; returns its exit status and what it wrote (malloc'd). */
static int serve(const uint8_t *data, size_t size, char **ret_out, size_t *ret_len)
{
    int in[2], out[2];
    fuzz_check(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0, "pipes");
    (void)fcntl(in[1], F_SETPIPE_SZ, 1 << 20);
    fuzz_check(write(in[1], data, size) == (ssize_t)size, "the input fits the pipe");
    close(in[1]);
    int saved_in = dup(STDIN_FILENO), saved_out = dup(STDOUT_FILENO);
    fflush(stdout);
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    close(in[0]);
    close(out[1]);
    int rc = dshh__cmd_serve(&host);
    dup2(saved_in, STDIN_FILENO);
    dup2(saved_out, STDOUT_FILENO);
    close(saved_in);
    close(saved_out);
    FILE *collected = open_memstream(ret_out, ret_len);
    char buf[65536];
    ssize_t n;
    while ((n = read(out[0], buf, sizeof buf)) > 0)
        fwrite(buf, 1, (size_t)n, collected);
    fclose(collected);
    close(out[0]);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!profile.nrows)
        compose_profile();
    if (size > 65536)
        return 0;
    /* A host per input, as each dsh process has one: serve leaves its loop stopped. */
    fuzz_check(dshh__host_open(&host, &profile, false, NULL, 0) == 0, "the host opens");
    char *out;
    size_t len;
    int rc = serve(data, size, &out, &len);
    dshh__host_close(&host);
    fuzz_check(rc == 0, "serve exited %d", rc);
    for (char *line = out, *end = out + len; line < end;) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        fuzz_check(nl != NULL, "a line without its newline");
        json_object *event = dsh_json_parse_strict_value(line, (size_t)(nl - line));
        fuzz_check(json_object_is_type(event, json_type_object) && dsh_json_get_text(event, "type"), "event %.*s",
                   (int)(nl - line), line);
        json_object_put(event);
        line = nl + 1;
    }
    if (getenv("DSH_FUZZ_VERBOSE"))
        fprintf(stderr, "%.*s", (int)len, out);
    free(out);
    return 0;
}

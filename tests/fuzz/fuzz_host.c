/* The real host of the host-command targets and a client thread on a command's stdin and stdout
 * (fuzz_host.h). */
#include "fuzz_host.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_target.h"

static char dir[] = "/tmp/dsh-fuzz-host-XXXXXX";

static void remove_workspace(void)
{
    rmdir(dir);
}

const char *fuzz_host_profile(struct dshh_profile *profile, const char *provider_path, const char *extra_rows)
{
    fuzz_check(mkdtemp(dir) != NULL, "mkdtemp");
    atexit(remove_workspace);
    char path[64];
    snprintf(path, sizeof path, "%s/profile.yaml", dir);
    FILE *f = fopen(path, "w");
    fuzz_check(f != NULL, "profile");
    fprintf(f,
            "- {id: fs, name: dsh-fs-local, config: {}}\n"
            "- {id: subprocess, name: dsh-subprocess-local, config: {}}\n"
            "- {id: sandbox, name: dsh-sandbox-linux, config: {}}\n"
            "- {id: sandbox-policy, name: dsh-sandbox-policy, config: {mode: read-only, workspaceRoot: '%s'}}\n"
            "- {id: demo-tools, name: dsh-demo-tools, config: {mcp: true}}\n"
            "- {id: ptc-runtime, name: '@deepseek-ai/dsh-ptc-runtime-node', path: '%s', config: {}}\n%s",
            dir, provider_path, extra_rows);
    fclose(f);
    fuzz_check(dshh__profile_compose(profile, path, NULL, 0, stderr) == 0, "the profile composes");
    unlink(path);
    fuzz_check(dlopen(provider_path, RTLD_NOW | RTLD_NODELETE) != NULL, "%s", dlerror());
    /* A command that ends early must not end the target when the client writes on. */
    signal(SIGPIPE, SIG_IGN);
    return dir;
}

struct conversation {
    const struct fuzz_client *client;
    int to_fd, from_fd;
    char *out; /* what the command wrote */
    size_t len, cap;
};

static void close_input(struct conversation *c)
{
    if (c->to_fd >= 0)
        close(c->to_fd);
    c->to_fd = -1;
}

static void *client_main(void *arg)
{
    struct conversation *c = arg;
    for (size_t done = 0; done < c->client->size;) {
        ssize_t n = write(c->to_fd, c->client->input + done, c->client->size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the command stopped reading: EPIPE */
        done += (size_t)n;
    }
    if (!c->client->on_line)
        close_input(c);
    size_t scanned = 0;
    for (;;) {
        if (c->cap - c->len < 65536) {
            c->cap = c->cap * 2 + 65536;
            c->out = realloc(c->out, c->cap);
            fuzz_check(c->out != NULL, "out of memory");
        }
        ssize_t n = read(c->from_fd, c->out + c->len, c->cap - c->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        c->len += (size_t)n;
        char *nl;
        while ((nl = memchr(c->out + scanned, '\n', c->len - scanned))) {
            size_t start = scanned;
            scanned = (size_t)(nl - c->out) + 1;
            if (c->to_fd >= 0 && c->client->on_line(c->client->arg, c->out + start, scanned - 1 - start))
                close_input(c);
        }
    }
    close_input(c);
    return NULL;
}

int fuzz_host_command(const struct dshh_profile *profile, int (*command)(struct dshh_host *host, void *arg),
                      void *arg, const struct fuzz_client *client, char **ret_out, size_t *ret_len)
{
    int in[2], out[2];
    fuzz_check(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0, "pipes");
    struct conversation c = {.client = client, .to_fd = in[1], .from_fd = out[0]};
    fflush(stdout);
    int saved_in = dup(STDIN_FILENO), saved_out = dup(STDOUT_FILENO);
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    close(in[0]);
    close(out[1]);
    pthread_t thread;
    fuzz_check(pthread_create(&thread, NULL, client_main, &c) == 0, "the client thread");
    struct dshh_host host;
    fuzz_check(dshh__host_open(&host, profile, false, NULL, 0) == 0, "the host opens");
    int rc = command(&host, arg);
    dshh__host_close(&host);
    /* The command's stdin and stdout end here: the client sees EOF and returns. */
    dup2(saved_in, STDIN_FILENO);
    dup2(saved_out, STDOUT_FILENO);
    close(saved_in);
    close(saved_out);
    pthread_join(thread, NULL);
    close(c.from_fd);
    *ret_out = c.out;
    *ret_len = c.len;
    return rc;
}

void fuzz_host_lines(const char *text, size_t len, void (*each)(void *arg, const char *line, size_t len), void *arg)
{
    for (const char *line = text, *end = text + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        fuzz_check(nl != NULL, "a line without its newline: %.*s", (int)(end - line), line);
        each(arg, line, (size_t)(nl - line));
        line = nl + 1;
    }
}

/* The real host of the host-command targets (fuzz_serve.c, fuzz_mcp_client.c, fuzz_mcp_server.c)
 * and a client on a command's stdin and stdout (fuzz_host.c). */
#ifndef DSH_FUZZ_HOST_H
#define DSH_FUZZ_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dshh_host.h"
#include "dshh_profile.h"

/* Composes *profile once from the Linux services, a read-only policy over a new workspace, the
 * demo tools, the provider double at provider_path, and extra_rows (YAML list items, may be
 * empty); keeps the double mapped (libFuzzer keeps the counters of every module it saw load).
 * Returns the workspace directory, which stays until the process ends. */
const char *fuzz_host_profile(struct dshh_profile *profile, const char *provider_path, const char *extra_rows);

/* What the client does: it writes input to the command's stdin, reads every line the command
 * writes to stdout, and closes the command's stdin when on_line returns true for a line (at once
 * after the input when on_line is NULL), or at the latest when stdout ends. */
struct fuzz_client {
    const uint8_t *input;
    size_t size;
    bool (*on_line)(void *arg, const char *line, size_t len);
    void *arg;
};

/* Runs command(host, arg) with the client on its stdin and stdout; the host is opened over profile
 * for this one command (as each dsh process opens one) and closed after. Returns the command's
 * exit status and what it wrote (malloc'd, *ret_len bytes). */
int fuzz_host_command(const struct dshh_profile *profile, int (*command)(struct dshh_host *host, void *arg),
                      void *arg, const struct fuzz_client *client, char **ret_out, size_t *ret_len);

/* Calls each(arg, line, len) for every newline-terminated line of text; a last line without its
 * newline is a broken property. */
void fuzz_host_lines(const char *text, size_t len, void (*each)(void *arg, const char *line, size_t len), void *arg);

#endif

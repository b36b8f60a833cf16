/* `dsh headless --program FILE | -e CODE`: one run for a person (dshh_program_cmd.c). */
#ifndef DSHH_PROGRAM_CMD_H
#define DSHH_PROGRAM_CMD_H

#include "dshh_host.h"

#include <stdbool.h>
#include <stddef.h>

/* --timeout-ms: absent (the provider row's default), null (no deadline) or milliseconds. */
enum dshh_timeout { DSHH_TIMEOUT_DEFAULT, DSHH_TIMEOUT_NONE, DSHH_TIMEOUT_MS };

/* The run options of the command line (main.c fills them; this command only reads them). */
struct dshh_program_options {
    const char *program_file; /* --program FILE ("-": stdin) */
    const char *program_code; /* -e CODE */
    bool json;
    const char *cwd;
    const char *state_owner;
    const char *session_id;
    enum dshh_timeout timeout;
    long long timeout_ms; /* with DSHH_TIMEOUT_MS: > 0 */
    bool discard_completion;
    const char *const *images; /* --image ID=PATH, in order */
    size_t nimages;
};

int dshh__cmd_program(struct dshh_host *host, const struct dshh_program_options *opts);

#endif

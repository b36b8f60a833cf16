/* dsh's workflow side (prefix dshh__): `dsh workflow run` and the reference subagent provider. */
#ifndef DSHH_WORKFLOW_H
#define DSHH_WORKFLOW_H

#include "dshh.h"
#include "dsh_workflow.h"

#define DSHH_NAME_WORKFLOW "dsh-workflow-ptc"
#define DSHH_SUBAGENT_NESTED "nested"
#define DSHH_SUBAGENT_COMMAND "command"
#define DSHH_PROMPT_PLACEHOLDER "{prompt}"

/* ---- subagent.c: provider "nested" -- each child runs its prompt as a TypeScript program, a
 * second run of the same runtime instance (confined like every PTC run) ---------------------- */
struct dshh_subagents;
/* trace: when non-NULL, one JSON line per child lifecycle step ({"subagent":"started"|"cancel"|
 * "published"|"failed"|"disposed","child":N}) for tests and --json. */
int dshh__subagents_new(struct dshh_host *host, FILE *trace, struct dshh_subagents **ret);
/* Provider "command": each child runs argv (NULL-terminated, copied; elements equal to
 * "{prompt}" become the prompt, one argument each) via execFile inside a nested run of the same
 * runtime; stdout is its text, a non-zero exit fails it. */
int dshh__subagents_new_command(struct dshh_host *host, FILE *trace, const char *const *argv,
                                struct dshh_subagents **ret);
const struct dsh_subagent_provider *dshh__subagents_vtable(struct dshh_subagents *s);
void dshh__subagents_free(struct dshh_subagents *s);

/* ---- workflow_cmd.c ------------------------------------------------------------------------- */
/* `dsh workflow run SCRIPT.js [options]`; argv[0] is "workflow". */
int dshh__cmd_workflow(int argc, char **argv);

#endif

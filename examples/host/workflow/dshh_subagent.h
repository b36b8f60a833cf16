/* The reference subagent providers of `dsh workflow` (dshh_subagent.c): "nested" runs each
 * child's prompt as a TypeScript program, a second run of the same runtime instance (confined
 * like every PTC run); "command" runs a command template inside such a run. */
#ifndef DSHH_SUBAGENT_H
#define DSHH_SUBAGENT_H

#include "dsh_workflow.h"
#include "dshh_host.h"

#include <stdio.h>

#define DSHH_SUBAGENT_NESTED "nested"
#define DSHH_SUBAGENT_COMMAND "command"
#define DSHH_PROMPT_PLACEHOLDER "{prompt}"

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

#endif

/* `dsh workflow run` and `dsh workflow ralph` (dshh_workflow_cmd.c). */
#ifndef DSHH_WORKFLOW_CMD_H
#define DSHH_WORKFLOW_CMD_H

/* argv[0] is "workflow"; parses its own options. Returns the exit status. */
int dshh__cmd_workflow(int argc, char **argv);

#endif

/* Names dsh gives its own rows and namespaces, shared by every layer that recognizes them. */
#ifndef DSHH_NAMES_H
#define DSHH_NAMES_H

/* Provider names of the rows dsh implements itself (everything else is a provider to dlopen). */
#define DSHH_NAME_FS "dsh-fs-local"
#define DSHH_NAME_SUBPROCESS "dsh-subprocess-local"
#define DSHH_NAME_SANDBOX "dsh-sandbox-linux"
#define DSHH_NAME_POLICY "dsh-sandbox-policy"
#define DSHH_NAME_DEMO "dsh-demo-tools"
#define DSHH_NAME_MCP_BINDINGS "dsh-mcp-bindings"
#define DSHH_NAME_NATIVE "dsh-native-bindings"
#define DSHH_NAME_WORKFLOW "dsh-workflow-ptc"
/* The namespace of the demo tools (run/dshh_demo_tools.c); native rows may not take it. */
#define DSHH_DEMO_GLOBAL "tools"

#endif

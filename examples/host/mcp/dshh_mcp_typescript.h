/* MCP names as identifiers, JSON Schemas as TypeScript declarations (dshh_mcp_typescript.c). */
#ifndef DSHH_MCP_TYPESCRIPT_H
#define DSHH_MCP_TYPESCRIPT_H

#include "dsh_binding_names.h"

#include <json-c/json.h>
#include <stdio.h>

/* The error class of every downstream namespace (a failed tool call rejects with it). */
#define DSHH_MCP_ERROR_CLASS "McpToolError"

/* The identifier programs use for an MCP name (a namespace: DSH_BINDING_GLOBAL, a tool:
 * DSH_BINDING_FUNCTION): every byte outside [A-Za-z0-9_] becomes '_', a leading digit (or an
 * empty name) gets a '_' before it, a __dunder__ name loses trailing '_' until it is none, a name the runtime
 * refuses (common/dsh_binding_names.h) or a namespace that would shadow a global programs rely
 * on gets a '_' after it, and a name already in taken (NULL-terminated) gets "_2", "_3", ...
 * (transfer full). */
char *dshh__mcp_identifier(const char *name, enum dsh_binding_name_role role, const char *const *taken);
struct dshh_mcp_schema_types;

/* The TypeScript types of one JSON Schema (examples/host/README.md, "Schemas as TypeScript"):
 * every target of a "#..." $ref in it becomes a named type, prefix followed by the target's
 * pointer (root_name for "#"), none a member name of the object taken (each name is added to
 * it). schema is borrowed and must outlive the result. NULL on ENOMEM. */
struct dshh_mcp_schema_types *dshh__mcp_schema_types_new(json_object *schema, const char *prefix,
                                                         const char *root_name, json_object *taken);
void dshh__mcp_schema_types_free(struct dshh_mcp_schema_types *t);
/* `type NAME = ...;` of each named type (with its description as a doc comment), at
 * indent 0; nothing when the schema has no $ref. */
void dshh__mcp_schema_aliases(const struct dshh_mcp_schema_types *t, FILE *out);
/* The type of the schema itself (where it is a named type: that name), at indent. */
void dshh__mcp_schema_root_type(const struct dshh_mcp_schema_types *t, FILE *out, int indent);
/* A JSDoc comment of text (may be NULL) at indent. */
void dshh__mcp_doc_comment(const char *text, FILE *out, int indent);

#endif

/* A YAML node subtree -> YAML text (emit.c). */
#ifndef DSH_EMIT_H
#define DSH_EMIT_H

#include <stddef.h>
#include <yaml.h>

/* Re-emits node's subtree as a standalone YAML document (transfer full,
 * NUL-terminated). Scalar styles are kept, so "5" stays a string. */
int dsh_yaml_node_emit(yaml_document_t *doc, yaml_node_t *node, char **ret_text, size_t *ret_len);
/* Emits node's subtree as events on an emitter the caller opened (inside its own document): scalar
 * styles kept, tags and collection styles left to the emitter. 0, or -1 when the emitter fails. */
int dsh_yaml_node_emit_events(yaml_emitter_t *emitter, yaml_document_t *doc, yaml_node_t *node);

#endif

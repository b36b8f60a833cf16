/* A YAML node subtree -> YAML text (emit.c). */
#ifndef DSH_EMIT_H
#define DSH_EMIT_H

#include <stddef.h>
#include <yaml.h>

/* Re-emits node's subtree as a standalone YAML document (transfer full,
 * NUL-terminated). Scalar styles are kept, so "5" stays a string. */
int dsh_yaml_node_emit(yaml_document_t *doc, yaml_node_t *node, char **ret_text, size_t *ret_len);

#endif

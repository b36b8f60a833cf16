/* Strict scalar typing and node helpers of config/ (scalar.c); not installed. */
#ifndef DSH_SCALAR_H
#define DSH_SCALAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "dsh_yaml_node.h"

/* What a scalar node means under the strict YAML 1.2 core subset we accept. */
enum dsh_scalar_kind {
    DSH_SCALAR_NULL,   /* plain "", "~", "null", "Null", "NULL" */
    DSH_SCALAR_BOOL,   /* plain "true" / "false" only */
    DSH_SCALAR_INT,    /* plain [-+]?(0|[1-9][0-9]*) */
    DSH_SCALAR_NUMBER, /* any other number: 1.5, 1e3, .inf, 0x10, 0o7, 010 */
    DSH_SCALAR_STRING, /* quoted, block, or any other plain text */
    DSH_SCALAR_TAGGED, /* an explicit tag we do not interpret (e.g. !custom) */
};

enum dsh_scalar_kind dsh_scalar_kind(const yaml_node_t *node);
/* DSH_SCALAR_INT text to int64: -ERANGE when it does not fit. */
int dsh_scalar_int(const yaml_node_t *node, int64_t *ret_value);
/* libyaml keeps scalar values NUL-terminated. */
static inline const char *dsh_node_text(const yaml_node_t *node)
{
    return (const char *)node->data.scalar.value;
}
/* "null", "a mapping", "string \"abc\"", "integer 5"... into buf. */
const char *dsh_node_describe(const yaml_node_t *node, char *buf, size_t size);
bool dsh_node_is_null(const yaml_node_t *node);

#endif

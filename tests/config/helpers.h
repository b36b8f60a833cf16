/* Shared assertions of the config tests. */
#ifndef TESTS_CONFIG_HELPERS_H
#define TESTS_CONFIG_HELPERS_H

#include <errno.h>
#include <stddef.h>

#include "dsh_config.h"

#define PTC PTC_PROVIDER_NAME

/* dsh_config_validate_text on a NUL-terminated text. */
int validate(const char *provider, const char *yaml, struct dsh_diagnostics *ret_diags);

/* Asserts yaml is rejected with exactly one diagnostic on path at line:column
 * whose text names the field and position and whose problem contains needle. */
void expect_error(const char *provider, const char *yaml, const char *path, size_t line,
                  size_t column, const char *needle);

/* Asserts that one of several diagnostics matches (configs with many errors). */
void expect_diag(const struct dsh_diagnostics *diags, const char *path, size_t line,
                 size_t column, const char *needle);

void expect_valid(const char *provider, const char *yaml);

/* Loads yaml (asserting success) into doc; returns its root (NULL if empty). */
yaml_node_t *load_doc(const char *yaml, yaml_document_t *doc);

#endif

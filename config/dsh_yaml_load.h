/* YAML text -> one libyaml document (yaml_load.c). */
#ifndef DSH_YAML_LOAD_H
#define DSH_YAML_LOAD_H

#include <stddef.h>
#include <yaml.h>

#include "dsh_diagnostics.h"

/* Loads exactly one YAML document. Empty text gives a document without a root
 * node (= an empty config). On -EINVAL ret_diags names the syntax error. Every
 * ret_diags below is initialized by the call (may be NULL); release it with
 * dsh_diagnostics_release. *ret_doc must be yaml_document_delete()d on success
 * and is zeroed (deleting it is harmless) on failure. */
int dsh_yaml_load(const char *text, size_t len, yaml_document_t *ret_doc,
                  struct dsh_diagnostics *ret_diags);

#endif

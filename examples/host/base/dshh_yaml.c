/* YAML helpers of the host: one file loaded strictly, scalar text, empty configs. */
#include "dshh_yaml.h"

#include "dsh_config.h"
#include "dshh_text_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Profiles, patches and `config validate FILE` load through config/'s loader, the one the
 * provider's row config goes through: exactly one document, YAML core tags only. */
int dshh__yaml_load_file(const char *path, yaml_document_t *doc, FILE *err)
{
    memset(doc, 0, sizeof *doc);
    size_t len = 0;
    char *text = dshh__read_text_file(path, &len);
    if (!text) {
        fprintf(err, "dsh: %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct dsh_diagnostics diags;
    int rc = dsh_yaml_load(text, len, doc, &diags);
    free(text);
    for (size_t i = 0; rc == -EINVAL && i < diags.count; i++)
        fprintf(err, "%s:%zu:%zu: YAML error: %s\n", path, diags.items[i].line, diags.items[i].column,
                diags.items[i].problem);
    if (rc < 0 && rc != -EINVAL)
        fprintf(err, "dsh: %s: %s\n", path, strerror(-rc));
    dsh_diagnostics_release(&diags);
    return rc < 0 ? -1 : 0;
}

const char *dshh__yaml_scalar(const yaml_node_t *node)
{
    return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

bool dshh__yaml_is_null(const yaml_node_t *node)
{
    if (!node || node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *v = (const char *)node->data.scalar.value;
    return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
}

bool dshh__yaml_is_empty(const yaml_node_t *node)
{
    if (!node || dshh__yaml_is_null(node))
        return true;
    return node->type == YAML_MAPPING_NODE &&
           node->data.mapping.pairs.top == node->data.mapping.pairs.start;
}

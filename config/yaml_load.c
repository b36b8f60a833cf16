/* YAML text -> one libyaml document. See dsh_yaml_load.h. */
#include <errno.h>
#include <string.h>

#include "dsh_yaml_load.h"

static int parser_error(yaml_parser_t *parser, struct dsh_diagnostics *diags)
{
    if (parser->error == YAML_MEMORY_ERROR)
        return -ENOMEM;
    const char *problem = parser->problem ? parser->problem : "invalid YAML";
    yaml_mark_t mark = parser->problem_mark;
    int err;
    if (parser->context)
        err = dsh_diagnostics_add(diags, "yaml", mark.line + 1, mark.column + 1, "%s %s",
                                  problem, parser->context);
    else
        err = dsh_diagnostics_add(diags, "yaml", mark.line + 1, mark.column + 1, "%s",
                                  problem);
    return err < 0 ? err : -EINVAL;
}

int dsh_yaml_load(const char *text, size_t len, yaml_document_t *ret_doc,
                  struct dsh_diagnostics *ret_diags)
{
    yaml_parser_t parser;
    yaml_document_t extra;
    int err = 0;

    dsh_diagnostics_init(ret_diags);
    memset(ret_doc, 0, sizeof(*ret_doc));
    if (!text && len > 0)
        return -EINVAL;
    if (!yaml_parser_initialize(&parser))
        return -ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), len);
    if (!yaml_parser_load(&parser, ret_doc)) {
        err = parser_error(&parser, ret_diags);
        memset(ret_doc, 0, sizeof(*ret_doc));
        goto out;
    }
    if (!yaml_document_get_root_node(ret_doc))
        goto out;

    /* A second document would be silently ignored by the consumer: refuse it. */
    if (!yaml_parser_load(&parser, &extra)) {
        err = parser_error(&parser, ret_diags);
    } else {
        yaml_node_t *root = yaml_document_get_root_node(&extra);
        if (root) {
            err = dsh_diagnostics_add(ret_diags, "yaml", root->start_mark.line + 1,
                                      root->start_mark.column + 1,
                                      "expected a single YAML document");
            err = err < 0 ? err : -EINVAL;
        }
        yaml_document_delete(&extra);
    }
    if (err < 0) {
        yaml_document_delete(ret_doc);
        memset(ret_doc, 0, sizeof(*ret_doc));
    }
out:
    yaml_parser_delete(&parser);
    return err;
}

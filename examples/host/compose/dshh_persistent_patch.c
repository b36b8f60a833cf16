/* `dsh config persistent-patch [--format F]`: prints the profile patch that retains execution
 * state (resolvePersistentExecution). F defaults to the effective program format of the composed
 * ptc-runtime row. A patch replaces a row's whole config, so the row's other fields are copied
 * and the three returned settings are written together. */
#include "dshh_persistent_patch.h"

#include "dshh_usage.h"
#include "dshh_yaml.h"
#include "dsh_config.h"
#include "dsh_persistent.h"

#include <stdlib.h>
#include <string.h>

#define ROW_ID "ptc-runtime"

static int scalar(yaml_emitter_t *e, const char *text, bool plain)
{
    yaml_event_t ev;
    return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), plain, !plain,
                                        plain ? YAML_PLAIN_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE) &&
                   yaml_emitter_emit(e, &ev)
               ? 0
               : -1;
}

static bool replaced(const char *key)
{
    return !strcmp(key, "executionMode") || !strcmp(key, "scriptPersistence") || !strcmp(key, "replScoped");
}

static int emit_patch(const struct dshh_row *row, const struct dsh_persistent_execution *p, FILE *out)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&e))
        return -1;
    yaml_emitter_set_output_file(&e, out);
    yaml_emitter_set_unicode(&e, 1);
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&e, &ev) &&
             yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(&e, &ev) &&
             yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) &&
             yaml_emitter_emit(&e, &ev) &&
             yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) &&
             yaml_emitter_emit(&e, &ev) && !scalar(&e, "id", true) && !scalar(&e, ROW_ID, true) &&
             !scalar(&e, "config", true) &&
             yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) &&
             yaml_emitter_emit(&e, &ev) && !scalar(&e, "executionMode", true) &&
             !scalar(&e, p->execution_mode, true) && !scalar(&e, "scriptPersistence", true) &&
             !scalar(&e, p->script_persistence ? "true" : "false", true) && !scalar(&e, "replScoped", true) &&
             !scalar(&e, p->repl_scoped ? "true" : "false", true);
    if (ok && row->config) {
        yaml_document_t *doc = (yaml_document_t *)&row->config_layer->doc;
        for (yaml_node_pair_t *pair = row->config->data.mapping.pairs.start;
             ok && pair < row->config->data.mapping.pairs.top; pair++) {
            yaml_node_t *key = yaml_document_get_node(doc, pair->key);
            const char *name = dshh__yaml_scalar(key);
            if (name && replaced(name))
                continue;
            ok = !dsh_yaml_node_emit_events(&e, doc, key) &&
                 !dsh_yaml_node_emit_events(&e, doc, yaml_document_get_node(doc, pair->value));
        }
    }
    ok = ok && yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) &&
         yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) &&
         yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) &&
         yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev) &&
         yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) && yaml_emitter_flush(&e);
    yaml_emitter_delete(&e);
    return ok ? 0 : -1;
}

/* The effective format of the row's validated config (its defaults filled by the catalog). */
static const char *row_format(const struct dshh_row *row, FILE *err)
{
    char *text = NULL;
    size_t len = 0;
    if (row->config &&
        dsh_yaml_node_emit((yaml_document_t *)&row->config_layer->doc, row->config, &text, &len) < 0) {
        fprintf(err, "dsh: cannot read the " ROW_ID " config\n");
        return NULL;
    }
    struct ptc_config cfg;
    struct dsh_diagnostics diags;
    int rc = ptc_config_parse(text, len, &cfg, &diags);
    free(text);
    if (rc < 0) {
        char *joined = NULL;
        dsh_diagnostics_join(&diags, &joined);
        fprintf(err, "dsh: the " ROW_ID " config is invalid: %s\n", joined ? joined : "");
        free(joined);
        dsh_diagnostics_release(&diags);
        return NULL;
    }
    dsh_diagnostics_release(&diags);
    const char *format = dsh_effective_program_format(ptc_execution_mode_name(cfg.execution_mode), cfg.repl_scoped);
    ptc_config_destroy(&cfg);
    return format;
}

int dshh__cmd_persistent_patch(const struct dshh_profile *profile, const char *format, FILE *out, FILE *err)
{
    const struct dshh_row *row = dshh__profile_find(profile, ROW_ID);
    if (!row) {
        fprintf(err, "dsh: the composition has no " ROW_ID " row\n");
        return DSHH_EXIT_FAILURE;
    }
    if (!format && !(format = row_format(row, err)))
        return DSHH_EXIT_FAILURE;
    struct dsh_persistent_execution p;
    if (dsh_resolve_persistent_execution(format, &p) < 0) {
        fprintf(err, "dsh: unknown program format '%s' (async-function, vm-script, scoped-repl, repl)\n", format);
        return DSHH_EXIT_USAGE;
    }
    return emit_patch(row, &p, out) ? DSHH_EXIT_FAILURE : DSHH_EXIT_OK;
}

/* `dsh --dump-config`: the composed rows as a YAML list, each preceded by a comment naming the
 * layer it came from. The output is itself a valid profile. */
#include "dshh_dump.h"

#include "dsh_config.h"
#include "dsh_text_buffer.h"

#include <stdlib.h>
#include <string.h>

static int emit_scalar(yaml_emitter_t *e, const char *value, bool plain_ok)
{
    yaml_event_t ev;
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)value, (int)strlen(value),
                                      plain_ok, 1, YAML_ANY_SCALAR_STYLE))
        return -1;
    return yaml_emitter_emit(e, &ev) ? 0 : -1;
}

/* One row as a one-item block sequence; concatenated, the items form one list. */
static int emit_row(const struct dshh_row *row, struct dsh_text_buffer *out)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&e))
        return -1;
    yaml_emitter_set_output(&e, dsh_text_buffer_write, out);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    int rc = -1;
    if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) || !yaml_emitter_emit(&e, &ev))
        goto out;
    if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
        !yaml_emitter_emit(&e, &ev))
        goto out;
    if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
        !yaml_emitter_emit(&e, &ev))
        goto out;
    if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
        !yaml_emitter_emit(&e, &ev))
        goto out;
    if (emit_scalar(&e, "id", true) || emit_scalar(&e, row->id, true) ||
        emit_scalar(&e, "name", true) || emit_scalar(&e, row->name, true))
        goto out;
    if (row->path && (emit_scalar(&e, "path", true) || emit_scalar(&e, row->path, true)))
        goto out;
    if (emit_scalar(&e, "disabled", true) || emit_scalar(&e, row->disabled ? "true" : "false", true))
        goto out;
    if (emit_scalar(&e, "config", true))
        goto out;
    if (row->config) {
        if (dsh_yaml_node_emit_events(&e, (yaml_document_t *)&row->config_layer->doc, row->config))
            goto out;
    } else {
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_FLOW_MAPPING_STYLE) ||
            !yaml_emitter_emit(&e, &ev) || !yaml_mapping_end_event_initialize(&ev) ||
            !yaml_emitter_emit(&e, &ev))
            goto out;
    }
    if (!yaml_mapping_end_event_initialize(&ev) || !yaml_emitter_emit(&e, &ev) ||
        !yaml_sequence_end_event_initialize(&ev) || !yaml_emitter_emit(&e, &ev) ||
        !yaml_document_end_event_initialize(&ev, 1) || !yaml_emitter_emit(&e, &ev) ||
        !yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(&e, &ev))
        goto out;
    rc = 0;
out:
    yaml_emitter_delete(&e);
    return rc;
}

int dshh__dump_profile(const struct dshh_profile *profile, FILE *out)
{
    fprintf(out, "# composed from:");
    for (size_t i = 0; i < profile->nlayers; i++)
        fprintf(out, " %s", profile->layers[i]->path);
    fputc('\n', out);
    for (size_t i = 0; i < profile->nrows; i++) {
        const struct dshh_row *row = &profile->rows[i];
        struct dsh_text_buffer b = {0};
        if (emit_row(row, &b)) {
            free(b.data);
            return -1;
        }
        fprintf(out, "# layer: %s", row->layer->path);
        if (row->origin != row->layer)
            fprintf(out, " (row defined in %s)", row->origin->path);
        fputc('\n', out);
        fputs(b.data ? b.data : "", out);
        free(b.data);
    }
    return fflush(out) == 0 ? 0 : -1;
}

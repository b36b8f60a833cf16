/* Re-emits a node subtree as its own YAML document: the host hands a composed
 * row's config to the plugin's load() as text. Shared (aliased) nodes stay
 * shared; cycles are refused. Or as events into a document the caller emits
 * (the host's --dump-config and persistent-patch). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_emit.h"
#include "dsh_text_buffer.h"

#define MAX_DEPTH 256 /* the emitter recurses too; configs are shallow */

struct copy {
    yaml_document_t *src;
    yaml_document_t *dst;
    int *map; /* src index - 1 -> dst index; 0 = not copied, -1 = being copied */
};

static int copy_node(struct copy *c, int src_index, int depth, int *ret_index)
{
    yaml_node_t *node = yaml_document_get_node(c->src, src_index);
    if (!node)
        return -EINVAL;
    int *slot = &c->map[src_index - 1];
    if (*slot == -1)
        return -ELOOP;
    if (*slot > 0) {
        *ret_index = *slot;
        return 0;
    }
    if (depth > MAX_DEPTH)
        return -E2BIG;

    int idx = 0, err = 0;
    switch (node->type) {
    case YAML_SCALAR_NODE:
        idx = yaml_document_add_scalar(c->dst, node->tag, node->data.scalar.value,
                                       (int)node->data.scalar.length,
                                       node->data.scalar.style);
        *slot = idx;
        break;
    case YAML_SEQUENCE_NODE:
        idx = yaml_document_add_sequence(c->dst, node->tag, node->data.sequence.style);
        if (!idx)
            break;
        *slot = -1;
        for (yaml_node_item_t *it = node->data.sequence.items.start;
             err == 0 && it < node->data.sequence.items.top; it++) {
            int child;
            err = copy_node(c, *it, depth + 1, &child);
            if (err == 0 && !yaml_document_append_sequence_item(c->dst, idx, child))
                err = -ENOMEM;
        }
        *slot = idx;
        break;
    case YAML_MAPPING_NODE:
        idx = yaml_document_add_mapping(c->dst, node->tag, node->data.mapping.style);
        if (!idx)
            break;
        *slot = -1;
        for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
             err == 0 && p < node->data.mapping.pairs.top; p++) {
            int k, v;
            err = copy_node(c, p->key, depth + 1, &k);
            if (err == 0)
                err = copy_node(c, p->value, depth + 1, &v);
            if (err == 0 && !yaml_document_append_mapping_pair(c->dst, idx, k, v))
                err = -ENOMEM;
        }
        *slot = idx;
        break;
    default:
        return -EINVAL;
    }
    if (err < 0)
        return err;
    if (!idx)
        return -ENOMEM;
    *ret_index = idx;
    return 0;
}

int dsh_yaml_node_emit(yaml_document_t *doc, yaml_node_t *node, char **ret_text, size_t *ret_len)
{
    if (!doc || !node || node < doc->nodes.start || node >= doc->nodes.top)
        return -EINVAL;

    yaml_document_t out;
    if (!yaml_document_initialize(&out, NULL, NULL, NULL, 1, 1))
        return -ENOMEM;
    struct copy c = {.src = doc, .dst = &out};
    c.map = calloc((size_t)(doc->nodes.top - doc->nodes.start), sizeof(*c.map));
    int root = 0;
    int err = c.map ? copy_node(&c, (int)(node - doc->nodes.start) + 1, 0, &root) : -ENOMEM;
    free(c.map);
    if (err < 0) {
        yaml_document_delete(&out);
        return err;
    }

    yaml_emitter_t emitter;
    struct dsh_text_buffer b = {0};
    if (!yaml_emitter_initialize(&emitter)) {
        yaml_document_delete(&out);
        return -ENOMEM;
    }
    yaml_emitter_set_output(&emitter, dsh_text_buffer_write, &b);
    yaml_emitter_set_unicode(&emitter, 1);
    yaml_emitter_set_width(&emitter, -1); /* no folding: keep values on one line */
    bool ok = yaml_emitter_open(&emitter) && yaml_emitter_dump(&emitter, &out) &&
              yaml_emitter_close(&emitter) && yaml_emitter_flush(&emitter);
    bool nomem = emitter.error == YAML_MEMORY_ERROR || emitter.error == YAML_WRITER_ERROR;
    /* dump() consumes the document and leaves it empty; deleting it again is
     * harmless and covers the paths where dump() never ran. */
    yaml_document_delete(&out);
    yaml_emitter_delete(&emitter);
    if (!ok || !b.data) {
        free(b.data);
        return !ok && !nomem ? -EINVAL : -ENOMEM;
    }
    *ret_text = b.data;
    *ret_len = b.len;
    return 0;
}

int dsh_yaml_node_emit_events(yaml_emitter_t *emitter, yaml_document_t *doc, yaml_node_t *node)
{
    yaml_event_t ev;
    switch (node->type) {
    case YAML_SCALAR_NODE:
        /* Keep the source style so that quoted "true" stays a string. */
        if (!yaml_scalar_event_initialize(&ev, NULL, NULL, node->data.scalar.value,
                                          (int)node->data.scalar.length,
                                          node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE,
                                          1, node->data.scalar.style))
            return -1;
        return yaml_emitter_emit(emitter, &ev) ? 0 : -1;
    case YAML_SEQUENCE_NODE:
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(emitter, &ev))
            return -1;
        for (yaml_node_item_t *it = node->data.sequence.items.start;
             it < node->data.sequence.items.top; it++)
            if (dsh_yaml_node_emit_events(emitter, doc, yaml_document_get_node(doc, *it)))
                return -1;
        if (!yaml_sequence_end_event_initialize(&ev) || !yaml_emitter_emit(emitter, &ev))
            return -1;
        return 0;
    case YAML_MAPPING_NODE:
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_MAPPING_STYLE) ||
            !yaml_emitter_emit(emitter, &ev))
            return -1;
        for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
             p < node->data.mapping.pairs.top; p++)
            if (dsh_yaml_node_emit_events(emitter, doc, yaml_document_get_node(doc, p->key)) ||
                dsh_yaml_node_emit_events(emitter, doc, yaml_document_get_node(doc, p->value)))
                return -1;
        if (!yaml_mapping_end_event_initialize(&ev) || !yaml_emitter_emit(emitter, &ev))
            return -1;
        return 0;
    default:
        return -1;
    }
}

/* YAML text -> one libyaml document. See dsh_yaml_load.h.
 *
 * The document is built from libyaml's parser events rather than by yaml_parser_load, because
 * only the events tell an explicit tag from the default one: `!!str 5000` and `5000` become
 * the same node in a loaded document. Here an explicitly tagged `!!str` plain scalar is stored
 * with the double-quoted style, which is what it means (a string), and every tag outside the
 * YAML core schema is refused. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_yaml_load.h"

#define CORE_TAG_PREFIX "tag:yaml.org,2002:"

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

static int fail_at(struct dsh_diagnostics *diags, yaml_mark_t mark, const char *fmt,
                   const char *arg, const char *arg2)
{
    int err = dsh_diagnostics_add(diags, "yaml", mark.line + 1, mark.column + 1, fmt, arg, arg2);
    return err < 0 ? err : -EINVAL;
}

/* Checks an explicit tag against the node kind: the YAML core schema's tags only. */
static int check_tag(const char *tag, yaml_event_type_t kind, yaml_mark_t mark,
                     struct dsh_diagnostics *diags)
{
    static const char *const scalar_tags[] = {YAML_STR_TAG, YAML_INT_TAG, YAML_FLOAT_TAG,
                                              YAML_BOOL_TAG, YAML_NULL_TAG};
    if (!tag)
        return 0;
    bool scalar_tag = false;
    for (size_t i = 0; i < sizeof scalar_tags / sizeof scalar_tags[0]; i++)
        scalar_tag = scalar_tag || strcmp(tag, scalar_tags[i]) == 0;
    bool seq_tag = strcmp(tag, YAML_SEQ_TAG) == 0, map_tag = strcmp(tag, YAML_MAP_TAG) == 0;
    if (kind == YAML_SCALAR_EVENT ? scalar_tag : kind == YAML_SEQUENCE_START_EVENT ? seq_tag : map_tag)
        return 0;
    bool core = strncmp(tag, CORE_TAG_PREFIX, strlen(CORE_TAG_PREFIX)) == 0;
    char shown[160];
    snprintf(shown, sizeof shown, "%s%.140s", core ? "!!" : "", core ? tag + strlen(CORE_TAG_PREFIX) : tag);
    if (!scalar_tag && !seq_tag && !map_tag)
        return fail_at(diags, mark,
                       "unsupported tag %s (only the YAML core tags !!str, !!int, !!float, !!bool, "
                       "!!null, !!seq and !!map)%s",
                       shown, "");
    return fail_at(diags, mark, "tag %s does not fit %s", shown,
                   kind == YAML_SCALAR_EVENT ? "a scalar" : kind == YAML_SEQUENCE_START_EVENT ? "a sequence" : "a mapping");
}

/* The document under construction: open collections and the mapping keys awaiting a value. */
struct builder {
    yaml_document_t *doc;
    struct open_node {
        int id;
        int pending_key; /* mappings: the key node waiting for its value, or 0 */
    } *stack;
    size_t depth, cap;
    struct anchor {
        char *name;
        int id;
    } *anchors;
    size_t nanchors;
};

static void builder_free(struct builder *b)
{
    for (size_t i = 0; i < b->nanchors; i++)
        free(b->anchors[i].name);
    free(b->anchors);
    free(b->stack);
}

/* Attaches node `id` to the innermost open collection (the first node is the root). */
static int attach(struct builder *b, int id)
{
    if (b->depth == 0)
        return 0;
    struct open_node *parent = &b->stack[b->depth - 1];
    yaml_node_t *node = yaml_document_get_node(b->doc, parent->id);
    if (node->type == YAML_SEQUENCE_NODE)
        return yaml_document_append_sequence_item(b->doc, parent->id, id) ? 0 : -ENOMEM;
    if (!parent->pending_key) {
        parent->pending_key = id;
        return 0;
    }
    int key = parent->pending_key;
    parent->pending_key = 0;
    return yaml_document_append_mapping_pair(b->doc, parent->id, key, id) ? 0 : -ENOMEM;
}

static int remember_anchor(struct builder *b, const yaml_char_t *anchor, int id)
{
    if (!anchor)
        return 0;
    struct anchor *anchors = realloc(b->anchors, (b->nanchors + 1) * sizeof *anchors);
    if (!anchors)
        return -ENOMEM;
    b->anchors = anchors;
    char *name = strdup((const char *)anchor);
    if (!name)
        return -ENOMEM;
    /* A later anchor of the same name hides the earlier one (YAML's rule). */
    b->anchors[b->nanchors++] = (struct anchor){name, id};
    return 0;
}

static int push(struct builder *b, int id)
{
    if (b->depth == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        struct open_node *stack = realloc(b->stack, cap * sizeof *stack);
        if (!stack)
            return -ENOMEM;
        b->stack = stack;
        b->cap = cap;
    }
    b->stack[b->depth++] = (struct open_node){id, 0};
    return 0;
}

static void set_marks(yaml_document_t *doc, int id, const yaml_event_t *event)
{
    yaml_node_t *node = yaml_document_get_node(doc, id);
    node->start_mark = event->start_mark;
    node->end_mark = event->end_mark;
}

/* One node event of the document. */
static int add_event(struct builder *b, yaml_event_t *event, struct dsh_diagnostics *diags)
{
    yaml_document_t *doc = b->doc;
    int id = 0, err;
    switch (event->type) {
    case YAML_ALIAS_EVENT:
        for (size_t i = b->nanchors; i-- > 0 && !id;)
            if (strcmp(b->anchors[i].name, (const char *)event->data.alias.anchor) == 0)
                id = b->anchors[i].id;
        if (!id)
            return fail_at(diags, event->start_mark, "unknown alias *%s%s",
                           (const char *)event->data.alias.anchor, "");
        return attach(b, id);
    case YAML_SCALAR_EVENT: {
        const char *tag = (const char *)event->data.scalar.tag;
        if ((err = check_tag(tag, event->type, event->start_mark, diags)) < 0)
            return err;
        yaml_scalar_style_t style = event->data.scalar.style;
        /* `!!str 5000` is the string "5000": stored as it would be quoted. */
        if (tag && strcmp(tag, YAML_STR_TAG) == 0 && style == YAML_PLAIN_SCALAR_STYLE)
            style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        if (event->data.scalar.length > INT32_MAX)
            return -E2BIG;
        id = yaml_document_add_scalar(doc, (yaml_char_t *)(tag ? tag : YAML_DEFAULT_SCALAR_TAG),
                                      event->data.scalar.value, (int)event->data.scalar.length,
                                      style);
        if (!id)
            return -ENOMEM;
        set_marks(doc, id, event);
        if ((err = remember_anchor(b, event->data.scalar.anchor, id)) < 0)
            return err;
        return attach(b, id);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool seq = event->type == YAML_SEQUENCE_START_EVENT;
        const char *tag = (const char *)(seq ? event->data.sequence_start.tag : event->data.mapping_start.tag);
        if ((err = check_tag(tag, event->type, event->start_mark, diags)) < 0)
            return err;
        const yaml_char_t *anchor = seq ? event->data.sequence_start.anchor : event->data.mapping_start.anchor;
        id = seq ? yaml_document_add_sequence(doc, (yaml_char_t *)(tag ? tag : YAML_DEFAULT_SEQUENCE_TAG),
                                              event->data.sequence_start.style)
                 : yaml_document_add_mapping(doc, (yaml_char_t *)(tag ? tag : YAML_DEFAULT_MAPPING_TAG),
                                             event->data.mapping_start.style);
        if (!id)
            return -ENOMEM;
        set_marks(doc, id, event);
        if ((err = remember_anchor(b, anchor, id)) < 0 || (err = attach(b, id)) < 0)
            return err;
        return push(b, id);
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        yaml_document_get_node(doc, b->stack[b->depth - 1].id)->end_mark = event->end_mark;
        b->depth--;
        return 0;
    default:
        return 0;
    }
}

/* Parses the next document of the stream into ret_doc (initialized here). Sets *ret_end when
 * the stream has no further document. */
static int load_document(yaml_parser_t *parser, yaml_document_t *ret_doc, bool *ret_end,
                         struct dsh_diagnostics *diags)
{
    yaml_event_t event;
    struct builder b = {.doc = ret_doc};
    int err = 0;
    bool started = false;
    *ret_end = false;
    memset(ret_doc, 0, sizeof *ret_doc);
    for (;;) {
        if (!yaml_parser_parse(parser, &event)) {
            err = parser_error(parser, diags);
            break;
        }
        yaml_event_type_t type = event.type;
        if (type == YAML_STREAM_END_EVENT) {
            *ret_end = true;
        } else if (type == YAML_DOCUMENT_START_EVENT) {
            if (!yaml_document_initialize(ret_doc, NULL, NULL, NULL, event.data.document_start.implicit, 1))
                err = -ENOMEM;
            started = err == 0;
        } else if (type != YAML_STREAM_START_EVENT && type != YAML_DOCUMENT_END_EVENT) {
            err = add_event(&b, &event, diags);
        }
        yaml_event_delete(&event);
        if (err < 0 || type == YAML_STREAM_END_EVENT || type == YAML_DOCUMENT_END_EVENT)
            break;
    }
    builder_free(&b);
    if (err < 0 || !started) {
        if (started)
            yaml_document_delete(ret_doc);
        memset(ret_doc, 0, sizeof *ret_doc);
    }
    return err;
}

int dsh_yaml_load(const char *text, size_t len, yaml_document_t *ret_doc,
                  struct dsh_diagnostics *ret_diags)
{
    yaml_parser_t parser;
    yaml_document_t extra;
    bool end = false;
    int err = 0;

    dsh_diagnostics_init(ret_diags);
    memset(ret_doc, 0, sizeof(*ret_doc));
    if (!text && len > 0)
        return -EINVAL;
    if (!yaml_parser_initialize(&parser))
        return -ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), len);
    if ((err = load_document(&parser, ret_doc, &end, ret_diags)) < 0 || end ||
        !yaml_document_get_root_node(ret_doc))
        goto out;

    /* A second document would be silently ignored by the consumer: refuse it. */
    if ((err = load_document(&parser, &extra, &end, ret_diags)) == 0 && !end) {
        yaml_node_t *root = yaml_document_get_root_node(&extra);
        if (root)
            err = fail_at(ret_diags, root->start_mark, "expected a single YAML document%s%s", "", "");
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

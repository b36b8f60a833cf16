/* --dump-config (dshh_dump.c). */
#ifndef DSHH_DUMP_H
#define DSHH_DUMP_H

#include "dshh_profile.h"

int dshh__dump_profile(const struct dshh_profile *profile, FILE *out);
/* Emits node (and its subtree) of doc as events on emitter. */
int dshh__yaml_emit_node(yaml_emitter_t *emitter, yaml_document_t *doc, yaml_node_t *node);

#endif

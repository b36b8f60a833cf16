/* Mapping lookups of scalar.c, for users outside config/ too (the reference host). */
#ifndef DSH_YAML_NODE_H
#define DSH_YAML_NODE_H

#include <yaml.h>

/* First value of key in a mapping node; NULL when absent or map is no mapping. A key matches by
 * its whole text, so "id\0x" is not "id". */
yaml_node_t *dsh_mapping_get(yaml_document_t *doc, yaml_node_t *map, const char *key);
/* The same, but a key matches by its text up to its first NUL, as strcmp() sees it ("id\0x" is
 * "id"): the reference host reads its profile rows so, and its row-key checks agree. */
yaml_node_t *dsh_mapping_get_cstr(yaml_document_t *doc, yaml_node_t *map, const char *key);

#endif

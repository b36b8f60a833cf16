/* YAML documents of profiles and rows (dshh_yaml.c): loading one file, reading nodes. Mapping
 * lookups are config/'s dsh_mapping_get_cstr (dsh_config.h). */
#ifndef DSHH_YAML_H
#define DSHH_YAML_H

#include <stdbool.h>
#include <stdio.h>
#include <yaml.h>

/* Loads one YAML file as a single document (an empty file gives a document without root). */
int dshh__yaml_load_file(const char *path, yaml_document_t *doc, FILE *err);
/* Scalar text of node, or NULL when node is not a scalar. */
const char *dshh__yaml_scalar(const yaml_node_t *node);
/* A plain scalar null, Null, NULL, ~ or "". */
bool dshh__yaml_is_null(const yaml_node_t *node);
/* A null scalar (or no node) or an empty mapping: an empty config. */
bool dshh__yaml_is_empty(const yaml_node_t *node);

#endif

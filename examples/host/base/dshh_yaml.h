/* YAML documents of profiles and rows (dshh_yaml.c): loading one file, reading nodes. */
#ifndef DSHH_YAML_H
#define DSHH_YAML_H

#include <stdbool.h>
#include <stdio.h>
#include <yaml.h>

/* Loads one YAML file as a single document (an empty file gives a document without root). */
int dshh__yaml_load_file(const char *path, yaml_document_t *doc, FILE *err);
/* Mapping lookup: the value node of key, or NULL. */
yaml_node_t *dshh__yaml_get(yaml_document_t *doc, yaml_node_t *map, const char *key);
/* Scalar text of node, or NULL when node is not a scalar. */
const char *dshh__yaml_scalar(const yaml_node_t *node);
/* A plain scalar null/~/"" or an empty mapping: an empty config. */
bool dshh__yaml_is_empty(const yaml_node_t *node);

#endif

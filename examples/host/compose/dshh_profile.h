/* Composition of a profile with patch layers (dshh_profile.c, the only writer of these structs). */
#ifndef DSHH_PROFILE_H
#define DSHH_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <yaml.h>

struct dshh_layer {
    char *path; /* as given on the command line ("dsh --sandbox": made from an option) */
    yaml_document_t doc;
    bool loaded;
    bool from_option; /* made by dshh__profile_set_policy: its positions are not the user's */
};

struct dshh_row {
    char *id;
    char *name;
    char *path; /* optional shared object of a provider row; NULL = default */
    bool disabled;
    const struct dshh_layer *origin; /* layer that defined or inserted the row */
    const struct dshh_layer *layer;  /* last layer that changed the row */
    const struct dshh_layer *config_layer; /* owner of config (NULL when config is empty) */
    yaml_node_t *config;                   /* mapping node in config_layer->doc, or NULL */
};

struct dshh_profile {
    struct dshh_layer **layers;
    size_t nlayers;
    struct dshh_row *rows;
    size_t nrows;
};

/* Composes base + patches in order. On error prints "FILE:line:col: message" to err and returns
 * -1 (the profile is still safe to free). */
int dshh__profile_compose(struct dshh_profile *profile, const char *base,
                          const char *const *patches, size_t npatches, FILE *err);
void dshh__profile_free(struct dshh_profile *profile);
/* id, name, config, disabled or path: the keys a profile row or row patch may have. */
/* The checks composition makes of one row or row patch map of layer (its keys: known, each
 * once; name, disabled, path, config: of their kinds), reported as composition reports them
 * (FILE:L:C: problem). 0 when they pass, -1 otherwise. */
int dshh__row_check(FILE *err, const struct dshh_layer *layer, yaml_node_t *map);
const struct dshh_row *dshh__profile_find(const struct dshh_profile *profile, const char *id);
/* --sandbox MODE / --workspace DIR: a layer named "dsh OPTION" that sets key of the enabled
 * dsh-sandbox-policy row's config to value, keeping its other keys (the row's validation then
 * judges the value). 0, or -1 with a message on err. */
int dshh__profile_set_policy(struct dshh_profile *profile, const char *option, const char *key,
                             const char *value, FILE *err);
/* The same for any enabled row named row_name, value a string (quoted) or a plain scalar (a
 * number, a boolean). 0; 1 when there is no such row (nothing said); -1 with a message on err. */
int dshh__profile_set_field(struct dshh_profile *profile, const char *option, const char *row_name,
                            const char *key, const char *value, bool string, FILE *err);
/* The enabled row named row_name, or NULL. */
const struct dshh_row *dshh__profile_enabled_row(const struct dshh_profile *profile, const char *row_name);
/* Field key of the enabled row named row_name into *slot (a bool when is_bool, else an
 * int64_t); the catalog's default when the row or the field is absent. False (slot untouched)
 * when the catalog has no such row or field. */
bool dshh__profile_value(const struct dshh_profile *profile, const char *row_name, const char *key,
                         bool is_bool, void *slot);

#endif

/* The configuration catalog (catalog.yaml), parsed into read-only data.
 * Its reader is catalog.c; lookups and freeing are dsh_catalog_lookup.h. */
#ifndef DSH_CATALOG_H
#define DSH_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dsh_field_type {
    DSH_FIELD_ENUM,
    DSH_FIELD_BOOLEAN,
    DSH_FIELD_INTEGER,
    DSH_FIELD_STRING,
    DSH_FIELD_PATH, /* absolute path string */
    DSH_FIELD_LIST, /* sequence of item_type */
    DSH_FIELD_OBJECT,
    DSH_FIELD_MAP, /* mapping from names the author chooses to objects of `fields` */
};

enum dsh_default_kind {
    DSH_DEFAULT_NONE,        /* absent = resolved by the consumer (see text) */
    DSH_DEFAULT_VALUE,       /* value */
    DSH_DEFAULT_CONDITIONAL, /* value if sibling if_field == if_equals, else otherwise */
};

/* A typed constant from the catalog. */
struct dsh_catalog_value {
    char *text;     /* scalar text as written ("120000", "false", "per-call"); NULL for lists */
    bool boolean;   /* DSH_FIELD_BOOLEAN */
    int64_t integer; /* DSH_FIELD_INTEGER */
    char **items;   /* DSH_FIELD_LIST: NULL-terminated item texts */
    size_t n_items;
};

struct dsh_catalog_default {
    enum dsh_default_kind kind;
    struct dsh_catalog_value value; /* VALUE, or the `then` of CONDITIONAL */
    char *if_field;                 /* CONDITIONAL */
    char *if_equals;
    struct dsh_catalog_value otherwise;
    char *text; /* defaultText: required for NONE, optional wording otherwise */
};

struct dsh_catalog_requirement {
    char *when;   /* a value text ("true") or "present" */
    char *field;  /* sibling key */
    char *equals; /* required effective text of the sibling */
};

struct dsh_catalog_field {
    char *key;
    enum dsh_field_type type;
    enum dsh_field_type item_type; /* DSH_FIELD_LIST */
    char *meaning;
    char *unit;     /* NULL when none */
    char **values;  /* DSH_FIELD_ENUM (or enum items): NULL-terminated */
    size_t n_values;
    bool has_min, has_max;
    int64_t min, max;
    bool required;
    bool non_empty;
    struct dsh_catalog_default def;
    struct dsh_catalog_requirement *requires;
    size_t n_requires;
    char *at_most; /* sibling integer key, or NULL */
    struct dsh_catalog_field *fields; /* DSH_FIELD_OBJECT (or a list of them), DSH_FIELD_MAP */
    size_t n_fields;
};

struct dsh_catalog_provider {
    char *name;
    char *summary;
    struct dsh_catalog_field *fields;
    size_t n_fields;
};

struct dsh_catalog {
    struct dsh_catalog_provider *providers;
    size_t n_providers;
};

/* The catalog.yaml text embedded at build time (transfer none, NUL-terminated). */
const char *dsh_catalog_embedded_text(size_t *ret_len);

/* Parses and checks the embedded catalog. On failure errbuf (may be NULL) gets
 * "catalog.yaml:L:C: problem". Returns 0, -EINVAL or -ENOMEM. */
int dsh_catalog_open(struct dsh_catalog **ret_catalog, char *errbuf, size_t errlen);
/* Same for any catalog text (tests, tools). */
int dsh_catalog_open_text(const char *text, size_t len, struct dsh_catalog **ret_catalog,
                          char *errbuf, size_t errlen);

#endif

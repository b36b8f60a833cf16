/* dsh-native-bindings rows: functions of a C shared library as one binding namespace each,
 * called through libffi on the host thread. native_bindings.c owns these structs: it loads rows
 * (library, symbols, one prepared call interface per function) and declares the namespaces;
 * dshh_native_call.c (dshh_native_call.h) reads them to answer calls. */
#ifndef DSHH_NATIVE_BINDINGS_H
#define DSHH_NATIVE_BINDINGS_H

#include "dshh_names.h"

#include <ffi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <yaml.h>

/* The types a native function's arguments and return may have: the name a row writes
 * (catalog.yaml lists the same names; tests/host/test_native.c checks both agree) and the libffi
 * type the value crosses as. `string` and `json` are NUL-terminated UTF-8 text. */
#define DSHH_NATIVE_TYPE_TABLE(X)                                                                  \
    X(VOID, "void", ffi_type_void)                                                                 \
    X(BOOL, "bool", ffi_type_uint8) /* C bool is one byte in the SysV ABIs dsh builds for */       \
    X(INT8, "int8", ffi_type_sint8)                                                                \
    X(INT16, "int16", ffi_type_sint16)                                                             \
    X(INT32, "int32", ffi_type_sint32)                                                             \
    X(INT64, "int64", ffi_type_sint64)                                                             \
    X(UINT8, "uint8", ffi_type_uint8)                                                              \
    X(UINT16, "uint16", ffi_type_uint16)                                                           \
    X(UINT32, "uint32", ffi_type_uint32)                                                           \
    X(UINT64, "uint64", ffi_type_uint64)                                                           \
    X(FLOAT, "float", ffi_type_float)                                                              \
    X(DOUBLE, "double", ffi_type_double)                                                           \
    X(STRING, "string", ffi_type_pointer)                                                          \
    X(JSON, "json", ffi_type_pointer)

/* clang-format off */
enum dshh_native_type {
#define DSHH_NATIVE_ENUM(id, name, ffi) DSHH_NATIVE_##id,
    DSHH_NATIVE_TYPE_TABLE(DSHH_NATIVE_ENUM)
#undef DSHH_NATIVE_ENUM
    DSHH_NATIVE_TYPE_COUNT
};
/* clang-format on */

struct dshh_native_arg {
    char *name;
    enum dshh_native_type type;
};

struct dshh_native_fn {
    char *name;   /* binding name */
    char *symbol; /* C symbol */
    enum dshh_native_type returns;
    struct dshh_native_arg *args;
    size_t nargs;
    ffi_type **ffi_args; /* nargs entries, referenced by cif */
    ffi_cif cif;         /* prepared once at load */
    void (*entry)(void);
    void (*free_fn)(void *); /* string/json return: called on the returned pointer, or NULL */
    int64_t max_call_ms;     /* 0: no limit */
};

struct dshh_native_ns {
    char *row_id;
    char *global;
    char *error_class; /* NULL: the provider's default class */
    void *dl;
    struct dshh_native_fn *fns;
    size_t nfns;
};

struct dsh_logger;
struct dshh_native_set {
    const struct dsh_logger *logger; /* borrowed; receives maxCallMs warnings */
    struct dshh_native_ns *ns;
    size_t n;
};

/* The name a row writes for type (transfer none). */
const char *dshh__native_type_name(enum dshh_native_type type);

/* Where a name appears in a native row. */
enum dshh_binding_name_role {
    DSHH_BINDING_NAMESPACE,   /* global */
    DSHH_BINDING_FUNCTION,    /* a key of functions */
    DSHH_BINDING_ERROR_CLASS, /* errorClass */
    DSHH_BINDING_ARGUMENT,    /* args[].name: a property of the argument object */
};

/* Why name cannot be used in role, or NULL when it can. Namespaces, functions and error classes
 * follow the portable binding-name rules the provider applies when it resolves a run's bindings
 * (common/binding_names.c: identifiers, no JavaScript or Python reserved word, runtime global,
 * dunder or error member), and a namespace must not be the host's demo namespace; an argument
 * name must be a portable identifier. Checked at load, so a row is refused before any run.
 * (transfer none) */
const char *dshh__binding_name_problem(enum dshh_binding_name_role role, const char *name);

/* An empty set; logger may be NULL. Returns 0 or -ENOMEM. */
int dshh__native_set_new(const struct dsh_logger *logger, struct dshh_native_set **ret_set);
/* Closes every library. NULL ok. */
void dshh__native_set_free(struct dshh_native_set *set);

/* Loads the (catalog-validated) config of one dsh-native-bindings row into set: checks its names,
 * opens its library, resolves every symbol and prepares every call. Each problem is printed to
 * err as "FILE:L:C: row 'ID' (dsh-native-bindings): FIELD: problem". Returns the number of
 * problems (0: loaded; otherwise nothing of the row is kept), or -ENOMEM. */
int dshh__native_add_row(struct dshh_native_set *set, const char *file, const char *row_id,
                         yaml_document_t *doc, yaml_node_t *config, FILE *err);

struct json_object;
/* Appends {"global", "functions", "errorClass"?} of every namespace to a run's bindings. */
void dshh__native_declare(const struct dshh_native_set *set, struct json_object *bindings);

#endif

/* Loading of dsh-native-bindings rows (native_bindings.h): names, library, symbols, and one
 * prepared libffi call interface per function. catalog.yaml has already checked each row's
 * shape (fields, types, enum values); what is checked here needs the row as a whole or the
 * library itself. */
#include "dshh_native_bindings.h"

#include "dsh_binding_names.h"
#include "dsh_config.h"
#include "dshh_yaml.h"

#include <dlfcn.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *dshh__native_type_name(enum dshh_native_type type)
{
    static const char *const names[] = {
#define DSHH_NATIVE_NAME(id, name, ffi) name,
        DSHH_NATIVE_TYPE_TABLE(DSHH_NATIVE_NAME)
#undef DSHH_NATIVE_NAME
    };
    return type < DSHH_NATIVE_TYPE_COUNT ? names[type] : "?";
}

static ffi_type *ffi_type_of(enum dshh_native_type type)
{
    static ffi_type *const types[] = {
#define DSHH_NATIVE_FFI(id, name, ffi) &ffi,
        DSHH_NATIVE_TYPE_TABLE(DSHH_NATIVE_FFI)
#undef DSHH_NATIVE_FFI
    };
    return types[type];
}

static bool type_from_name(const char *name, enum dshh_native_type *ret)
{
    for (int t = 0; t < DSHH_NATIVE_TYPE_COUNT; t++)
        if (!strcmp(name, dshh__native_type_name(t))) {
            *ret = t;
            return true;
        }
    return false;
}

const char *dshh__binding_name_problem(enum dshh_binding_name_role role, const char *name)
{
    switch (role) {
    case DSHH_BINDING_ARGUMENT:
        return dsh_is_portable_identifier(name) ? NULL
                                            : "is not an identifier (ASCII letters, digits and _, "
                                              "not starting with a digit)";
    case DSHH_BINDING_NAMESPACE:
        if (!strcmp(name, DSHH_DEMO_GLOBAL))
            return "is the host's demo namespace";
        return dsh_binding_name_problem(DSH_BINDING_GLOBAL, name);
    case DSHH_BINDING_FUNCTION: return dsh_binding_name_problem(DSH_BINDING_FUNCTION, name);
    case DSHH_BINDING_ERROR_CLASS: return dsh_binding_name_problem(DSH_BINDING_ERROR_CLASS, name);
    }
    return "has no known role";
}

int dshh__native_set_new(const struct dsh_logger *logger, struct dshh_native_set **ret_set)
{
    *ret_set = calloc(1, sizeof(**ret_set));
    if (!*ret_set)
        return -ENOMEM;
    (*ret_set)->logger = logger;
    return 0;
}

static void ns_clear(struct dshh_native_ns *ns)
{
    for (size_t i = 0; i < ns->nfns; i++) {
        struct dshh_native_fn *fn = &ns->fns[i];
        for (size_t k = 0; k < fn->nargs; k++)
            free(fn->args[k].name);
        free(fn->args);
        free(fn->ffi_args);
        free(fn->name);
        free(fn->symbol);
    }
    free(ns->fns);
    free(ns->row_id);
    free(ns->global);
    free(ns->error_class);
    if (ns->dl)
        dlclose(ns->dl);
    memset(ns, 0, sizeof(*ns));
}

void dshh__native_set_free(struct dshh_native_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        ns_clear(&set->ns[i]);
    free(set->ns);
    free(set);
}

/* ---- one row ----------------------------------------------------------------------------------- */
struct row_reader {
    const char *file, *row_id;
    yaml_document_t *doc;
    FILE *err;
    int problems;
    bool nomem;
};

static void problem(struct row_reader *r, const yaml_node_t *at, const char *field, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

static void problem(struct row_reader *r, const yaml_node_t *at, const char *field, const char *fmt,
                    ...)
{
    if (at)
        fprintf(r->err, "%s:%zu:%zu: ", r->file, at->start_mark.line + 1,
                at->start_mark.column + 1);
    else
        fprintf(r->err, "%s: ", r->file);
    fprintf(r->err, "row '%s' (%s): %s: ", r->row_id, DSHH_NAME_NATIVE, field);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->err, fmt, ap);
    va_end(ap);
    fputc('\n', r->err);
    r->problems++;
}

static char *dup_text(struct row_reader *r, const char *text)
{
    char *s = strdup(text);
    if (!s)
        r->nomem = true;
    return s;
}

static void check_name(struct row_reader *r, const yaml_node_t *at, const char *field,
                       const char *name, enum dshh_binding_name_role role)
{
    const char *why = dshh__binding_name_problem(role, name);
    if (why)
        problem(r, at, field, "\"%s\" %s", name, why);
}

static bool is_text_type(enum dshh_native_type t)
{
    return t == DSHH_NATIVE_STRING || t == DSHH_NATIVE_JSON;
}

static void *resolve_symbol(struct row_reader *r, void *dl, const char *library,
                            const yaml_node_t *at, const char *field, const char *symbol)
{
    dlerror();
    void *p = dlsym(dl, symbol);
    const char *e = dlerror();
    if (e || !p)
        problem(r, at, field, "no symbol \"%s\" in %s", symbol, library);
    return e ? NULL : p;
}

/* False when the arguments cannot be prepared (a problem was reported, or no memory). */
static bool read_args(struct row_reader *r, struct dshh_native_fn *fn, yaml_node_t *seq,
                      const char *path)
{
    bool is_seq = seq && seq->type == YAML_SEQUENCE_NODE;
    if (seq && !is_seq) {
        problem(r, seq, path, "args must be a list");
        return false;
    }
    size_t n = is_seq ? (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start) : 0;
    fn->args = calloc(n ? n : 1, sizeof(*fn->args));
    fn->ffi_args = calloc(n ? n : 1, sizeof(*fn->ffi_args));
    if (!fn->args || !fn->ffi_args) {
        r->nomem = true;
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = yaml_document_get_node(r->doc, seq->data.sequence.items.start[i]);
        yaml_node_t *name = dsh_mapping_get_cstr(r->doc, item, "name");
        yaml_node_t *type = dsh_mapping_get_cstr(r->doc, item, "type");
        char field[600];
        snprintf(field, sizeof field, "%s.args[%zu].name", path, i);
        /* Shapes the catalog guarantees, checked again: this row may not have been validated. */
        if (!dshh__yaml_scalar(name) ||
            !type_from_name(dshh__yaml_scalar(type), &fn->args[i].type)) {
            problem(r, item, field, "an argument needs a name and a type of catalog.yaml");
            return false;
        }
        if (!(fn->args[i].name = dup_text(r, dshh__yaml_scalar(name))))
            return false;
        fn->nargs = i + 1; /* what ns_clear frees */
        check_name(r, name, field, fn->args[i].name, DSHH_BINDING_ARGUMENT);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(fn->args[k].name, fn->args[i].name))
                problem(r, name, field, "argument \"%s\" is declared twice", fn->args[i].name);
        fn->ffi_args[i] = ffi_type_of(fn->args[i].type);
    }
    return true;
}

static void read_function(struct row_reader *r, struct dshh_native_ns *ns, void *dl,
                          const char *library, yaml_node_t *key, yaml_node_t *spec)
{
    struct dshh_native_fn *fn = &ns->fns[ns->nfns++];
    char path[520];
    if (!dshh__yaml_scalar(key)) {
        problem(r, key, "functions", "function names must be scalars");
        return;
    }
    snprintf(path, sizeof path, "functions.%s", dshh__yaml_scalar(key));
    if (!(fn->name = dup_text(r, dshh__yaml_scalar(key))))
        return;
    check_name(r, key, path, fn->name, DSHH_BINDING_FUNCTION);

    yaml_node_t *symbol = dsh_mapping_get_cstr(r->doc, spec, "symbol");
    yaml_node_t *returns = dsh_mapping_get_cstr(r->doc, spec, "returns");
    yaml_node_t *free_node = dsh_mapping_get_cstr(r->doc, spec, "free");
    yaml_node_t *borrowed = dsh_mapping_get_cstr(r->doc, spec, "borrowed");
    yaml_node_t *max_ms = dsh_mapping_get_cstr(r->doc, spec, "maxCallMs");
    /* Shapes the catalog guarantees, checked again: this row may not have been validated. */
    if (!type_from_name(dshh__yaml_scalar(returns), &fn->returns) ||
        (symbol && !dshh__yaml_scalar(symbol)) || (free_node && !dshh__yaml_scalar(free_node)) ||
        (borrowed && !dshh__yaml_scalar(borrowed)) || (max_ms && !dshh__yaml_scalar(max_ms))) {
        problem(r, spec, path, "a function needs a return type of catalog.yaml and scalar fields");
        return;
    }
    if (!(fn->symbol = dup_text(r, symbol ? dshh__yaml_scalar(symbol) : fn->name)))
        return;
    fn->max_call_ms = max_ms ? strtoll(dshh__yaml_scalar(max_ms), NULL, 10) : 0;
    if (!read_args(r, fn, dsh_mapping_get_cstr(r->doc, spec, "args"), path))
        return;

    /* Ownership of a returned text must be stated: freed by the named function, or borrowed. */
    bool is_borrowed = borrowed && !strcmp(dshh__yaml_scalar(borrowed), "true");
    char field[600];
    if (is_text_type(fn->returns) && !free_node && !is_borrowed) {
        snprintf(field, sizeof field, "%s.returns", path);
        problem(r, returns, field, "a %s return needs `free: SYMBOL` or `borrowed: true`",
                dshh__native_type_name(fn->returns));
    } else if (is_text_type(fn->returns) && free_node && is_borrowed) {
        snprintf(field, sizeof field, "%s.borrowed", path);
        problem(r, borrowed, field, "`borrowed: true` and `free` exclude each other");
    } else if (!is_text_type(fn->returns) && (free_node || is_borrowed)) {
        snprintf(field, sizeof field, "%s.%s", path, free_node ? "free" : "borrowed");
        problem(r, free_node ? free_node : borrowed, field,
                "only a string or json return is freed or borrowed (this one is %s)",
                dshh__native_type_name(fn->returns));
    }

    if (dl) {
        snprintf(field, sizeof field, "%s.symbol", path);
        fn->entry = (void (*)(void))resolve_symbol(r, dl, library, symbol ? symbol : key, field,
                                                   fn->symbol);
        if (free_node) {
            snprintf(field, sizeof field, "%s.free", path);
            fn->free_fn = (void (*)(void *))resolve_symbol(r, dl, library, free_node, field,
                                                           dshh__yaml_scalar(free_node));
        }
    }
    ffi_status st = ffi_prep_cif(&fn->cif, FFI_DEFAULT_ABI, (unsigned)fn->nargs,
                                 ffi_type_of(fn->returns), fn->ffi_args);
    if (st != FFI_OK)
        problem(r, key, path, "libffi cannot prepare this signature (status %d)", (int)st);
}

int dshh__native_add_row(struct dshh_native_set *set, const char *file, const char *row_id,
                         yaml_document_t *doc, yaml_node_t *config, FILE *err)
{
    struct row_reader r = {.file = file, .row_id = row_id, .doc = doc, .err = err};
    struct dshh_native_ns ns = {0};
    yaml_node_t *library = dsh_mapping_get_cstr(doc, config, "library");
    yaml_node_t *global = dsh_mapping_get_cstr(doc, config, "global");
    yaml_node_t *error_class = dsh_mapping_get_cstr(doc, config, "errorClass");
    yaml_node_t *functions = dsh_mapping_get_cstr(doc, config, "functions");
    /* Shapes the catalog guarantees, checked again: this row may not have been validated. */
    if (!dshh__yaml_scalar(library) || !dshh__yaml_scalar(global) || !functions ||
        functions->type != YAML_MAPPING_NODE || (error_class && !dshh__yaml_scalar(error_class))) {
        problem(&r, config, "config", "needs library, global and functions");
        return r.problems;
    }
    const char *lib = dshh__yaml_scalar(library);
    if (!(ns.row_id = dup_text(&r, row_id)) ||
        !(ns.global = dup_text(&r, dshh__yaml_scalar(global))) ||
        (error_class && !(ns.error_class = dup_text(&r, dshh__yaml_scalar(error_class)))))
        goto out;

    check_name(&r, global, "global", ns.global, DSHH_BINDING_NAMESPACE);
    for (size_t i = 0; i < set->n; i++)
        if (!strcmp(set->ns[i].global, ns.global))
            problem(&r, global, "global", "namespace \"%s\" is already declared by row '%s'",
                    ns.global, set->ns[i].row_id);
    if (ns.error_class)
        check_name(&r, error_class, "errorClass", ns.error_class, DSHH_BINDING_ERROR_CLASS);

    /* RTLD_LOCAL: the library's symbols stay out of the host's and other rows' lookups. */
    ns.dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!ns.dl)
        problem(&r, library, "library", "%s", dlerror()); /* names the file and the reason */

    size_t n = (size_t)(functions->data.mapping.pairs.top - functions->data.mapping.pairs.start);
    if (n == 0)
        problem(&r, functions, "functions", "declares no function");
    if (!(ns.fns = calloc(n ? n : 1, sizeof(*ns.fns)))) {
        r.nomem = true;
        goto out;
    }
    for (yaml_node_pair_t *p = functions->data.mapping.pairs.start;
         p < functions->data.mapping.pairs.top && !r.nomem; p++)
        read_function(&r, &ns, ns.dl, lib, yaml_document_get_node(doc, p->key),
                      yaml_document_get_node(doc, p->value));
    if (r.nomem || r.problems)
        goto out;
    struct dshh_native_ns *grown = realloc(set->ns, (set->n + 1) * sizeof(*grown));
    if (!grown) {
        r.nomem = true;
        goto out;
    }
    set->ns = grown;
    set->ns[set->n++] = ns;
    return 0;
out:
    ns_clear(&ns);
    return r.nomem ? -ENOMEM : r.problems;
}

void dshh__native_declare(const struct dshh_native_set *set, json_object *bindings)
{
    for (size_t i = 0; set && i < set->n; i++) {
        const struct dshh_native_ns *ns = &set->ns[i];
        json_object *decl = json_object_new_object(), *fns = json_object_new_array();
        for (size_t k = 0; k < ns->nfns; k++)
            json_object_array_add(fns, json_object_new_string(ns->fns[k].name));
        json_object_object_add(decl, "global", json_object_new_string(ns->global));
        json_object_object_add(decl, "functions", fns);
        if (ns->error_class)
            json_object_object_add(decl, "errorClass", json_object_new_string(ns->error_class));
        json_object_array_add(bindings, decl);
    }
}

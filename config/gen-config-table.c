/* gen-config-table [PROVIDER]: prints the markdown configuration table of one
 * provider (default: the PTC runtime) from the embedded catalog.yaml. The
 * README carries this output; tests/config/readme-table.sh keeps them equal. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "dsh_config.h"

/* Writes s as one table cell: pipes escaped, line breaks folded. */
static void cell(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", out);
        else if (*s == '\n')
            fputc(' ', out);
        else
            fputc(*s, out);
    }
}

static void code_list(FILE *out, char *const *items, const char *sep)
{
    for (size_t i = 0; items && items[i]; i++)
        fprintf(out, "%s`%s`", i ? sep : "", items[i]);
}

static void print_type(FILE *out, const struct dsh_catalog_field *f)
{
    if (f->type == DSH_FIELD_LIST)
        fprintf(out, "list of %s", dsh_field_type_name(f->item_type));
    else if (f->type == DSH_FIELD_MAP)
        fputs("map of object", out);
    else
        fputs(dsh_field_type_name(f->type), out);
    if (f->unit)
        fprintf(out, " (%s)", f->unit);
}

static void print_value(FILE *out, const struct dsh_catalog_field *f,
                        const struct dsh_catalog_value *v)
{
    if (f->type != DSH_FIELD_LIST) {
        fprintf(out, "`%s`", v->text);
        return;
    }
    fputs("`[", out);
    for (size_t i = 0; i < v->n_items; i++)
        fprintf(out, "%s%s", i ? ", " : "", v->items[i]);
    fputs("]`", out);
}

static void print_default(FILE *out, const char *prefix, const struct dsh_catalog_field *f)
{
    if (f->required) {
        fputs("required", out);
    } else if (f->def.text) {
        cell(out, f->def.text);
    } else if (f->def.kind == DSH_DEFAULT_CONDITIONAL) {
        print_value(out, f, &f->def.value);
        fprintf(out, " with `%s%s: %s`, otherwise ", prefix, f->def.if_field,
                f->def.if_equals);
        print_value(out, f, &f->def.otherwise);
    } else {
        print_value(out, f, &f->def.value);
    }
}

static void print_range(FILE *out, const char *prefix, const struct dsh_catalog_field *f)
{
    enum dsh_field_type t = f->item_type;
    const char *sep = "";
    if (t == DSH_FIELD_ENUM) {
        code_list(out, f->values, ", ");
        sep = "; ";
    } else if (t == DSH_FIELD_BOOLEAN) {
        fputs("`true`, `false`", out);
        sep = "; ";
    } else if (t == DSH_FIELD_PATH) {
        fputs(f->type == DSH_FIELD_LIST ? "absolute paths" : "absolute path", out);
        sep = "; ";
    } else if (t == DSH_FIELD_STRING && f->non_empty) {
        fputs("non-empty", out);
        sep = "; ";
    }
    if (f->has_min && f->has_max) {
        fprintf(out, "%s%" PRId64 "..%" PRId64, sep, f->min, f->max);
        sep = "; ";
    } else if (f->has_min) {
        fprintf(out, "%s>= %" PRId64, sep, f->min);
        sep = "; ";
    } else if (f->has_max) {
        fprintf(out, "%s<= %" PRId64, sep, f->max);
        sep = "; ";
    }
    if (f->at_most)
        fprintf(out, "%s<= `%s%s`", sep, prefix, f->at_most);
    else if (f->type == DSH_FIELD_OBJECT)
        fprintf(out, "the `%s%s.*` fields", prefix, f->key);
    else if (f->type == DSH_FIELD_MAP)
        fprintf(out, "names; each value has the `%s%s.<name>.*` fields", prefix, f->key);
    else if (f->item_type == DSH_FIELD_OBJECT)
        fprintf(out, "each item has the `%s%s[].*` fields", prefix, f->key);
}

static void print_meaning(FILE *out, const char *prefix, const struct dsh_catalog_field *f)
{
    cell(out, f->meaning);
    for (size_t k = 0; k < f->n_requires; k++) {
        const struct dsh_catalog_requirement *q = &f->requires[k];
        if (strcmp(q->when, "present") == 0)
            fprintf(out, ". Only with `%s%s: %s`", prefix, q->field, q->equals);
        else
            fprintf(out, ". `%s` requires `%s%s: %s`", q->when, prefix, q->field, q->equals);
    }
}

static void print_fields(FILE *out, const char *prefix, const struct dsh_catalog_field *fields,
                         size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct dsh_catalog_field *f = &fields[i];
        fprintf(out, "| `%s%s` | ", prefix, f->key);
        print_type(out, f);
        fputs(" | ", out);
        print_default(out, prefix, f);
        fputs(" | ", out);
        print_range(out, prefix, f);
        fputs(" | ", out);
        print_meaning(out, prefix, f);
        fputs(" |\n", out);
        if (f->fields) {
            char sub[256];
            const char *sep = f->type == DSH_FIELD_MAP    ? ".<name>."
                              : f->type == DSH_FIELD_LIST ? "[]."
                                                          : ".";
            snprintf(sub, sizeof(sub), "%s%s%s", prefix, f->key, sep);
            print_fields(out, sub, f->fields, f->n_fields);
        }
    }
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : PTC_PROVIDER_NAME;
    char errbuf[512];
    struct dsh_catalog *cat;
    if (argc > 2) {
        fprintf(stderr, "usage: %s [PROVIDER]\n", argv[0]);
        return 2;
    }
    if (dsh_catalog_open(&cat, errbuf, sizeof(errbuf)) < 0) {
        fprintf(stderr, "%s\n", errbuf);
        return 1;
    }
    const struct dsh_catalog_provider *p = dsh_catalog_find(cat, name);
    if (!p) {
        fprintf(stderr, "%s: unknown provider\n", name);
        dsh_catalog_close(cat);
        return 1;
    }
    fputs("| Field | Type | Default | Range | Meaning |\n|---|---|---|---|---|\n", stdout);
    print_fields(stdout, "", p->fields, p->n_fields);
    dsh_catalog_close(cat);
    return fflush(stdout) == 0 ? 0 : 1;
}

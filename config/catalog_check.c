/* Checks of the catalog against itself: a field's rules may only name siblings that exist and can
 * hold the values named. See catalog_check.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "catalog_check.h"
#include "dsh_catalog_lookup.h"
#include "dsh_strv.h"

static bool is_scalar_type(enum dsh_field_type t)
{
    return t != DSH_FIELD_LIST && t != DSH_FIELD_OBJECT && t != DSH_FIELD_MAP;
}

/* A text this field can hold (for `when`/`equals`/`if.equals`). */
static bool text_fits(const struct dsh_catalog_field *f, const char *text)
{
    if (f->type == DSH_FIELD_ENUM)
        return dsh_strv_contains(f->values, text);
    if (f->type == DSH_FIELD_BOOLEAN)
        return strcmp(text, "true") == 0 || strcmp(text, "false") == 0;
    return true;
}

static const struct dsh_catalog_field *sibling(const struct dsh_catalog_field *fields, size_t n,
                                               const struct dsh_catalog_field *self,
                                               const char *key)
{
    const struct dsh_catalog_field *s = dsh_catalog_field_lookup(fields, n, key, strlen(key));
    return s == self || (s && !is_scalar_type(s->type)) ? NULL : s;
}

struct problem {
    char *text;
    size_t size;
};

__attribute__((format(printf, 2, 3))) static int say(struct problem *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->text, p->size, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* fields[i] against its siblings fields[0..n). */
static int check_field(const struct dsh_catalog_field *fields, size_t n, size_t i,
                       struct problem *p)
{
    const struct dsh_catalog_field *f = &fields[i], *s;
    for (size_t j = 0; j < i; j++)
        if (strcmp(fields[j].key, f->key) == 0)
            return say(p, "duplicate field %s", f->key);

    for (size_t k = 0; k < f->n_requires; k++) {
        const struct dsh_catalog_requirement *q = &f->requires[k];
        s = sibling(fields, n, f, q->field);
        if (!s || !text_fits(s, q->equals))
            return say(p, "%s: requires names no scalar sibling %s holding %s", f->key, q->field,
                       q->equals);
        if (strcmp(q->when, "present") != 0 && !text_fits(f, q->when))
            return say(p, "%s: requires.when %s is no value of the field", f->key, q->when);
    }

    if (f->at_most) {
        s = sibling(fields, n, f, f->at_most);
        if (!s || s->type != DSH_FIELD_INTEGER || f->type != DSH_FIELD_INTEGER)
            return say(p, "%s: atMost needs two integer siblings", f->key);
        if (f->def.kind == DSH_DEFAULT_VALUE && s->def.kind == DSH_DEFAULT_VALUE &&
            f->def.value.integer > s->def.value.integer)
            return say(p, "%s: default exceeds the default of %s", f->key, s->key);
    }

    if (f->def.kind == DSH_DEFAULT_CONDITIONAL) {
        s = sibling(fields, n, f, f->def.if_field);
        /* No chains: a condition reads a sibling with a plain default. */
        if (!s || s->def.kind == DSH_DEFAULT_CONDITIONAL || !text_fits(s, f->def.if_equals))
            return say(p, "%s: default if names no plain sibling %s holding %s", f->key,
                       f->def.if_field, f->def.if_equals);
    }
    return 0;
}

int dsh_catalog_check_siblings(const struct dsh_catalog_field *fields, size_t n, size_t *ret_index,
                               char *problem, size_t size)
{
    struct problem p = {problem, size};
    for (size_t i = 0; i < n; i++) {
        if (check_field(fields, n, i, &p) < 0) {
            *ret_index = i;
            return -EINVAL;
        }
    }
    return 0;
}

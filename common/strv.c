/* See dsh_strv.h. */
#include "dsh_strv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push_owned(struct dsh_strv *sv, char *s)
{
    if (!s)
        return -ENOMEM;
    if (sv->n + 2 > sv->cap) {
        size_t cap = sv->cap ? sv->cap * 2 : 8;
        char **v = realloc(sv->v, cap * sizeof(*v));
        if (!v) {
            free(s);
            return -ENOMEM;
        }
        sv->v = v;
        sv->cap = cap;
    }
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
    return 0;
}

int dsh_strv_push(struct dsh_strv *sv, const char *s)
{
    return push_owned(sv, strdup(s));
}

int dsh_strv_pushf(struct dsh_strv *sv, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return push_owned(sv, n < 0 ? NULL : s);
}

char **dsh_strv_finish(struct dsh_strv *sv)
{
    if (!sv->v)
        sv->v = calloc(1, sizeof(char *));
    char **v = sv->v;
    *sv = (struct dsh_strv){0};
    return v;
}

void dsh_strv_clear(struct dsh_strv *sv)
{
    dsh_strv_free(sv->v);
    *sv = (struct dsh_strv){0};
}

void dsh_strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

char **dsh_strv_dup(const char *const *v)
{
    struct dsh_strv sv = {0};
    for (size_t i = 0; v && v[i]; i++) {
        if (dsh_strv_push(&sv, v[i]) < 0) {
            dsh_strv_clear(&sv);
            return NULL;
        }
    }
    return dsh_strv_finish(&sv);
}

bool dsh_strv_contains(char *const *v, const char *s)
{
    for (; v && *v; v++)
        if (strcmp(*v, s) == 0)
            return true;
    return false;
}

char *dsh_strv_join(char *const *v, const char *separator)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    for (size_t i = 0; v && v[i]; i++)
        fprintf(f, "%s%s", i ? separator : "", v[i]);
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* NULL-terminated string vectors. */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push_owned(struct dshx__strv *sv, char *s)
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

int dshx__strv_push(struct dshx__strv *sv, const char *s)
{
    return push_owned(sv, strdup(s));
}

int dshx__strv_pushf(struct dshx__strv *sv, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return push_owned(sv, n < 0 ? NULL : s);
}

char **dshx__strv_finish(struct dshx__strv *sv)
{
    if (!sv->v)
        sv->v = calloc(1, sizeof(char *));
    char **v = sv->v;
    *sv = (struct dshx__strv){0};
    return v;
}

void dshx__strv_clear(struct dshx__strv *sv)
{
    dshx__strv_free(sv->v);
    *sv = (struct dshx__strv){0};
}

void dshx__strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

size_t dshx__strv_len(const char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

char **dshx__strv_dup(const char *const *v)
{
    struct dshx__strv sv = {0};
    for (size_t i = 0; v && v[i]; i++) {
        if (dshx__strv_push(&sv, v[i]) < 0) {
            dshx__strv_clear(&sv);
            return NULL;
        }
    }
    return dshx__strv_finish(&sv);
}

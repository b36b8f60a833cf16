/* Collected validation errors, each with field path and 1-based line:column. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh_diagnostics.h"

void dsh_diagnostics_init(struct dsh_diagnostics *diags)
{
    if (diags)
        *diags = (struct dsh_diagnostics){0};
}

void dsh_diagnostics_release(struct dsh_diagnostics *diags)
{
    if (!diags)
        return;
    for (size_t i = 0; i < diags->count; i++) {
        free(diags->items[i].path);
        free(diags->items[i].problem);
        free(diags->items[i].text);
    }
    free(diags->items);
    *diags = (struct dsh_diagnostics){0};
}

int dsh_diagnostics_add(struct dsh_diagnostics *diags, const char *path, size_t line,
                        size_t column, const char *fmt, ...)
{
    if (!diags)
        return 0;
    if (diags->count == diags->capacity) {
        size_t cap = diags->capacity ? diags->capacity * 2 : 8;
        struct dsh_diagnostic *items = realloc(diags->items, cap * sizeof(*items));
        if (!items)
            return -ENOMEM;
        diags->items = items;
        diags->capacity = cap;
    }

    struct dsh_diagnostic d = {.line = line, .column = column};
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&d.problem, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -ENOMEM;
    d.path = strdup(path);
    if (line > 0)
        n = asprintf(&d.text, "%s: %s (line %zu:%zu)", path, d.problem, line, column);
    else
        n = asprintf(&d.text, "%s: %s", path, d.problem);
    if (n < 0)
        d.text = NULL;
    if (!d.path || !d.text) {
        free(d.path);
        free(d.problem);
        free(d.text);
        return -ENOMEM;
    }
    diags->items[diags->count++] = d;
    return 0;
}

int dsh_diagnostics_join(const struct dsh_diagnostics *diags, char **ret_text)
{
    size_t total = 1;
    size_t count = diags ? diags->count : 0;
    for (size_t i = 0; i < count; i++)
        total += strlen(diags->items[i].text) + 1;
    char *text = malloc(total);
    if (!text)
        return -ENOMEM;
    char *p = text;
    for (size_t i = 0; i < count; i++) {
        if (i > 0)
            *p++ = '\n';
        size_t len = strlen(diags->items[i].text);
        memcpy(p, diags->items[i].text, len);
        p += len;
    }
    *p = '\0';
    *ret_text = text;
    return 0;
}

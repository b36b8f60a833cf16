/* Diagnostics of config/ (diagnostics.c): every problem with its field path and line:column. */
#ifndef DSH_DIAGNOSTICS_H
#define DSH_DIAGNOSTICS_H

#include <stddef.h>
#include <yaml.h>

struct dsh_diagnostic {
    char *path;    /* field path: "timeoutMs", "launch.executable", "extraWritableRoots[1]",
                      "config" (the mapping itself), "yaml" (syntax), "name" (provider) */
    size_t line;   /* 1-based; 0 when no position is known */
    size_t column; /* 1-based */
    char *problem; /* the message without path and position */
    char *text;    /* "<path>: <problem> (line L:C)" */
};

struct dsh_diagnostics {
    struct dsh_diagnostic *items;
    size_t count;
    size_t capacity;
};

void dsh_diagnostics_init(struct dsh_diagnostics *diags);
/* Frees all items and re-initializes; NULL ok. */
void dsh_diagnostics_release(struct dsh_diagnostics *diags);
/* All texts joined by '\n' (transfer full; "" when none). */
int dsh_diagnostics_join(const struct dsh_diagnostics *diags, char **ret_text);

/* Appends one diagnostic; line/column are 1-based (0 = unknown). */
int dsh_diagnostics_add(struct dsh_diagnostics *diags, const char *path, size_t line,
                        size_t column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static inline int dsh_diagnostics_add_at(struct dsh_diagnostics *diags, const char *path,
                                         yaml_mark_t mark, const char *problem)
{
    return dsh_diagnostics_add(diags, path, mark.line + 1, mark.column + 1, "%s", problem);
}

#endif

/* NULL-terminated string vectors (argv, envp, lists of paths or names) and a builder for them. */
#ifndef DSH_STRV_H
#define DSH_STRV_H

#include <stdbool.h>
#include <stddef.h>

/* A vector under construction: zero-initialize, push, then finish (or clear on failure). */
struct dsh_strv {
    char **v; /* NULL-terminated once non-empty */
    size_t n;
    size_t cap;
};

/* Each returns 0 or -ENOMEM; on failure the vector keeps what it had. */
int dsh_strv_push(struct dsh_strv *sv, const char *s);
int dsh_strv_pushf(struct dsh_strv *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The built vector (transfer full; always NULL-terminated, NULL only on ENOMEM); sv is reset. */
char **dsh_strv_finish(struct dsh_strv *sv);
/* Frees what was pushed and resets sv. */
void dsh_strv_clear(struct dsh_strv *sv);

void dsh_strv_free(char **v);              /* NULL ok */
char **dsh_strv_dup(const char *const *v); /* NULL input gives an empty vector; NULL on ENOMEM */
bool dsh_strv_contains(char *const *v, const char *s); /* NULL v ok */
/* The entries joined by separator (malloc'd; NULL on ENOMEM); NULL v gives "". */
char *dsh_strv_join(char *const *v, const char *separator);

#endif

/* Shared assertions of the config tests. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "helpers.h"

int validate(const char *provider, const char *yaml, struct dsh_diagnostics *ret_diags)
{
    return dsh_config_validate_text(provider, yaml, strlen(yaml), ret_diags);
}

/* All diagnostics as one text into buf, for assertion messages. */
static const char *joined(const struct dsh_diagnostics *diags, char *buf, size_t size)
{
    char *text = NULL;
    snprintf(buf, size, "(none)");
    if (dsh_diagnostics_join(diags, &text) == 0)
        snprintf(buf, size, "%s", text);
    free(text);
    return buf;
}

static void check_one(const struct dsh_diagnostic *d, const char *path, size_t line,
                      size_t column, const char *needle)
{
    char where[64];
    snprintf(where, sizeof(where), "(line %zu:%zu)", line, column);
    cr_assert_str_eq(d->path, path, "path: got %s, want %s (%s)", d->path, path, d->text);
    cr_assert(d->line == line && d->column == column, "position: got %zu:%zu, want %zu:%zu (%s)",
              d->line, d->column, line, column, d->text);
    cr_assert(strncmp(d->text, path, strlen(path)) == 0 && d->text[strlen(path)] == ':',
              "text does not start with the field: %s", d->text);
    cr_assert(strstr(d->text, where), "text lacks %s: %s", where, d->text);
    cr_assert(strstr(d->problem, needle), "problem lacks \"%s\": %s", needle, d->text);
}

void expect_error(const char *provider, const char *yaml, const char *path, size_t line,
                  size_t column, const char *needle)
{
    struct dsh_diagnostics diags;
    char buf[4096];
    int rc = validate(provider, yaml, &diags);
    cr_assert_eq(rc, -EINVAL, "accepted (rc %d): %s", rc, yaml);
    cr_assert_eq(diags.count, 1, "want one diagnostic, got %zu:\n%s", diags.count,
                 joined(&diags, buf, sizeof(buf)));
    check_one(&diags.items[0], path, line, column, needle);
    dsh_diagnostics_release(&diags);
}

void expect_diag(const struct dsh_diagnostics *diags, const char *path, size_t line,
                 size_t column, const char *needle)
{
    char buf[4096];
    for (size_t i = 0; i < diags->count; i++)
        if (strcmp(diags->items[i].path, path) == 0) {
            check_one(&diags->items[i], path, line, column, needle);
            return;
        }
    cr_assert_fail("no diagnostic for %s among:\n%s", path, joined(diags, buf, sizeof(buf)));
}

void expect_valid(const char *provider, const char *yaml)
{
    struct dsh_diagnostics diags;
    char buf[4096];
    int rc = validate(provider, yaml, &diags);
    cr_assert_eq(rc, 0, "rejected (rc %d) %s:\n%s", rc, yaml, joined(&diags, buf, sizeof(buf)));
    cr_assert_eq(diags.count, 0);
    dsh_diagnostics_release(&diags);
}

yaml_node_t *load_doc(const char *yaml, yaml_document_t *doc)
{
    struct dsh_diagnostics diags;
    int rc = dsh_yaml_load(yaml, strlen(yaml), doc, &diags);
    cr_assert_eq(rc, 0, "cannot load %s", yaml);
    dsh_diagnostics_release(&diags);
    return yaml_document_get_root_node(doc);
}

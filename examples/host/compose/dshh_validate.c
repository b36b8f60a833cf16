/* Catalog validation of rows: `dsh config validate [FILE]` and the check `dsh headless` makes
 * before it mounts anything. Diagnostics read "FILE:L:C: row 'id' (name): field: problem". */
#include "dshh_validate.h"

#include "dshh_host.h"
#include "dshh_persistent_patch.h"
#include "dshh_usage.h"
#include "dshh_yaml.h"

#include "dsh_config.h"
#include "dshh_native_bindings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Validates one config node; returns 1 when invalid, 0 when valid, -1 on a system error. */
static int check_config(const struct dsh_catalog *cat, struct dshh_native_set *native,
                        const char *file, bool positions, const char *id, const char *name,
                        yaml_document_t *doc, yaml_node_t *config, const yaml_node_t *row_node,
                        FILE *err)
{
    if (!dsh_catalog_find(cat, name)) {
        if (row_node)
            fprintf(err, "%s:%zu:%zu: ", file, row_node->start_mark.line + 1,
                    row_node->start_mark.column + 1);
        else
            fprintf(err, "%s: ", file);
        fprintf(err, "row '%s': name: unknown provider '%s' (not in catalog.yaml)\n", id, name);
        return 1;
    }
    struct dsh_diagnostics diags;
    int rc = dsh_config_validate_node(cat, name, doc, config, &diags);
    if (rc == -EINVAL) {
        for (size_t i = 0; i < diags.count; i++) {
            const struct dsh_diagnostic *d = &diags.items[i];
            if (d->line && positions)
                fprintf(err, "%s:%zu:%zu: ", file, d->line, d->column);
            else
                fprintf(err, "%s: ", file);
            fprintf(err, "row '%s' (%s): %s: %s\n", id, name, d->path, d->problem);
        }
        rc = 1;
    } else if (rc < 0) {
        fprintf(err, "%s: row '%s': %s\n", file, id, strerror(-rc));
        rc = -1;
    } else if (!strcmp(name, DSHH_NAME_NATIVE)) {
        /* What the catalog cannot see: names, the library and its symbols (opened here). */
        rc = dshh__native_add_row(native, file, id, doc, config, err);
        rc = rc < 0 ? -1 : rc > 0;
    }
    dsh_diagnostics_release(&diags);
    return rc;
}

static int open_catalog(struct dsh_catalog **cat, FILE *err)
{
    char msg[512] = "";
    int rc = dsh_catalog_open(cat, msg, sizeof msg);
    if (rc < 0)
        fprintf(err, "dsh: cannot read the catalog: %s\n", *msg ? msg : strerror(-rc));
    return rc;
}

int dshh__validate_profile(const struct dshh_profile *profile, bool enabled_only, FILE *err)
{
    struct dsh_catalog *cat;
    struct dshh_native_set *native = NULL;
    if (open_catalog(&cat, err) < 0)
        return -1;
    if (dshh__native_set_new(NULL, &native) < 0) {
        dsh_catalog_close(cat);
        return -1;
    }
    int invalid = 0;
    for (size_t i = 0; i < profile->nrows; i++) {
        const struct dshh_row *row = &profile->rows[i];
        if (enabled_only && row->disabled)
            continue;
        const char *file = row->config_layer ? row->config_layer->path : row->layer->path;
        const struct dshh_layer *owner = row->config_layer ? row->config_layer : row->layer;
        yaml_document_t *doc = (yaml_document_t *)&owner->doc;
        /* A layer made from --sandbox or --workspace has no position the user wrote. */
        int rc = check_config(cat, native, file, !owner->from_option, row->id, row->name, doc,
                              row->config, NULL, err);
        if (rc < 0) {
            invalid = -1;
            break;
        }
        invalid += rc;
    }
    dshh__native_set_free(native);
    dsh_catalog_close(cat);
    return invalid;
}

/* One row of FILE: a full row, or a row patch whose name comes from the base composition.
 * Its row fields get the checks composition makes (dshh__row_check), so `config validate FILE`
 * and `headless --patch FILE` decide alike; then its config is checked against the catalog. */
static int check_file_row(const struct dsh_catalog *cat, struct dshh_native_set *native,
                          const struct dshh_profile *base, const struct dshh_layer *layer,
                          yaml_node_t *row, FILE *err)
{
    const char *file = layer->path;
    yaml_document_t *doc = (yaml_document_t *)&layer->doc;
    if (row->type != YAML_MAPPING_NODE) {
        fprintf(err, "%s:%zu:%zu: a row must be a mapping\n", file, row->start_mark.line + 1,
                row->start_mark.column + 1);
        return 1;
    }
    if (dshh__row_check(err, layer, row))
        return 1;
    int invalid = 0;
    const char *id = dshh__yaml_scalar(dsh_mapping_get_cstr(doc, row, "id"));
    const char *name = dshh__yaml_scalar(dsh_mapping_get_cstr(doc, row, "name"));
    if (!id) {
        fprintf(err, "%s:%zu:%zu: id: a row needs an id\n", file, row->start_mark.line + 1,
                row->start_mark.column + 1);
        return 1;
    }
    if (!name) {
        const struct dshh_row *b = base ? dshh__profile_find(base, id) : NULL;
        if (!b) {
            fprintf(err, "%s:%zu:%zu: name: row '%s' has no name and patches no row of the profile\n",
                    file, row->start_mark.line + 1, row->start_mark.column + 1, id);
            return 1;
        }
        name = b->name;
    }
    yaml_node_t *config = dsh_mapping_get_cstr(doc, row, "config");
    /* A patch row without config keeps the base config, validated with the base. */
    if (!config && !dsh_mapping_get_cstr(doc, row, "name") && base)
        return invalid;
    int rc = check_config(cat, native, file, true, id, name, doc,
                          dshh__yaml_is_empty(config) ? NULL : config, row, err);
    return rc < 0 ? rc : (invalid | rc);
}

static int validate_file(const struct dsh_catalog *cat, const struct dshh_profile *base,
                         const char *file, FILE *err)
{
    struct dshh_layer layer = {.path = (char *)file};
    yaml_document_t *doc = &layer.doc;
    struct dshh_native_set *native;
    if (dshh__native_set_new(NULL, &native) < 0)
        return -1;
    if (dshh__yaml_load_file(file, doc, err)) {
        dshh__native_set_free(native);
        return 1;
    }
    int invalid = 0;
    yaml_node_t *root = yaml_document_get_root_node(doc);
    if (root && root->type != YAML_SEQUENCE_NODE && !dshh__yaml_is_empty(root)) {
        fprintf(err, "%s:%zu:%zu: a profile or patch is a YAML list of rows\n", file,
                root->start_mark.line + 1, root->start_mark.column + 1);
        invalid = 1;
    } else if (root && root->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = root->data.sequence.items.start;
             it < root->data.sequence.items.top && invalid >= 0; it++) {
            yaml_node_t *entry = yaml_document_get_node(doc, *it);
            yaml_node_t *ins = dsh_mapping_get_cstr(doc, entry, "insert");
            if (!ins) {
                int rc = check_file_row(cat, native, base, &layer, entry, err);
                invalid = rc < 0 ? rc : invalid + rc;
                continue;
            }
            if (entry->data.mapping.pairs.top - entry->data.mapping.pairs.start != 1) {
                fprintf(err, "%s:%zu:%zu: an insert entry has only the key 'insert'\n", file,
                        entry->start_mark.line + 1, entry->start_mark.column + 1);
                invalid++;
                continue;
            }
            if (ins->type != YAML_SEQUENCE_NODE) {
                fprintf(err, "%s:%zu:%zu: insert: must be a list of rows\n", file,
                        ins->start_mark.line + 1, ins->start_mark.column + 1);
                invalid++;
                continue;
            }
            for (yaml_node_item_t *r = ins->data.sequence.items.start;
                 r < ins->data.sequence.items.top && invalid >= 0; r++) {
                /* Inserted rows are complete: no base lookup for their name. */
                int rc = check_file_row(cat, native, NULL, &layer, yaml_document_get_node(doc, *r),
                                        err);
                invalid = rc < 0 ? rc : invalid + rc;
            }
        }
    }
    yaml_document_delete(doc);
    dshh__native_set_free(native);
    return invalid;
}

/* What `dsh headless` does next with a valid composition, done here too so that a composition
 * is called valid only when dsh would start with it: the one enabled provider row opened, the
 * service rows read, their roots judged (the workspace defaulting to the current directory, as
 * at startup), the services created and the provider loaded with them; then everything is
 * unloaded. Its messages are the startup's. 0 when it starts, 1 otherwise. */
static int startup_check(const struct dshh_profile *profile)
{
    struct dshh_host host;
    int rc = dshh__host_open(&host, profile, false, NULL, 0);
    dshh__host_close(&host);
    return rc == 0 ? 0 : 1;
}

/* FILE as a patch of the composition, or else as a profile of its own (whichever composes).
 * 1: FILE is rows of neither (no provider row: a fragment), which only the row checks judge. */
static int compose_file(const char *base, const char *const *base_patches, size_t n, const char *file,
                        struct dshh_profile *ret)
{
    FILE *quiet = fopen("/dev/null", "we");
    if (!quiet)
        return -1;
    const char **patches = calloc(n + 1, sizeof(*patches));
    int rc = -1;
    if (patches) {
        memcpy(patches, base_patches, n * sizeof(*patches));
        patches[n] = file;
        rc = dshh__profile_compose(ret, base, patches, n + 1, quiet);
        if (rc) {
            dshh__profile_free(ret);
            rc = dshh__profile_compose(ret, file, NULL, 0, quiet);
            if (rc == 0 && !dshh__profile_names_provider(ret))
                rc = 1;
        }
        if (rc < 0) { /* neither: say what composing it as a patch meets */
            dshh__profile_free(ret);
            rc = dshh__profile_compose(ret, base, patches, n + 1, stderr);
        }
    }
    free(patches);
    fclose(quiet);
    return rc;
}

/* argv: validate [FILE] | persistent-patch (main.c checked the words and options). */
int dshh__cmd_config(const char *base, const char *const *patches, size_t npatches, const char *format,
                     int argc, char **argv)
{
    if (argc == 1 && !strcmp(argv[0], "persistent-patch")) {
        struct dshh_profile profile;
        int status = dshh__profile_compose(&profile, base, patches, npatches, stderr)
                         ? DSHH_EXIT_FAILURE
                         : dshh__cmd_persistent_patch(&profile, format, stdout, stderr);
        dshh__profile_free(&profile);
        return status;
    }
    struct dshh_profile profile;
    if (dshh__profile_compose(&profile, base, patches, npatches, stderr)) {
        dshh__profile_free(&profile);
        return argc == 2 ? DSHH_EXIT_USAGE : DSHH_EXIT_FAILURE;
    }
    int invalid;
    if (argc == 2) {
        struct dsh_catalog *cat;
        if (open_catalog(&cat, stderr) < 0) {
            dshh__profile_free(&profile);
            return DSHH_EXIT_USAGE;
        }
        invalid = validate_file(cat, &profile, argv[1], stderr);
        dsh_catalog_close(cat);
    } else {
        invalid = dshh__validate_profile(&profile, false, stderr);
    }
    int refused = 0;
    if (invalid == 0 && argc == 2) {
        dshh__profile_free(&profile);
        int composed = compose_file(base, patches, npatches, argv[1], &profile);
        refused = composed < 0 ? 1 : composed == 0 ? startup_check(&profile) : 0;
    } else if (invalid == 0) {
        refused = startup_check(&profile);
    }
    dshh__profile_free(&profile);
    if (invalid < 0)
        return DSHH_EXIT_USAGE;
    if (invalid > 0) {
        fprintf(stderr, "dsh: %d invalid row%s\n", invalid, invalid == 1 ? "" : "s");
        return DSHH_EXIT_FAILURE;
    }
    if (refused) {
        fprintf(stderr, "dsh: %s is refused: dsh would not start with it\n", argc == 2 ? argv[1] : "the composition");
        return DSHH_EXIT_FAILURE;
    }
    printf("%s: valid\n", argc == 2 ? argv[1] : "composition");
    return DSHH_EXIT_OK;
}

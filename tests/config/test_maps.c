/* Catalog maps (names the author chooses -> objects of fields) and lists of objects, through the
 * dsh-native-bindings row of the embedded catalog, plus the catalog's own rules for them. */
#include <criterion/criterion.h>

#include "helpers.h"

#define NATIVE "dsh-native-bindings"
#define HEAD   "library: libx.so\nglobal: g\nfunctions:\n"

Test(maps, entries_and_object_items_are_validated_with_their_paths)
{
    expect_valid(NATIVE, HEAD
                 "  f: {returns: void}\n  g: {returns: int8, args: [{name: a, type: int8}]}\n");
    expect_error(NATIVE, HEAD "  f: {returns: int128}\n", "functions.f.returns", 4, 16,
                 "is not one of");
    expect_error(NATIVE, HEAD "  f: {returns: void, args: [{name: a, type: bool}, {name: b}]}\n",
                 "functions.f.args[1].type", 4, 52, "required field missing");
    expect_error(NATIVE, HEAD "  f: {returns: void, args: [{name: a, type: bool, size: 4}]}\n",
                 "functions.f.args[0].size", 4, 51, "unknown field");
    expect_error(NATIVE, HEAD "  f: {returns: void, args: [bool]}\n", "functions.f.args[0]", 4, 29,
                 "expected a mapping");
    expect_error(NATIVE, HEAD "  f: void\n", "functions.f", 4, 6, "expected a mapping");
    expect_error(NATIVE, "library: libx.so\nglobal: g\nfunctions: [f]\n", "functions", 3, 12,
                 "expected a mapping");
}

Test(maps, names_are_non_empty_strings_given_once)
{
    expect_error(NATIVE, HEAD "  1: {returns: void}\n", "functions", 4, 3,
                 "keys must be non-empty names, got integer 1");
    expect_error(NATIVE, HEAD "  '': {returns: void}\n", "functions", 4, 3,
                 "keys must be non-empty names");
    expect_error(NATIVE, HEAD "  f: {returns: void}\n  f: {returns: int8}\n", "functions", 5, 3,
                 "duplicate name f (first given at line 4:3)");
}

static void expect_bad_catalog(const char *field_yaml, const char *needle)
{
    char text[2048], err[256];
    struct dsh_catalog *cat = NULL;
    snprintf(text, sizeof(text), "providers:\n  - name: p\n    fields:\n%s", field_yaml);
    cr_assert_eq(dsh_catalog_open_text(text, strlen(text), &cat, err, sizeof(err)), -EINVAL,
                 "accepted:\n%s", text);
    cr_assert(strstr(err, needle), "message lacks \"%s\": %s", needle, err);
}

Test(maps, catalog_rules_for_maps_and_object_lists)
{
    const char *good = "providers:\n  - name: p\n    fields:\n"
                       "      - {key: m, type: map, required: true, meaning: m,\n"
                       "         fields: [{key: a, type: integer, default: 1, meaning: m}]}\n"
                       "      - {key: l, type: list, items: object, default: [], meaning: m,\n"
                       "         fields: [{key: b, type: string, required: true, meaning: m}]}\n";
    struct dsh_catalog *cat;
    char err[256];
    cr_assert_eq(dsh_catalog_open_text(good, strlen(good), &cat, err, sizeof err), 0, "%s", err);
    dsh_catalog_close(cat);
    expect_bad_catalog("      - {key: m, type: map, required: true, meaning: m}\n",
                       "`fields` goes with (and only with) objects, maps and lists of objects");
    expect_bad_catalog("      - {key: l, type: list, items: string, default: [], meaning: m,\n"
                       "         fields: [{key: b, type: string, required: true, meaning: m}]}\n",
                       "`fields` goes with (and only with)");
    expect_bad_catalog("      - {key: l, type: list, items: map, default: [], meaning: m}\n",
                       "list items must be scalars or objects");
    expect_bad_catalog("      - {key: m, type: map, default: x, meaning: m,\n"
                       "         fields: [{key: a, type: integer, default: 1, meaning: m}]}\n",
                       "objects and maps take defaultText only");
}

/* Catalog-driven YAML row loading and validation (config/): any text as the config of the
 * Node runtime's row, of the Python runtime's row and of the Linux sandbox's row. For each, the
 * catalog validator and the typed parser agree (a row the validator passes parses; one it refuses
 * does not, with at least one diagnostic), and every diagnostic is a path and a problem. */
#include <stdlib.h>
#include <string.h>

#include "dsh_row.h"
#include "dsh_typed_config.h"
#include "fuzz_target.h"

static void check_diagnostics(const struct dsh_diagnostics *diags)
{
    for (size_t i = 0; i < diags->count; i++)
        fuzz_check(diags->items[i].path && diags->items[i].problem && diags->items[i].text &&
                       strstr(diags->items[i].text, diags->items[i].problem),
                   "diagnostic %zu incomplete", i);
}

static void check_row(const char *provider, const char *text, size_t len,
                      int (*parse)(const char *, size_t, struct ptc_config *, struct dsh_diagnostics *))
{
    struct dsh_diagnostics checked, parsed;
    dsh_diagnostics_init(&checked);
    dsh_diagnostics_init(&parsed);
    int valid = dsh_config_validate_text(provider, text, len, &checked);
    fuzz_check(valid == 0 ? checked.count == 0 : checked.count > 0, "validate %d with %zu diagnostics", valid,
               checked.count);
    struct ptc_config config;
    int rc = parse(text, len, &config, &parsed);
    fuzz_check((valid == 0) == (rc == 0), "%s: validator %d, typed parser %d", provider, valid, rc);
    if (rc == 0) {
        fuzz_check(config.timeout_ms > 0 && config.max_output_bytes > 0, "parsed limits not positive");
        ptc_config_destroy(&config);
    }
    check_diagnostics(&checked);
    check_diagnostics(&parsed);
    dsh_diagnostics_release(&checked);
    dsh_diagnostics_release(&parsed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The row text is any bytes; libyaml reads it with a length. */
    const char *text = (const char *)data;
    check_row(PTC_PROVIDER_NAME, text, size, ptc_config_parse);
    check_row(PTC_PYTHON_PROVIDER_NAME, text, size, ptc_python_config_parse);
    struct dsh_diagnostics diags;
    dsh_diagnostics_init(&diags);
    struct dsh_sandbox_linux_config linux_config;
    if (dsh_sandbox_linux_config_parse(text, size, &linux_config, &diags) == 0) {
        fuzz_check(linux_config.extra_writable_roots != NULL, "roots list");
        for (size_t i = 0; i < linux_config.n_extra_writable_roots; i++)
            fuzz_check(linux_config.extra_writable_roots[i] != NULL, "root %zu", i);
        dsh_sandbox_linux_config_destroy(&linux_config);
    }
    check_diagnostics(&diags);
    dsh_diagnostics_release(&diags);
    return 0;
}

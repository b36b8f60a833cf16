/* What differs between the program languages a provider built from these layers runs: the row it
 * parses, the argv that starts its child bootstrap, the runtime version its `hello` must name and
 * which options it supports. Everything else (framing, ledger, environments, runs, results) is
 * shared. Each provider's entry file defines one (node_entry.c: Node, python/python_entry.c: Python); the
 * layers reach it through the host context (ptc_host.h), a table this base layer declares. */
#ifndef PTC_LANGUAGE_H
#define PTC_LANGUAGE_H

#include <stdbool.h>
#include <stddef.h>

struct ptc_host;
struct dsh_error;
struct dsh_diagnostics;
struct ptc_config;
struct ptc_frame;

struct ptc_language {
    const char *provider_name;    /* the row name and the provider table's name */
    const char *program_language; /* describe()'s `language`: "typescript" or "python" */
    /* Parses the provider's row into the shared config (catalog defaults filled). */
    int (*parse_config)(const char *yaml_text, size_t len, struct ptc_config *ret_config,
                        struct dsh_diagnostics *ret_diags);
    /* The argv starting the bootstrap and its env additions (transfer full, NULL-terminated). */
    int (*launch_argv)(struct ptc_host *host, char ***ret_argv, char ***ret_env, struct dsh_error *err);
    /* The argv of the out-of-process type stripper and, into ret_dir, the one directory it is
     * confined to (transfer full, NULL-terminated); NULL for a language without type stripping. */
    int (*stripper_argv)(struct ptc_host *host, char ***ret_argv, char *ret_dir, size_t dir_len, struct dsh_error *err);
    /* false with why filled when the hello names a runtime this bootstrap cannot serve. */
    bool (*hello_supported)(const struct ptc_frame *hello, char *why, size_t why_len);
    /* Per-call numeric timeoutMs overrides (else only the configured deadline, or null). */
    bool timeout_overrides;
    /* Execution modes with retained state (stateOwner) and environment initializers. */
    bool retaining_modes;
    /* describe()'s executionInstructions for per-call runs. */
    const char *per_call_instructions;
    /* The constant program a prewarmed process evaluates (twice) before it serves one; it must
     * succeed in every program format of the language and depend on nothing of a request. */
    const char *warm_up_program;
    /* The one binding the warm-up program may call, "global" and "function" (NULL: none): the
     * host answers each call with its arguments, so the program's first calls find the call
     * path warm. */
    const char *warm_up_binding_global, *warm_up_binding_function;
};

#endif

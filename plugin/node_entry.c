/* dsh-ptc-runtime-node.so: the Node language (TypeScript programs, bootstrap/) and the provider
 * table; dsh_provider_entry is the only exported symbol (calls: instance.c; readable_roots needs
 * no instance: request/own_files.c). */
#include "node_entry.h"
#include "frames.h"
#include "instance.h"
#include "language.h"
#include "launch.h"
#include "own_files.h"

#include <stdio.h>

static bool node_hello_supported(const struct ptc_frame *hello, char *why, size_t why_len)
{
    long major = 0;
    if (hello->node && sscanf(hello->node, "v%ld", &major) == 1 && major >= PTC_MIN_NODE_MAJOR)
        return true;
    snprintf(why, why_len, "Node.js %.40s is older than the supported v%d line", hello->node ? hello->node : "(unknown)",
             PTC_MIN_NODE_MAJOR);
    return false;
}

/* Each warm-up evaluation makes process.stdout and process.stderr (Node makes each on first use:
 * net and the streams, about 4 ms of a program's first console.log) and imports node:fs (the
 * module loader's first import, about 5 ms) without writing or reading anything, and calls the
 * warm-up binding, which the host answers, so a program's first binding calls take a path that
 * has run before. Last, it allocates garbage (64 KiB arrays) until V8 has collected the young
 * generation once (heapUsed fell), so the two evaluations promote what the start and the steps
 * before left there: otherwise a program's first collection copies it, 2-5 ms inside its run
 * (plugin/README.md, "Prewarmed processes"). Where the heap figure cannot be read, it stops at
 * the first reading. The type annotation sends the text through amaro, which then strips typed
 * programs warm. */
#define PTC_TEXT_OF(x) #x
#define PTC_TEXT(x) PTC_TEXT_OF(x)
const char ptc__node_warm_up_program[] =
    "try { process.stdout; process.stderr; await import('node:fs'); "
    "for (let call = 0; call < " PTC_TEXT(PTC_NODE_WARM_UP_CALLS) "; call++) "
    "await " PTC_NODE_WARM_UP_GLOBAL "." PTC_NODE_WARM_UP_FUNCTION "({ call }); "
    "let used: number = 0; for (let round = 0; round < 300; round++) { new Array(8000); "
    "const now = process.memoryUsage().heapUsed; if (now < used) break; used = now; } "
    "} catch {} 0";

static const struct ptc_language node_language = {
    .provider_name = PTC_NAME,
    .program_language = "typescript",
    .parse_config = ptc_config_parse,
    .launch_argv = ptc__launch_argv,
    .stripper_argv = ptc__launch_stripper_argv,
    .hello_supported = node_hello_supported,
    .timeout_overrides = true,
    .retaining_modes = true,
    .per_call_instructions = ptc__node_per_call_instructions,
    .warm_up_program = ptc__node_warm_up_program,
    .warm_up_binding_global = PTC_NODE_WARM_UP_GLOBAL,
    .warm_up_binding_function = PTC_NODE_WARM_UP_FUNCTION,
};

static int load(const char *config_yaml, size_t config_len, const struct dsh_services *services,
                struct dsh_instance **ret_instance, struct dsh_error *ret_error)
{
    return ptc__instance_load(&node_language, config_yaml, config_len, services, ret_instance, ret_error);
}

static const struct dsh_provider provider = PTC_PROVIDER_TABLE(PTC_NAME, load, ptc__own_readable_roots);

__attribute__((visibility("default"))) const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major)
{
    return host_abi_major == DSH_ABI_MAJOR ? &provider : NULL;
}

/* dsh-ptc-runtime-python.so (experimental): the Python language (bootstrap-python/) and the
 * provider table, built from the same layers as the Node runtime; dsh_provider_entry is the only
 * exported symbol. Per call only: no stateOwner, no environment initializers (wrong-mode), the
 * configured deadline only (no numeric timeoutMs overrides, no timeout in describe()). */
#include "python.h"
#include "instance.h"
#include "language.h"
#include "own_files.h"

static const char python_instructions[] =
    "Write the program as the body of an async Python 3.11 function: top-level await and return "
    "work, and the returned value must be plain JSON (dict with str keys, list, str, int, float, "
    "bool, None; not tuples, sets or bytes). Call host tools with await, for example "
    "`r = await tools.search(query=\"x\")` (keyword arguments become one JSON object); a failed "
    "call raises the namespace's error class, whose `member` names the function. The standard "
    "library is available under the session's file sandbox. Use inspect(*values) or print() to "
    "display output. Every call runs in a fresh process: no variables survive between calls.";

static const struct ptc_language python_language = {
    .provider_name = PTC_PYTHON_PROVIDER_NAME,
    .program_language = "python",
    .parse_config = ptc_python_config_parse,
    .launch_argv = ptc__python_launch_argv,
    .hello_supported = ptc__python_hello_supported,
    .timeout_overrides = false,
    .retaining_modes = false,
    .per_call_instructions = python_instructions,
    /* The child starts without asyncio (bootstrap-python/README.md); a prewarmed one has it
     * loaded and its event loop running before a program arrives. */
    .warm_up_program = "import asyncio",
};

static int load(const char *config_yaml, size_t config_len, const struct dsh_services *services,
                struct dsh_instance **ret_instance, struct dsh_error *ret_error)
{
    return ptc__instance_load(&python_language, config_yaml, config_len, services, ret_instance, ret_error);
}

static const struct dsh_provider provider = PTC_PROVIDER_TABLE(PTC_PYTHON_PROVIDER_NAME, load, ptc__own_python_readable_roots);

__attribute__((visibility("default"))) const struct dsh_provider *dsh_provider_entry(uint32_t host_abi_major)
{
    return host_abi_major == DSH_ABI_MAJOR ? &provider : NULL;
}

/* The Python language's launch: `python -I -S -B bootstrap-python/process.py` with the message
 * and pending-call limits, the interpreter and bootstrap found like the Node carrier's (the
 * configured `python`, absolute or on PATH; the plugin's own bootstrap through the fs mapping
 * unless `bootstrapPath` names one in the subprocess world), and the hello's version gate. */
#include "python.h"
#include "frames.h"
#include "launch.h"
#include "own_files.h"

#include "dsh_strv.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>


int ptc__python_launch_argv(struct ptc_host *host, char ***ret_argv, char ***ret_env, struct dsh_error *err)
{
    const struct ptc_launch *launch = &host->config.launch;
    char python[PATH_MAX], bootstrap[PATH_MAX], message[64], pending[64];
    int rc = ptc__launch_resolve_executable(host, "python", launch->executable, python, sizeof python, err);
    if (rc < 0)
        return rc;
    if (launch->bootstrap_path)
        snprintf(bootstrap, sizeof bootstrap, "%s", launch->bootstrap_path);
    else if ((rc = ptc__launch_map_path(host, ptc__own_python_bootstrap(), bootstrap, sizeof bootstrap, err)) < 0)
        return rc;
    snprintf(message, sizeof message, "--max-message-bytes=%lld", (long long)host->config.max_message_bytes);
    snprintf(pending, sizeof pending, "--max-pending-calls=%lld", (long long)host->config.max_pending_calls);
    /* -I: no script directory, user site or PYTHON* variables; -S: no site-packages; -B: no
     * bytecode written into the bootstrap's directory. */
    const char *argv[] = {python, "-I", "-S", "-B", bootstrap, message, pending};
    char **out_argv = ptc__argv_dup(argv, sizeof argv / sizeof argv[0]), **out_env = ptc__argv_dup(NULL, 0);
    if (!out_argv || !out_env) {
        dsh_strv_free(out_argv);
        dsh_strv_free(out_env);
        return ptc__fail(err, -ENOMEM, "out of memory");
    }
    *ret_argv = out_argv;
    *ret_env = out_env;
    return 0;
}

bool ptc__python_hello_supported(const struct ptc_frame *hello, char *why, size_t why_len)
{
    int major = 0, minor = 0;
    if (hello->python && sscanf(hello->python, "%d.%d", &major, &minor) == 2 &&
        (major > PTC_MIN_PYTHON_MAJOR || (major == PTC_MIN_PYTHON_MAJOR && minor >= PTC_MIN_PYTHON_MINOR)))
        return true;
    snprintf(why, why_len, "Python %.40s is older than the supported %d.%d", hello->python ? hello->python : "(unknown)",
             PTC_MIN_PYTHON_MAJOR, PTC_MIN_PYTHON_MINOR);
    return false;
}

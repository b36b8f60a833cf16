/* dsh_strerror() and dsh_error_name() as exported functions, for hosts that call through an FFI
 * and cannot use the static inline definitions of dsh_abi.h. The inline ones stay the single
 * definition: they are included here under other names and wrapped. */
#define dsh_strerror dshx__inline_strerror
#define dsh_error_name dshx__inline_error_name
#include "dsh_abi.h"
#undef dsh_strerror
#undef dsh_error_name

#include "services_config.h"

DSHX_EXPORT const char *dsh_strerror(int code)
{
    return dshx__inline_strerror(code);
}

DSHX_EXPORT const char *dsh_error_name(int code)
{
    return dshx__inline_error_name(code);
}

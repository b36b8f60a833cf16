/* dsh host ABI v1 -- common definitions: versions, status codes, error details.
 *
 * Every function of the ABI returns an int: 0 (DSH_OK) or a positive count on success, a negative
 * errno value (-EINVAL, -ENOMEM, ...) for system-level failures, or one of the provider codes of
 * DSH_ERROR_TABLE below, which live in a reserved block under -DSH_ERROR_BASE.
 */
#ifndef DSH_ABI_H
#define DSH_ABI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DSH_ABI_MAJOR 1
#define DSH_ABI_MINOR 8

/* Provider codes are -(DSH_ERROR_BASE + n); errno values never reach this block. */
#define DSH_ERROR_BASE 4096

/* One table drives the enum, the short names and dsh_strerror().
 * X(ENUM_SUFFIX, n, "short-name", "description") */
#define DSH_ERROR_TABLE(X)                                                                         \
    X(CONFIG_INVALID, 1, "config-invalid", "the configuration row is invalid")                    \
    X(REQUEST_INVALID, 2, "request-invalid", "the request or spec is invalid")                    \
    X(UNSUPPORTED, 3, "unsupported", "the option or operation is not supported")                  \
    X(ABI_MISMATCH, 4, "abi-mismatch", "the host and provider ABI versions are incompatible")     \
    X(NOT_FOUND, 5, "not-found", "no such run, call, owner or registration")                      \
    X(OWNER_BUSY, 6, "owner-busy", "the state owner has a run or cleanup in progress")            \
    X(OWNER_INCONSISTENT, 7, "owner-inconsistent",                                                \
      "the state owner is bound to another mode, workspace root or session")                      \
    X(WRONG_MODE, 8, "wrong-mode", "the operation is not available in this execution mode")       \
    X(TOO_LATE, 9, "too-late", "the operation is only allowed before the first run is admitted") \
    X(DISPOSED, 10, "disposed", "the instance is unloading or was disposed")                      \
    X(SANDBOX_UNAVAILABLE, 11, "sandbox-unavailable",                                             \
      "the required confinement is not available")                                                \
    X(SPAWN_FAILED, 12, "spawn-failed", "the process could not be started")                       \
    X(NOT_MAPPED, 13, "not-mapped", "the host path has no execution-world mapping")               \
    X(CLEANUP_FAILED, 14, "cleanup-failed", "the managed process range could not be cleaned up")  \
    X(LIMIT, 15, "limit", "a configured limit was exceeded")                                      \
    X(PROTOCOL, 16, "protocol", "the peer violated the control protocol")                         \
    X(SCRIPT_INVALID, 17, "script-invalid", "the workflow script does not parse")

enum dsh_status {
    DSH_OK = 0,
#define DSH__ERROR_ENUM(suffix, n, short_name, text) DSH_E_##suffix = -(DSH_ERROR_BASE + (n)),
    DSH_ERROR_TABLE(DSH__ERROR_ENUM)
#undef DSH__ERROR_ENUM
};

/* Short, stable name of a provider code ("owner-busy"), or NULL for other values. */
static inline const char *dsh_error_name(int code)
{
    switch (code) {
#define DSH__ERROR_NAME(suffix, n, short_name, text)                                               \
    case DSH_E_##suffix:                                                                           \
        return short_name;
        DSH_ERROR_TABLE(DSH__ERROR_NAME)
#undef DSH__ERROR_NAME
    default:
        return NULL;
    }
}

/* Human-readable text for any status: provider codes, negative errno values and DSH_OK.
 * The returned string is static (never free it). */
static inline const char *dsh_strerror(int code)
{
    switch (code) {
    case DSH_OK:
        return "success";
#define DSH__ERROR_TEXT(suffix, n, short_name, text)                                               \
    case DSH_E_##suffix:                                                                           \
        return text;
        DSH_ERROR_TABLE(DSH__ERROR_TEXT)
#undef DSH__ERROR_TEXT
    default:
        return code < 0 ? strerror(-code) : "success";
    }
}

/* Error details. Caller-owned storage: the callee fills it when it returns a negative status and
 * leaves it untouched otherwise. Functions accept NULL when the caller wants only the code. */
#define DSH_ERROR_MESSAGE_MAX 1024
struct dsh_error {
    int32_t code;
    char message[DSH_ERROR_MESSAGE_MAX]; /* NUL-terminated UTF-8 */
};

/* Fills err (when not NULL) with code and a formatted message; returns code, so that
 * `return dsh_error_setf(err, DSH_E_..., "...")` reports and fails in one step. */
static inline __attribute__((format(printf, 3, 4))) int dsh_error_setf(struct dsh_error *err, int code,
                                                                       const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Every ABI struct starts with struct_size: the bytes its writer filled. Records a caller fills
 * for one call (callbacks, spawn requests, confinements, process handles) carry only that;
 * tables and services (vtables, the provider table, the services bundle) add the version they
 * were built against. Both start at offset 0, so DSH_HAS applies to every struct. */
#define DSH_RECORD_HEADER uint32_t struct_size
#define DSH_STRUCT_HEADER                                                                          \
    DSH_RECORD_HEADER;                                                                             \
    uint16_t abi_major;                                                                            \
    uint16_t abi_minor

/* True when ptr is non-NULL and its writer's struct_size covers field: the field exists in the
 * writer's minor version and may be read. Check it before touching any appended field. (1.1; the
 * two header macros above name the 1.0 layout and change nothing.) */
#define DSH_HAS(ptr, field)                                                                        \
    ((ptr) != NULL && (size_t)(ptr)->struct_size >=                                               \
                          (size_t)((const char *)&(ptr)->field - (const char *)(ptr)) + sizeof((ptr)->field))

#ifdef __cplusplus
}
#endif

#endif /* DSH_ABI_H */

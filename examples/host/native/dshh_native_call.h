/* Answers calls of the native namespaces (dshh_native_bindings.h): checked argument conversion,
 * ffi_call on the calling (host) thread, lossless result text. */
#ifndef DSHH_NATIVE_CALL_H
#define DSHH_NATIVE_CALL_H

#include "dshh_native_bindings.h"

/* The answer to one call: ok with JSON text (NULL: undefined), or a rejection message. */
struct dshh_native_answer {
    bool ok;
    char *text; /* malloc'd, NUL-terminated; free with free() */
    size_t len;
};

/* Calls global.name with args_json (the JSON array of the program's arguments). Returns false,
 * leaving ret untouched, when global is no namespace of set. */
bool dshh__native_call(const struct dshh_native_set *set, const char *global, const char *name,
                       const char *args_json, size_t args_len, struct dshh_native_answer *ret);

#endif

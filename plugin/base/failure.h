/* The closed vocabulary of run failure kinds (host-abi/schemas/result.json, `error.kind`), from
 * one table: the enum, the wire names and which kinds only the program itself can cause. */
#ifndef PTC_FAILURE_H
#define PTC_FAILURE_H

#include <stdbool.h>
#include <string.h>

/* X(SUFFIX, "kind", by_program): by_program kinds are the ones a child may report in its result
 * frame; they settle an evaluation the way a success does. */
#define PTC_FAILURE_TABLE(X)                                                                       \
    X(EXCEPTION, "exception", true)                                                                \
    X(INVALID_OUTPUT, "invalid-output", true)                                                      \
    X(TIMEOUT, "timeout", false)                                                                   \
    X(ABORT, "abort", false)                                                                       \
    X(OUTPUT_LIMIT, "output-limit", false)                                                         \
    X(PROTOCOL, "protocol", false)                                                                 \
    X(WORKER_EXIT, "worker-exit", false)                                                           \
    X(SANDBOX_UNAVAILABLE, "sandbox-unavailable", false)

enum ptc_failure {
    PTC_FAILURE_NONE, /* the run succeeded */
#define PTC__FAILURE_ENUM(suffix, name, by_program) PTC_FAILURE_##suffix,
    PTC_FAILURE_TABLE(PTC__FAILURE_ENUM)
#undef PTC__FAILURE_ENUM
};

/* "exception", ...; NULL for PTC_FAILURE_NONE. */
static inline const char *ptc_failure_name(enum ptc_failure kind)
{
    switch (kind) {
#define PTC__FAILURE_NAME(suffix, name, by_program)                                                \
    case PTC_FAILURE_##suffix:                                                                     \
        return name;
        PTC_FAILURE_TABLE(PTC__FAILURE_NAME)
#undef PTC__FAILURE_NAME
    default:
        return NULL;
    }
}

/* The kind a child may name in its result frame, or PTC_FAILURE_NONE for any other text. */
static inline enum ptc_failure ptc_failure_reported_by_child(const char *name)
{
#define PTC__FAILURE_CHILD(suffix, name_, by_program)                                              \
    if (by_program && strcmp(name, name_) == 0)                                                    \
        return PTC_FAILURE_##suffix;
    PTC_FAILURE_TABLE(PTC__FAILURE_CHILD)
#undef PTC__FAILURE_CHILD
    return PTC_FAILURE_NONE;
}

/* Success or a failure of the program itself (not of the run around it). */
static inline bool ptc_outcome_by_program(enum ptc_failure kind)
{
    switch (kind) {
    case PTC_FAILURE_NONE:
        return true;
#define PTC__FAILURE_BY_PROGRAM(suffix, name, by_program)                                          \
    case PTC_FAILURE_##suffix:                                                                     \
        return by_program;
        PTC_FAILURE_TABLE(PTC__FAILURE_BY_PROGRAM)
#undef PTC__FAILURE_BY_PROGRAM
    }
    return false;
}

#endif

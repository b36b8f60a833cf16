/* The result JSON of a run (result.c; DESIGN section 5, host-abi/schemas/result.json), built
 * from a settled outcome. Knows nothing of runs: the caller fills struct ptc_result. */
#ifndef PTC_RESULT_H
#define PTC_RESULT_H

#include "dsh_services.h"
#include "failure.h"
#include "ledger.h"

struct ptc_result {
    enum ptc_failure kind; /* PTC_FAILURE_NONE: ok */
    const char *message;   /* NULL: the kind's name */
    char *value;           /* JSON text, taken over (freed once spliced); with has_value */
    size_t value_len;
    bool has_value;
    struct ptc_ledger *ledger; /* its entries are consumed (ptc__ledger_take_json) */
    const char *mode; /* the run's sandbox mode */
    const struct dsh_sandbox_service *sandbox;
    const struct dsh_confinement *confinement; /* NULL when nothing was confined */
    const char *retained_owner;                /* NULL: no `retained` member */
    const char *retained_state;                /* "preserved" | "cleared" */
    const char *released_reason;  /* `retained.released`: why the owner's earlier environment was released; NULL: none */
    const char *released_message;
};

/* The result text, or NULL when out of memory; it lies inside *ret_block, which the caller
 * frees. Empties the ledger. */
char *ptc__result_json(const struct ptc_result *result, size_t *ret_len, void **ret_block);

#endif

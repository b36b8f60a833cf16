/* The Node language's constants that tests check against (node_entry.c). */
#ifndef PTC_NODE_ENTRY_H
#define PTC_NODE_ENTRY_H

/* The constant program a prewarmed Node process evaluates twice before it serves one
 * (base/language.h, warm_up_program). */
extern const char ptc__node_warm_up_program[];

/* The warm-up's binding (base/language.h, warm_up_binding_*) and its calls per evaluation; the
 * two evaluations' calls stay within env/'s PTC_WARM_UP_CALLS_MAX. */
#define PTC_NODE_WARM_UP_GLOBAL "ptcWarmUp"
#define PTC_NODE_WARM_UP_FUNCTION "echo"
#define PTC_NODE_WARM_UP_CALLS 30

#endif

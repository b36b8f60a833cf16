/* The Node language's constants that tests check against (node_entry.c). */
#ifndef PTC_NODE_ENTRY_H
#define PTC_NODE_ENTRY_H

/* The constant program a prewarmed Node process evaluates twice before it serves one
 * (base/language.h, warm_up_program). */
extern const char ptc__node_warm_up_program[];

#endif

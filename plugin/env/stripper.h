/* Type strippers (stripper.c): one long-lived, confined Node process per session that runs only
 * bootstrap/stripper.js, so a per-call child never loads amaro. Everything a stripper sends is
 * untrusted: answers are framed with maxMessageBytes bounds and every stripped text is checked
 * against the strip invariant (base/strip_check.h) before anyone sees it.
 *
 *   CONFINING --confined + spawned--> STARTING --ready--> READY
 *        any state --close (LRU, loss, refusal, unload)--> CLOSING --quiescent--> freed
 *
 * Answers reach the requester through its ptc_strip_done_fn, always from the loop, exactly once
 * unless the request was cancelled. Only this file writes the structs below. */
#ifndef PTC_STRIPPER_H
#define PTC_STRIPPER_H

#include "ptc_host.h"

#include <stdbool.h>
#include <stddef.h>

/* Strippers alive at once (one per session, least recently used closed first). */
#define PTC_STRIPPERS_MAX 4
/* How long a request may wait for its answer, stripper start-up included; then the child strips. */
#define PTC_STRIPPER_ANSWER_MS 5000

enum ptc_strip_answer {
    /* text: the stripped program, checked against the strip invariant. */
    PTC_STRIP_ANSWER_CODE,
    /* The stripper could not answer (it cannot be started, exited or timed out, or there was no
     * memory for its answer): the child strips the program, as without a stripper. text: why, for
     * the log. */
    PTC_STRIP_ANSWER_IN_CHILD,
    /* The stripper found a syntax error or TypeScript it cannot erase: text is its message,
     * formatted for the name `[program]` (bootstrap/stripper-loop.js). The child reports it instead
     * of stripping (bootstrap/PROTOCOL.md, `syntaxError`), so it never loads amaro for it. */
    PTC_STRIP_ANSWER_SYNTAX_ERROR,
    /* The stripper broke its protocol or the strip invariant: text is the protocol failure. */
    PTC_STRIP_ANSWER_REFUSED,
};

typedef void (*ptc_strip_done_fn)(void *arg, enum ptc_strip_answer answer, const char *text, size_t len);

struct ptc_stripper;
struct ptc_strip_request;

struct ptc_strippers {
    struct ptc_host *host;
    struct ptc_stripper *head;
    uint64_t tick;      /* least-recently-used clock */
    bool shutting_down; /* unload: no new stripper starts */
};

void ptc__strippers_init(struct ptc_strippers *set, struct ptc_host *host);
/* Starts and warms the stripper of the host's default session (load), so the first program does
 * not wait for amaro's compile. Does nothing for a language without a stripper. */
void ptc__strippers_prestart(struct ptc_strippers *set);
/* Asks the session's stripper (started if needed) to strip program in format. NULL when no
 * stripper can take it (the language has none, every stripper slot is busy, out of memory): the
 * child strips. */
struct ptc_strip_request *ptc__strip_request(struct ptc_strippers *set, const char *session_id, const char *format,
                                             const char *program, ptc_strip_done_fn done, void *arg);
/* True when request's answer is in or its stripper is warm (ready), so it comes within a round
 * trip; false while the stripper still starts, when the child strips sooner itself. */
bool ptc__strip_imminent(const struct ptc_strip_request *request);
/* Strippers that are warm and serving (tests). */
unsigned ptc__strippers_ready(const struct ptc_strippers *set);
/* done will not be called for request (its requester is going away, or stopped waiting). */
void ptc__strip_cancel(struct ptc_strip_request *request);
/* Unload: closes every stripper; none starts any more. */
void ptc__strippers_shutdown(struct ptc_strippers *set);
/* True while a stripper's range is not yet quiescent (unload waits). */
bool ptc__strippers_closing(const struct ptc_strippers *set);
/* Frees whatever is left; releasing a process kills and waits for its range. */
void ptc__strippers_destroy_all(struct ptc_strippers *set);

#endif

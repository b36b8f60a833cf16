/* Whether a program's text may hold TypeScript (type_marks.c), decided on its bytes alone, before
 * the program reaches a retained owner: such a program goes through the session's type stripper,
 * so that the owner never loads amaro to strip it (bootstrap/README.md, "Where types are
 * stripped"). libc only. */
#ifndef PTC_TYPE_MARKS_H
#define PTC_TYPE_MARKS_H

#include <stdbool.h>
#include <stddef.h>

/* True when program[0..len) has a mark of TypeScript that JavaScript reads differently or not at
 * all (bootstrap/plain-javascript.js lists them): a `:` or a `<`; a `?` outside `?.`, `??` and
 * `??=`; a `!` right after a name character, `)` or `]` that does not start `!=`; or one of
 * TypeScript's own words as a whole word (as, satisfies, type, interface, enum, namespace,
 * declare, abstract, implements, private, protected, public, readonly, override). Strings and
 * comments are not told apart: a mark there costs a round trip to the stripper, never a wrong
 * program. False for everything else, which an owner runs as it is or, if its parser refuses it
 * (a syntax error), strips itself. */
bool ptc__program_may_have_types(const char *program, size_t len);

#endif

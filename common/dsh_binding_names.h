/* Portable binding names: one binding declaration is valid for every program language the
 * providers run (JavaScript/TypeScript and Python), so resolve refuses, for both providers, the
 * names either language or either runtime reserves. */
#ifndef DSH_BINDING_NAMES_H
#define DSH_BINDING_NAMES_H

#include <stdbool.h>

/* Where a name appears in a binding declaration. */
enum dsh_binding_name_role {
    DSH_BINDING_GLOBAL,      /* bindings[].global: a global of the program */
    DSH_BINDING_FUNCTION,    /* bindings[].functions[]: a member of the namespace */
    DSH_BINDING_ERROR_CLASS, /* bindings[].errorClass: a global of the program */
};

/* NULL when name is usable in role, else why not ("is a reserved word in JavaScript or Python"). */
const char *dsh_binding_name_problem(enum dsh_binding_name_role role, const char *name);

/* ASCII letters, digits and _, not starting with a digit: an identifier in both languages. */
bool dsh_is_portable_identifier(const char *s);

#endif

/* Portable binding names: one binding declaration is valid for every program language the
 * providers run (JavaScript/TypeScript and Python), so resolve refuses, for both providers, the
 * names either language or either runtime reserves. */
#ifndef PTC_BINDING_NAMES_H
#define PTC_BINDING_NAMES_H

/* Where a name appears in a binding declaration. */
enum ptc_binding_name_role {
    PTC_BINDING_GLOBAL,      /* bindings[].global: a global of the program */
    PTC_BINDING_FUNCTION,    /* bindings[].functions[]: a member of the namespace */
    PTC_BINDING_ERROR_CLASS, /* bindings[].errorClass: a global of the program */
};

/* NULL when name is usable in role, else why not ("is a reserved word in JavaScript or Python"). */
const char *ptc__binding_name_problem(enum ptc_binding_name_role role, const char *name);

#endif

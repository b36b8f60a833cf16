/* A run's result and output for a person (dshh_result_print.c). */
#ifndef DSHH_RESULT_PRINT_H
#define DSHH_RESULT_PRINT_H

#include "dsh_json_strict.h"
#include "dshh_usage.h" /* the exit statuses dshh__print_result returns */

#include <stdbool.h>
#include <stdio.h>

struct json_object;
/* Where printing output for a person stands: the image line rules need the previous entry. */
struct dshh_output_printer {
    bool at_line_start; /* start with true */
    bool after_image;
};
/* Prints one output entry ({"type":"text"|"image",...}) for a person. */
void dshh__print_entry(struct dshh_output_printer *printer, struct json_object *entry, FILE *out);
/* The node budget of a result's envelope (all but its value, which stays text) of len bytes: an
 * output entry takes at least a dozen bytes for its three nodes. */
#define DSHH_RESULT_MAX_NODES(len) (DSH_JSON_ENVELOPE_MAX_NODES + (len) / 4)
/* Prints a result for a person; returns the exit status it implies. With live (the printer that
 * already printed the output as it arrived) only the value and the error are printed. */
int dshh__print_result(const char *result_json, size_t len, struct dshh_output_printer *live, FILE *out,
                       FILE *err);

#endif

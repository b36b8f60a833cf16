/* A run result printed for a person:
 *   output text as-is, images as "[image <attachmentId> <width>x<height> <path>]",
 *   then the value (if any) as JSON, then on failure "error (<kind>): <message>" on stderr,
 *   and a note when the sandbox denied an operation. */
#include "dsh_json_get.h"
#include "dsh_json_strict.h"
#include "dshh_result_print.h"

#include <json-c/json.h>
#include <string.h>

static const char *str_field(json_object *obj, const char *key, const char *fallback)
{
    const char *v = dsh_json_get_string(obj, key, NULL);
    return v ? v : fallback;
}

static const char *num_field(json_object *obj, const char *key)
{
    json_object *v = dsh_json_member(obj, key);
    if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
        return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    return "?";
}

void dshh__print_entry(struct dshh_output_printer *p, json_object *e, FILE *out)
{
    const char *type = str_field(e, "type", "");
    size_t n;
    const char *t = dsh_json_get_string(e, "text", &n);
    if (!strcmp(type, "text") && t) {
        /* The image line already ended the line that inspect() ends after an image. */
        if (p->after_image && n && t[0] == '\n') {
            t++;
            n--;
        }
        p->after_image = false;
        fwrite(t, 1, n, out);
        if (n)
            p->at_line_start = t[n - 1] == '\n';
    } else if (!strcmp(type, "image")) {
        p->after_image = true;
        /* Two-step: num_field returns json-c's per-object buffer, so one call each. */
        if (!p->at_line_start)
            fputc('\n', out);
        fprintf(out, "[image %s ", str_field(e, "attachmentId", "?"));
        fprintf(out, "%sx", num_field(e, "width"));
        fprintf(out, "%s %s]\n", num_field(e, "height"), str_field(e, "path", "?"));
        p->at_line_start = true;
    }
}

int dshh__print_result(const char *result_json, size_t len, struct dshh_output_printer *live, FILE *out,
                       FILE *err)
{
    /* The value is printed as the text the provider returned: never a tree (a deep or large
     * value would take many times its size), and numbers keep their text. */
    static const char *const raw[] = {"value", NULL};
    struct dsh_json_slice value;
    json_object *result = dsh_json_parse_envelope(result_json, len, raw, &value, DSHH_RESULT_MAX_NODES(len));
    if (!result) {
        fprintf(err, "dsh: the provider returned an invalid result: %.*s\n", (int)len, result_json);
        json_object_put(result);
        return DSHH_EXIT_FAILURE;
    }
    struct dshh_output_printer printer = {.at_line_start = true};
    struct dshh_output_printer *p = live ? live : &printer;
    json_object *output = dsh_json_get_array(result, "output");
    /* Printed live already: the result's output is the same entries. */
    if (!live && output)
        for (size_t i = 0; i < json_object_array_length(output); i++)
            dshh__print_entry(p, json_object_array_get_idx(output, i), out);
    bool at_line_start = p->at_line_start;
    if (value.text) {
        if (!at_line_start)
            fputc('\n', out);
        fwrite(value.text, 1, value.len, out);
        fputc('\n', out);
    }
    fflush(out);
    bool ok = false, denied = false;
    int status = DSHH_EXIT_OK;
    if (!dsh_json_get_bool(result, "ok", &ok) || !ok) {
        json_object *error = dsh_json_get_object(result, "error");
        fprintf(err, "error (%s): %s\n", str_field(error, "kind", "unknown"),
                str_field(error, "message", ""));
        status = DSHH_EXIT_FAILURE;
    }
    /* Independent of the outcome: a program may catch the denial and still succeed. */
    json_object *sandbox = dsh_json_get_object(result, "sandbox");
    if (dsh_json_get_bool(sandbox, "denied", &denied) && denied)
        fprintf(err, "note: the sandbox (%s) denied an operation of the program\n",
                str_field(sandbox, "mode", "?"));
    json_object_put(result);
    return status;
}

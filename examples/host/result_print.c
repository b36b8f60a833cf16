/* A run result printed for a person:
 *   output text as-is, images as "[image <attachmentId> <width>x<height> <path>]",
 *   then the value (if any) as JSON, then on failure "error (<kind>): <message>" on stderr,
 *   and a note when the sandbox denied an operation. */
#include "dsh_json_strict.h"
#include "dshh.h"

#include "dsh_json_strict.h"

#include <json-c/json.h>
#include <string.h>

static const char *str_field(json_object *obj, const char *key, const char *fallback)
{
    json_object *v;
    if (json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return fallback;
}

static const char *num_field(json_object *obj, const char *key)
{
    json_object *v;
    if (json_object_object_get_ex(obj, key, &v) &&
        (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
        return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    return "?";
}

void dshh__print_entry(struct dshh_output_printer *p, json_object *e, FILE *out)
{
    const char *type = str_field(e, "type", "");
    json_object *v;
    if (!strcmp(type, "text") && json_object_object_get_ex(e, "text", &v)) {
        size_t n = (size_t)json_object_get_string_len(v);
        const char *t = json_object_get_string(v);
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
    json_object *result = dsh_json_parse_strict_value(result_json, len);
    if (!json_object_is_type(result, json_type_object)) {
        fprintf(err, "dsh: the provider returned an invalid result: %.*s\n", (int)len, result_json);
        json_object_put(result);
        return DSHH_EXIT_FAILURE;
    }
    struct dshh_output_printer printer = {.at_line_start = true};
    struct dshh_output_printer *p = live ? live : &printer;
    json_object *output, *v;
    /* Printed live already: the result's output is the same entries. */
    if (!live && json_object_object_get_ex(result, "output", &output) &&
        json_object_is_type(output, json_type_array))
        for (size_t i = 0; i < json_object_array_length(output); i++)
            dshh__print_entry(p, json_object_array_get_idx(output, i), out);
    bool at_line_start = p->at_line_start;
    if (json_object_object_get_ex(result, "value", &v)) {
        if (!at_line_start)
            fputc('\n', out);
        /* json-c keeps a parsed number's original text, so the value prints losslessly. */
        fprintf(out, "%s\n",
                json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS));
    }
    fflush(out);
    json_object *ok;
    int status = DSHH_EXIT_OK;
    if (!json_object_object_get_ex(result, "ok", &ok) || !json_object_get_boolean(ok)) {
        json_object *error = NULL;
        json_object_object_get_ex(result, "error", &error);
        fprintf(err, "error (%s): %s\n", str_field(error, "kind", "unknown"),
                str_field(error, "message", ""));
        status = DSHH_EXIT_FAILURE;
    }
    /* Independent of the outcome: a program may catch the denial and still succeed. */
    json_object *sandbox, *denied;
    if (json_object_object_get_ex(result, "sandbox", &sandbox) &&
        json_object_object_get_ex(sandbox, "denied", &denied) && json_object_get_boolean(denied))
        fprintf(err, "note: the sandbox (%s) denied an operation of the program\n",
                str_field(sandbox, "mode", "?"));
    json_object_put(result);
    return status;
}

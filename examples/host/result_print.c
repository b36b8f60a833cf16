/* A run result printed for a person:
 *   output text as-is, images as "[image <attachmentId> <width>x<height> <path>]",
 *   then the value (if any) as JSON, then on failure "error (<kind>): <message>" on stderr,
 *   and a note when the sandbox denied an operation. */
#include "dsh_json_strict.h"
#include "dshh.h"

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

int dshh__print_result(const char *result_json, size_t len, FILE *out, FILE *err)
{
    json_tokener *tok = json_tokener_new();
    json_object *result = tok ? json_tokener_parse_ex(tok, result_json, (int)len) : NULL;
    json_tokener_free(tok);
    if (!json_object_is_type(result, json_type_object)) {
        fprintf(err, "dsh: the provider returned an invalid result: %.*s\n", (int)len, result_json);
        json_object_put(result);
        return DSHH_EXIT_FAILURE;
    }
    bool at_line_start = true, after_image = false;
    json_object *output, *v;
    if (json_object_object_get_ex(result, "output", &output) &&
        json_object_is_type(output, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(output); i++) {
            json_object *e = json_object_array_get_idx(output, i);
            const char *type = str_field(e, "type", "");
            if (!strcmp(type, "text") && json_object_object_get_ex(e, "text", &v)) {
                size_t n = (size_t)json_object_get_string_len(v);
                const char *t = json_object_get_string(v);
                /* The image line already ended the line that inspect() ends after an image. */
                if (after_image && n && t[0] == '\n') {
                    t++;
                    n--;
                }
                after_image = false;
                fwrite(t, 1, n, out);
                if (n)
                    at_line_start = t[n - 1] == '\n';
            } else if (!strcmp(type, "image")) {
                after_image = true;
                /* Two-step: num_field returns json-c's per-object buffer, so one call each. */
                if (!at_line_start)
                    fputc('\n', out);
                fprintf(out, "[image %s ", str_field(e, "attachmentId", "?"));
                fprintf(out, "%sx", num_field(e, "width"));
                fprintf(out, "%s %s]\n", num_field(e, "height"), str_field(e, "path", "?"));
                at_line_start = true;
            }
        }
    }
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

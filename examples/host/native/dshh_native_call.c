/* Calls of native functions (native_call.h). Every argument is converted exactly or the call is
 * rejected with a message naming the argument; every result crosses as lossless JSON text or the
 * call is rejected. The function runs on the host thread: the host serves nothing else meanwhile,
 * which is why maxCallMs makes a slow call visible. */
#include "dshh_native_call.h"

#include "dsh_json_strict.h"
#include "dsh_provider.h"

#include <errno.h>
#include <float.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Integers beyond +-(2^53 - 1) cross as strings of their exact digits: JavaScript's JSON.parse
 * would read such number text as the nearest double. */
#define JS_SAFE_INTEGER 9007199254740991ULL

struct call {
    const struct dshh_native_ns *ns;
    const struct dshh_native_fn *fn;
    struct dshh_native_answer *answer;
};

static bool answer_text(struct call *c, bool ok, const char *text, size_t len)
{
    c->answer->ok = ok;
    c->answer->text = NULL;
    c->answer->len = 0;
    if (text && !(c->answer->text = strndup(text, len))) {
        c->answer->ok = false;
        c->answer->text = strdup("dsh: out of memory");
    }
    c->answer->len = c->answer->text ? strlen(c->answer->text) : 0;
    return ok;
}

/* Rejects the call with "global.name: <problem>". */
static bool reject(struct call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool reject(struct call *c, const char *fmt, ...)
{
    char message[1024];
    int n = snprintf(message, sizeof message, "%s.%s: ", c->ns->global, c->fn->name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message + n, sizeof message - (size_t)n, fmt, ap);
    va_end(ap);
    answer_text(c, false, message, strlen(message));
    return false;
}

static const char *json_type_word(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return "null";
    case json_type_boolean: return "a boolean";
    case json_type_double:
    case json_type_int: return "a number";
    case json_type_string: return "a string";
    case json_type_array: return "an array";
    case json_type_object: return "an object";
    }
    return "?";
}

/* ---- integers ----------------------------------------------------------------------------------- */
/* A string of decimal digits ("-?(0|[1-9][0-9]*)"), accepted for int64 and uint64. */
static bool is_digit_string(const char *s)
{
    s += *s == '-';
    if (s[0] == '0')
        return s[1] == '\0';
    if (*s < '1' || *s > '9')
        return false;
    while (*s >= '0' && *s <= '9')
        s++;
    return *s == '\0';
}

static void integer_range(enum dshh_native_type t, uint64_t *ret_negative_max, uint64_t *ret_max)
{
    switch (t) {
    case DSHH_NATIVE_INT8: *ret_negative_max = 128, *ret_max = INT8_MAX; return;
    case DSHH_NATIVE_INT16: *ret_negative_max = 32768, *ret_max = INT16_MAX; return;
    case DSHH_NATIVE_INT32: *ret_negative_max = 2147483648ULL, *ret_max = INT32_MAX; return;
    case DSHH_NATIVE_INT64:
        *ret_negative_max = 9223372036854775808ULL, *ret_max = INT64_MAX;
        return;
    case DSHH_NATIVE_UINT8: *ret_negative_max = 0, *ret_max = UINT8_MAX; return;
    case DSHH_NATIVE_UINT16: *ret_negative_max = 0, *ret_max = UINT16_MAX; return;
    case DSHH_NATIVE_UINT32: *ret_negative_max = 0, *ret_max = UINT32_MAX; return;
    default: *ret_negative_max = 0, *ret_max = UINT64_MAX; return;
    }
}

static bool is_signed_type(enum dshh_native_type t)
{
    return t == DSHH_NATIVE_INT8 || t == DSHH_NATIVE_INT16 || t == DSHH_NATIVE_INT32 ||
           t == DSHH_NATIVE_INT64;
}

/* ---- arguments ---------------------------------------------------------------------------------- */
union slot {
    uint8_t b;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f;
    double d;
    const char *text;
};

/* The exact integer a number or a digit string stands for: sign and magnitude. A number is
 * the double JSON.parse reads from its text (what the program held), so 2**62, sent as
 * "4611686018427388000", is 4611686018427387904. */
enum integer_status { INTEGER_OK, INTEGER_FRACTION, INTEGER_RANGE, INTEGER_NOT_DIGITS };

static enum integer_status integer_value(json_object *v, const char *text, uint64_t negative_max,
                                         uint64_t max, bool *ret_negative, uint64_t *ret_magnitude)
{
    if (json_object_is_type(v, json_type_string)) {
        if (!is_digit_string(text))
            return INTEGER_NOT_DIGITS;
        *ret_negative = text[0] == '-';
        errno = 0;
        *ret_magnitude = strtoull(text + *ret_negative, NULL, 10);
        if (errno == ERANGE)
            return INTEGER_RANGE;
    } else {
        double d = strtod(text, NULL);
        if (d != trunc(d))
            return INTEGER_FRACTION;
        *ret_negative = d < 0;
        /* (double)max + 1 is max + 1 exactly, or the power of two max rounds up to. */
        if (*ret_negative ? -d > (double)negative_max : d >= (double)max + 1.0)
            return INTEGER_RANGE;
        *ret_magnitude = (uint64_t)fabs(d);
    }
    if (*ret_negative ? *ret_magnitude > negative_max : *ret_magnitude > max)
        return INTEGER_RANGE;
    return INTEGER_OK;
}

static bool convert_integer(struct call *c, const struct dshh_native_arg *a, json_object *v,
                            union slot *slot)
{
    bool wide = a->type == DSHH_NATIVE_INT64 || a->type == DSHH_NATIVE_UINT64;
    bool is_string = json_object_is_type(v, json_type_string);
    if (!(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double) ||
          (wide && is_string)))
        return reject(c, "argument %s: expected %s%s, got %s", a->name,
                      dshh__native_type_name(a->type),
                      wide ? " (a number or a string of decimal digits)" : "", json_type_word(v));
    const char *text = is_string ? json_object_get_string(v)
                                 : json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS);
    bool negative = false;
    uint64_t magnitude = 0, negative_max, max;
    integer_range(a->type, &negative_max, &max);
    switch (integer_value(v, text, negative_max, max, &negative, &magnitude)) {
    case INTEGER_NOT_DIGITS:
        return reject(c, "argument %s: \"%.40s\" is not a string of decimal digits", a->name, text);
    case INTEGER_FRACTION:
        return reject(c, "argument %s: %.40s is not an integer (%s)", a->name, text,
                      dshh__native_type_name(a->type));
    case INTEGER_RANGE:
        if (is_signed_type(a->type))
            return reject(c, "argument %s: %.40s is out of range for %s (-%llu..%llu)", a->name,
                          text, dshh__native_type_name(a->type), (unsigned long long)negative_max,
                          (unsigned long long)max);
        return reject(c, "argument %s: %.40s is out of range for %s (0..%llu)", a->name, text,
                      dshh__native_type_name(a->type), (unsigned long long)max);
    case INTEGER_OK: break;
    }
    /* In range: the two's complement of the magnitude is the value (also for INT64_MIN). */
    uint64_t bits = negative ? 0 - magnitude : magnitude;
    switch (a->type) {
    case DSHH_NATIVE_INT8: slot->i8 = (int8_t)bits; break;
    case DSHH_NATIVE_INT16: slot->i16 = (int16_t)bits; break;
    case DSHH_NATIVE_INT32: slot->i32 = (int32_t)bits; break;
    case DSHH_NATIVE_INT64: slot->i64 = (int64_t)bits; break;
    case DSHH_NATIVE_UINT8: slot->u8 = (uint8_t)bits; break;
    case DSHH_NATIVE_UINT16: slot->u16 = (uint16_t)bits; break;
    case DSHH_NATIVE_UINT32: slot->u32 = (uint32_t)bits; break;
    default: slot->u64 = bits; break;
    }
    return true;
}

static bool convert_arg(struct call *c, const struct dshh_native_arg *a, json_object *v,
                        union slot *slot)
{
    switch (a->type) {
    case DSHH_NATIVE_BOOL:
        if (!json_object_is_type(v, json_type_boolean))
            return reject(c, "argument %s: expected bool, got %s", a->name, json_type_word(v));
        slot->b = json_object_get_boolean(v) ? 1 : 0;
        return true;
    case DSHH_NATIVE_FLOAT:
    case DSHH_NATIVE_DOUBLE: {
        if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
            return reject(c, "argument %s: expected %s, got %s", a->name,
                          dshh__native_type_name(a->type), json_type_word(v));
        /* strtod of the number's own text rounds correctly, so a value a program sent (its
         * shortest text) becomes exactly its double again. */
        const char *text = json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS);
        double d = strtod(text, NULL);
        if (!isfinite(d) || (a->type == DSHH_NATIVE_FLOAT && fabs(d) > FLT_MAX))
            return reject(c, "argument %s: %.40s is out of range for %s", a->name, text,
                          dshh__native_type_name(a->type));
        if (a->type == DSHH_NATIVE_FLOAT)
            slot->f = (float)d; /* the nearest float, as C converts a double argument */
        else
            slot->d = d;
        return true;
    }
    case DSHH_NATIVE_STRING:
        if (!json_object_is_type(v, json_type_string))
            return reject(c, "argument %s: expected string, got %s", a->name, json_type_word(v));
        slot->text = json_object_get_string(v);
        if (strlen(slot->text) != (size_t)json_object_get_string_len(v))
            return reject(c, "argument %s: contains a NUL character", a->name);
        return true;
    case DSHH_NATIVE_JSON:
        /* The strict parser kept every number's text, so this is the program's value exactly. */
        slot->text = json_object_to_json_string_ext(v, DSH_JSON_PRINT_FLAGS);
        return true;
    default: return convert_integer(c, a, v, slot);
    }
}

/* The named-argument object of a call: args must be [] (no arguments declared) or [object]. */
static bool argument_object(struct call *c, json_object *args, json_object **ret_object)
{
    size_t n = json_object_array_length(args);
    *ret_object = n == 1 ? json_object_array_get_idx(args, 0) : NULL;
    if (n == 0 && c->fn->nargs == 0)
        return true;
    if (n == 1 && json_object_is_type(*ret_object, json_type_object))
        return true;
    char names[512] = "";
    size_t o = 0;
    for (size_t i = 0; i < c->fn->nargs && o < sizeof names; i++)
        o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "",
                              c->fn->args[i].name);
    if (n != 1)
        return reject(c, "expects one object of named arguments {%s}, got %zu arguments", names, n);
    return reject(c, "expects one object of named arguments {%s}, got %s", names,
                  json_type_word(*ret_object));
}

static bool convert_args(struct call *c, json_object *object, union slot *slots, void **values)
{
    for (size_t i = 0; i < c->fn->nargs; i++) {
        const struct dshh_native_arg *a = &c->fn->args[i];
        json_object *v;
        if (!object || !json_object_object_get_ex(object, a->name, &v))
            return reject(c, "missing argument %s (%s)", a->name, dshh__native_type_name(a->type));
        if (!convert_arg(c, a, v, &slots[i]))
            return false;
        values[i] = &slots[i];
    }
    if (object) {
        json_object_object_foreach(object, key, val)
        {
            (void)val;
            size_t i = 0;
            while (i < c->fn->nargs && strcmp(c->fn->args[i].name, key) != 0)
                i++;
            if (i == c->fn->nargs)
                return reject(c, "unknown argument %.200s", key);
        }
    }
    return true;
}

/* ---- results ------------------------------------------------------------------------------------ */
union result {
    ffi_arg unsigned_int; /* libffi widens integer results to a whole ffi_arg */
    ffi_sarg signed_int;
    float f;
    double d;
    void *pointer;
};

static bool integer_result(struct call *c, bool negative, uint64_t magnitude)
{
    char text[32];
    /* Beyond the JSON-safe range: the exact digits as a string (see JS_SAFE_INTEGER). */
    bool quoted = magnitude > JS_SAFE_INTEGER;
    snprintf(text, sizeof text, "%s%s%llu%s", quoted ? "\"" : "", negative ? "-" : "",
             (unsigned long long)magnitude, quoted ? "\"" : "");
    return answer_text(c, true, text, strlen(text));
}

static bool signed_result(struct call *c, int64_t v)
{
    return integer_result(c, v < 0, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

static bool double_result(struct call *c, double d)
{
    if (isnan(d))
        return reject(c, "the result NaN is not lossless JSON");
    if (isinf(d))
        return reject(c, "the result %sInfinity is not lossless JSON", d < 0 ? "-" : "");
    /* -0 crosses as the text "-0", which JSON.parse reads as -0 (host-abi/ABI.md, "Values"). */
    if (d == 0 && signbit(d))
        return answer_text(c, true, "-0", 2);
    /* The first of 15, 16, 17 significant digits that reads back as exactly d (JSON.parse
     * rounds correctly too); 17 always does. */
    char text[40];
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*g", precision, d);
        if (strtod(text, NULL) == d)
            break;
    }
    return answer_text(c, true, text, strlen(text));
}

static bool text_result(struct call *c, const char *text)
{
    if (c->fn->returns == DSHH_NATIVE_JSON) {
        if (!text)
            return reject(c, "the result is NULL, not JSON text");
        size_t len = strlen(text);
        /* Validated, not built: the text passes on as it is (no tree of a large result). */
        if (!dsh_json_is_value(text, len, DSH_JSON_VALUE_MAX_DEPTH, NULL))
            return reject(c, "the result is not strict JSON text (UTF-8, no NaN or Infinity)");
        return answer_text(c, true, text, len); /* its own text: every number keeps its digits */
    }
    if (!text)
        return answer_text(c, true, "null", 4);
    json_object *s = json_object_new_string(text);
    if (!s)
        return reject(c, "out of memory");
    const char *quoted = json_object_to_json_string_ext(s, DSH_JSON_PRINT_FLAGS);
    /* json-c copies bytes >= 0x80 as they are; the strict parser then checks they are UTF-8. */
    json_object *check = dsh_json_parse_strict(quoted, strlen(quoted));
    bool ok = check ? answer_text(c, true, quoted, strlen(quoted))
                    : reject(c, "the result is not valid UTF-8");
    json_object_put(check);
    json_object_put(s);
    return ok;
}

static void convert_result(struct call *c, const union result *r)
{
    switch (c->fn->returns) {
    case DSHH_NATIVE_VOID: answer_text(c, true, NULL, 0); return;
    case DSHH_NATIVE_BOOL:
        answer_text(c, true, (uint8_t)r->unsigned_int ? "true" : "false",
                    (uint8_t)r->unsigned_int ? 4 : 5);
        return;
    case DSHH_NATIVE_INT8: signed_result(c, (int8_t)r->signed_int); return;
    case DSHH_NATIVE_INT16: signed_result(c, (int16_t)r->signed_int); return;
    case DSHH_NATIVE_INT32: signed_result(c, (int32_t)r->signed_int); return;
    case DSHH_NATIVE_INT64: signed_result(c, (int64_t)r->signed_int); return;
    case DSHH_NATIVE_UINT8: integer_result(c, false, (uint8_t)r->unsigned_int); return;
    case DSHH_NATIVE_UINT16: integer_result(c, false, (uint16_t)r->unsigned_int); return;
    case DSHH_NATIVE_UINT32: integer_result(c, false, (uint32_t)r->unsigned_int); return;
    case DSHH_NATIVE_UINT64: integer_result(c, false, (uint64_t)r->unsigned_int); return;
    case DSHH_NATIVE_FLOAT: double_result(c, r->f); return;
    case DSHH_NATIVE_DOUBLE: double_result(c, r->d); return;
    case DSHH_NATIVE_STRING:
    case DSHH_NATIVE_JSON:
        text_result(c, r->pointer);
        /* Copied (or rejected) above: now the library gets its buffer back, exactly once. */
        if (c->fn->free_fn && r->pointer)
            c->fn->free_fn(r->pointer);
        return;
    case DSHH_NATIVE_TYPE_COUNT: break;
    }
    reject(c, "unsupported return type");
}

static double elapsed_ms(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static void warn_slow(const struct dshh_native_set *set, struct call *c, double ms)
{
    if (!set->logger || !set->logger->log)
        return;
    char message[600];
    snprintf(message, sizeof message,
             "native call %s.%s took %.0f ms (maxCallMs %lld); it blocked the host thread",
             c->ns->global, c->fn->name, ms, (long long)c->fn->max_call_ms);
    set->logger->log(set->logger->ctx, DSH_LOG_WARN, message);
}

bool dshh__native_call(const struct dshh_native_set *set, const char *global, const char *name,
                       const char *args_json, size_t args_len, struct dshh_native_answer *ret)
{
    const struct dshh_native_ns *ns = NULL;
    for (size_t i = 0; set && i < set->n && !ns; i++)
        if (!strcmp(set->ns[i].global, global))
            ns = &set->ns[i];
    if (!ns)
        return false;
    struct call c = {.ns = ns, .answer = ret};
    for (size_t i = 0; i < ns->nfns && !c.fn; i++)
        if (!strcmp(ns->fns[i].name, name))
            c.fn = &ns->fns[i];
    if (!c.fn) { /* the provider forwards only declared functions */
        char message[600];
        snprintf(message, sizeof message, "%s.%s: no such native function", global, name);
        answer_text(&c, false, message, strlen(message));
        return true;
    }
    json_object *args = dsh_json_parse_strict(args_json, args_len), *object;
    union slot *slots = calloc(c.fn->nargs ? c.fn->nargs : 1, sizeof(*slots));
    void **values = calloc(c.fn->nargs ? c.fn->nargs : 1, sizeof(*values));
    if (!slots || !values)
        reject(&c, "out of memory");
    else if (!json_object_is_type(args, json_type_array))
        reject(&c, "the arguments are not a strict JSON array");
    else if (argument_object(&c, args, &object) && convert_args(&c, object, slots, values)) {
        union result r = {0};
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        ffi_call((ffi_cif *)&c.fn->cif, c.fn->entry, &r, values);
        clock_gettime(CLOCK_MONOTONIC, &end);
        double ms = elapsed_ms(&start, &end);
        if (c.fn->max_call_ms > 0 && ms > (double)c.fn->max_call_ms)
            warn_slow(set, &c, ms);
        convert_result(&c, &r);
    }
    free(slots);
    free(values);
    json_object_put(args);
    return true;
}

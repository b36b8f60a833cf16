/* Typed reads of json-c values (dsh_json_get.h). */
#include "dsh_json_get.h"

#include <errno.h>
#include <string.h>

json_object *dsh_json_member(json_object *obj, const char *key)
{
    json_object *v = NULL;
    if (!obj || !key || !json_object_is_type(obj, json_type_object))
        return NULL;
    return json_object_object_get_ex(obj, key, &v) ? v : NULL;
}

bool dsh_json_has(json_object *obj, const char *key)
{
    return obj && key && json_object_is_type(obj, json_type_object) &&
           json_object_object_get_ex(obj, key, NULL);
}

const char *dsh_json_as_string(json_object *v, size_t *ret_len)
{
    if (!v || !json_object_is_type(v, json_type_string))
        return NULL;
    if (ret_len)
        *ret_len = (size_t)json_object_get_string_len(v);
    return json_object_get_string(v);
}

const char *dsh_json_as_text(json_object *v)
{
    size_t len;
    const char *s = dsh_json_as_string(v, &len);
    return s && strlen(s) == len ? s : NULL;
}

bool dsh_json_as_int64(json_object *v, int64_t min, int64_t max, int64_t *ret)
{
    if (!v || !json_object_is_type(v, json_type_int))
        return false;
    errno = 0;
    int64_t n = json_object_get_int64(v);
    /* json-c saturates out-of-range integers at INT64_MIN/MAX and sets errno. */
    if (errno == ERANGE || n < min || n > max)
        return false;
    /* An unsigned value above INT64_MAX is stored as uint64 and read back saturated. */
    if (n == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX)
        return false;
    *ret = n;
    return true;
}

const char *dsh_json_get_string(json_object *obj, const char *key, size_t *ret_len)
{
    return dsh_json_as_string(dsh_json_member(obj, key), ret_len);
}

const char *dsh_json_get_text(json_object *obj, const char *key)
{
    return dsh_json_as_text(dsh_json_member(obj, key));
}

json_object *dsh_json_get_object(json_object *obj, const char *key)
{
    json_object *v = dsh_json_member(obj, key);
    return v && json_object_is_type(v, json_type_object) ? v : NULL;
}

json_object *dsh_json_get_array(json_object *obj, const char *key)
{
    json_object *v = dsh_json_member(obj, key);
    return v && json_object_is_type(v, json_type_array) ? v : NULL;
}

bool dsh_json_get_bool(json_object *obj, const char *key, bool *ret)
{
    json_object *v = dsh_json_member(obj, key);
    if (!v || !json_object_is_type(v, json_type_boolean))
        return false;
    *ret = json_object_get_boolean(v);
    return true;
}

bool dsh_json_get_int64(json_object *obj, const char *key, int64_t min, int64_t max, int64_t *ret)
{
    return dsh_json_as_int64(dsh_json_member(obj, key), min, max, ret);
}

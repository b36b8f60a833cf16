/* The marks of TypeScript in a program's text (type_marks.h). One pass over the bytes; a word is
 * a run of name characters (ASCII letters, digits, `_`, `$`, and every byte of a multi-byte UTF-8
 * character, so that a word never ends inside one). */
#include "type_marks.h"

#include <string.h>

static const char *const typescript_words[] = {
    "as",       "satisfies", "type",    "interface", "enum",      "namespace", "declare",
    "abstract", "implements", "private", "protected", "public",    "readonly",  "override",
};

static bool is_name_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c >= 0x80;
}

static bool is_typescript_word(const char *word, size_t len)
{
    for (size_t i = 0; i < sizeof typescript_words / sizeof typescript_words[0]; i++)
        if (strlen(typescript_words[i]) == len && memcmp(typescript_words[i], word, len) == 0)
            return true;
    return false;
}

bool ptc__program_may_have_types(const char *program, size_t len)
{
    const unsigned char *p = (const unsigned char *)program;
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        if (is_name_byte(c)) {
            size_t start = i;
            while (i < len && is_name_byte(p[i]))
                i++;
            if (is_typescript_word(program + start, i - start))
                return true;
            continue;
        }
        if (c == ':' || c == '<')
            return true;
        if (c == '?') {
            /* `??` and `??=` are one mark-free run of `?`s; `?.` is optional chaining. */
            bool doubled = (i > 0 && p[i - 1] == '?') || (i + 1 < len && p[i + 1] == '?');
            if (!doubled && !(i + 1 < len && p[i + 1] == '.'))
                return true;
        }
        if (c == '!' && i > 0 && (is_name_byte(p[i - 1]) || p[i - 1] == ')' || p[i - 1] == ']') &&
            !(i + 1 < len && p[i + 1] == '='))
            return true;
        i++;
    }
    return false;
}

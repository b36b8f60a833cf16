/* The scan for marks of TypeScript (plugin/base/type_marks.c), which reads a client's program
 * text, against a reference written from the rule in type_marks.h alone, position by position:
 * the input is the program, any bytes, NUL included. */
#include <stdbool.h>
#include <string.h>

#include "fuzz_target.h"
#include "type_marks.h"

static bool name_byte(unsigned char c)
{
    return c >= 0x80 || c == '_' || c == '$' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

static bool reference(const unsigned char *p, size_t len)
{
    static const char *const words[] = {"as",        "satisfies", "type",      "interface", "enum",
                                        "namespace", "declare",   "abstract",  "implements", "private",
                                        "protected", "public",    "readonly",  "override"};
    for (size_t i = 0; i < len; i++) {
        unsigned char before = i ? p[i - 1] : 0, after = i + 1 < len ? p[i + 1] : 0;
        if (p[i] == ':' || p[i] == '<')
            return true;
        if (p[i] == '?' && before != '?' && after != '?' && after != '.')
            return true;
        if (p[i] == '!' && i && (name_byte(before) || before == ')' || before == ']') && after != '=')
            return true;
        if (name_byte(p[i]) && !(i && name_byte(before))) {
            size_t end = i;
            while (end < len && name_byte(p[end]))
                end++;
            for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
                if (strlen(words[w]) == end - i && !memcmp(words[w], p + i, end - i))
                    return true;
        }
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool found = ptc__program_may_have_types((const char *)data, size);
    fuzz_check(found == reference(data, size), "scan %s, reference %s", found ? "marked" : "unmarked",
               found ? "unmarked" : "marked");
    return 0;
}

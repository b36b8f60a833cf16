/* The denial scanner (examples/providers/lib/denial_scan.c), which reads a confined program's output
 * for the texts of denied operations, against a naive reference: every signature tried at every
 * offset, ASCII letters folded. Any bytes (NUL and non-ASCII included): the same answer. */
#include <stdbool.h>
#include <string.h>

#include "denial_scan.h"
#include "fuzz_target.h"

static unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static bool naive_scan(const unsigned char *text, size_t len)
{
    for (const char *const *s = dshx__denial_signatures; *s; s++) {
        size_t n = strlen(*s);
        for (size_t at = 0; at + n <= len; at++) {
            size_t k = 0;
            while (k < n && fold(text[at + k]) == fold((unsigned char)(*s)[k]))
                k++;
            if (k == n)
                return true;
        }
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bool fast = dshx__denial_scan((const char *)data, size), naive = naive_scan(data, size);
    fuzz_check(fast == naive, "scanner %d, reference %d on %zu bytes", fast, naive, size);
    return 0;
}

/* denial_scan.c: finds exactly what comparing every signature at every offset without case finds
 * (the reference below, the scan it replaced), on hand-picked edges and on generated texts. */
#include "denial_scan.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool reference_scan(const char *text, size_t len)
{
    for (const char *const *s = dshx__denial_signatures; *s; s++) {
        size_t n = strlen(*s);
        for (size_t i = 0; i + n <= len; i++)
            if (strncasecmp(text + i, *s, n) == 0)
                return true;
    }
    return false;
}

static void expect(const char *text, size_t len, bool want)
{
    cr_assert_eq(reference_scan(text, len), want, "reference on \"%.*s\"", (int)len, text);
    cr_assert_eq(dshx__denial_scan(text, len), want, "scan on \"%.*s\"", (int)len, text);
}

Test(denial_scan, every_signature_anywhere_in_any_case)
{
    char buf[128];
    for (const char *const *s = dshx__denial_signatures; *s; s++) {
        size_t n = strlen(*s);
        for (size_t pre = 0; pre < 4; pre++) {
            memset(buf, 'c', pre); /* a prefix that starts a signature of its own */
            for (size_t i = 0; i < n; i++)
                buf[pre + i] = (char)(i % 2 ? (*s)[i] ^ ((*s)[i] >= 'A' ? 0x20 : 0) : (*s)[i]);
            expect(buf, pre + n, true);
            expect(buf, pre + n - 1, false); /* one byte short */
        }
    }
}

Test(denial_scan, overlaps_fallbacks_and_non_matches)
{
    expect("EEACCES", 7, true);
    expect("EPEROFS", 7, true);          /* EPER fails, falls back into EROFS' E */
    expect("permission deniepermission denied", 33, true);
    expect("operation not permittepermission denied", 40, true);
    expect("cross-device lin", 16, false);
    expect("EACCE", 5, false);
    expect("ENOENT: no such file or directory", 33, false);
    expect("", 0, false);
    expect("EAC\0CES", 7, false);         /* NUL is an ordinary byte, not an end */
    expect("x\0EPERM", 7, true);          /* text after a NUL is scanned */
    expect("\xc3\x89PERM", 6, false);     /* a non-ASCII letter does not fold */
}

/* Texts made of signature pieces, their case-flipped copies and random bytes: the kind of input
 * where a wrong failure link would miss or invent a match. */
Test(denial_scan, agrees_with_the_reference_on_generated_texts)
{
    static const char *const pieces[] = {"E", "EA", "EACC", "EP", "EPE", "ERO", "EX", "EXD",
                                         "perm", "permission ", "denied", "oper", "ation not ",
                                         "read-only", " file", "cross-", "device ", "link",
                                         "dsh-sandbox-launch: ", "confinement failed", "\0", ":"};
    unsigned seed = 12345;
    char text[256];
    unsigned found = 0, cases = 20000;
    for (unsigned c = 0; c < cases; c++) {
        size_t len = 0;
        while (len < 200) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 16) & 0x7fff;
            if (r % 5 == 0) {
                text[len++] = (char)(r >> 3);
                continue;
            }
            const char *piece = pieces[r % (sizeof(pieces) / sizeof(pieces[0]))];
            size_t n = piece[0] ? strlen(piece) : 1;
            for (size_t i = 0; i < n && len < sizeof(text); i++)
                text[len++] = (char)((r & 0x100) && piece[i] >= 'a' ? piece[i] - 32 : piece[i]);
        }
        bool want = reference_scan(text, len);
        found += want;
        cr_assert_eq(dshx__denial_scan(text, len), want, "case %u", c);
    }
    /* Both outcomes occur often, so agreement means something. */
    cr_assert(found > cases / 10 && found < cases - cases / 10, "%u of %u texts matched", found, cases);
}

/* Long plain stretches are skipped sixteen bytes at a time: a signature at any offset of such a
 * stretch, and at its very end, is still found; false candidates are stepped over. */
Test(denial_scan, signatures_at_every_offset_of_long_plain_text)
{
    char buf[160];
    for (const char *const *s = dshx__denial_signatures; *s; s++) {
        size_t n = strlen(*s);
        for (size_t at = 0; at + n <= sizeof buf; at += 3) {
            memset(buf, 'x', sizeof buf);
            memcpy(buf + at, *s, n);
            expect(buf, sizeof buf, true);
            expect(buf, at + n - 1, false);
            buf[at] = 'Q'; /* not a start byte: the rest must not match on its own */
            expect(buf, sizeof buf, reference_scan(buf, sizeof buf));
        }
    }
    memset(buf, 'E', sizeof buf); /* a candidate at every byte */
    expect(buf, sizeof buf, false);
}

/* UTF-8 for result text: raw pipe bytes become valid UTF-8 (sequences split across reads are
 * carried over, invalid bytes become U+FFFD), and text is cut only on character boundaries. */
#ifndef PTC_UTF8_H
#define PTC_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* An incomplete sequence carried from one read to the next. */
struct ptc_utf8_carry {
    unsigned char bytes[4];
    size_t len;
};

/* Sanitized text of carry + bytes (transfer full); an incomplete tail stays in carry unless
 * at_eof. 0 or -ENOMEM. */
int ptc__utf8_sanitize(struct ptc_utf8_carry *carry, const char *bytes, size_t len, bool at_eof,
                       char **ret_text, size_t *ret_len);
/* Length of the longest prefix of text (<= max) that ends on a UTF-8 boundary. */
size_t ptc__utf8_prefix(const char *text, size_t len, size_t max);

#endif

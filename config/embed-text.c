/* Build-time generator: embed-text INPUT OUTPUT FUNCTION writes a C file whose
 * `const char *FUNCTION(size_t *ret_len)` returns INPUT's bytes, NUL-terminated.
 * A byte-array initializer (not a string literal) stays clear of compilers'
 * string-length limits and -Woverlength-strings. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s INPUT OUTPUT FUNCTION\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "rbe");
    if (!in) {
        perror(argv[1]);
        return 1;
    }
    FILE *out = fopen(argv[2], "we");
    if (!out) {
        perror(argv[2]);
        fclose(in);
        return 1;
    }
    fprintf(out, "/* Generated from %s by embed-text; do not edit. */\n"
                 "#include <stddef.h>\n\n"
                 "const char *%s(size_t *ret_len);\n\n"
                 "static const char text[] = {",
            argv[1], argv[3]);
    size_t n = 0;
    int c;
    while ((c = fgetc(in)) != EOF)
        fprintf(out, "%s0x%02x,", n++ % 16 == 0 ? "\n\t" : " ", (unsigned)c);
    fprintf(out, "%s0x00,\n};\n\n"
                 "const char *%s(size_t *ret_len)\n{\n"
                 "\tif (ret_len)\n\t\t*ret_len = sizeof(text) - 1;\n"
                 "\treturn text;\n}\n",
            n % 16 == 0 ? "\n\t" : " ", argv[3]);
    int failed = ferror(in) || ferror(out);
    fclose(in);
    if (fclose(out) != 0 || failed) {
        fprintf(stderr, "%s: write failed\n", argv[2]);
        remove(argv[2]);
        return 1;
    }
    return 0;
}

/* What every fuzz target defines (libFuzzer's entry point) and how a target reports a broken
 * property: fuzz_check prints the property and aborts, which libFuzzer and the replay driver
 * (replay.c) both report as a finding. */
#ifndef DSH_FUZZ_TARGET_H
#define DSH_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_check(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: property broken: %s: ", __FILE__, __LINE__, #cond);          \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif

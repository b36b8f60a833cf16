/* The example library's functions (dsh_native_example.c); a dsh-native-bindings row declares
 * their C signatures in YAML (examples/profiles/native-example.yaml). */
#ifndef DSH_NATIVE_EXAMPLE_H
#define DSH_NATIVE_EXAMPLE_H

#include <stdbool.h>
#include <stdint.h>

void nx_free(void *p);
int64_t nx_live_blocks(void);

double nx_hypot(double x, double y);
bool nx_not(bool value);
int8_t nx_id_int8(int8_t v);
int16_t nx_id_int16(int16_t v);
int32_t nx_id_int32(int32_t v);
int64_t nx_id_int64(int64_t v);
uint8_t nx_id_uint8(uint8_t v);
uint16_t nx_id_uint16(uint16_t v);
uint32_t nx_id_uint32(uint32_t v);
uint64_t nx_id_uint64(uint64_t v);
float nx_id_float(float v);
double nx_id_double(double v);
int32_t nx_add_int32(int32_t a, int32_t b);
double nx_divide(double a, double b);
float nx_divide_float(float a, float b);
double nx_negative_zero(void);
double nx_mix(int8_t a, uint16_t b, int32_t c, int64_t d, float e, double f, bool g, uint8_t h);

uint32_t nx_crc32_text(const char *text);
uint64_t nx_length(const char *text);
char *nx_greet(const char *name);
const char *nx_version(void);
const char *nx_no_text(void);
char *nx_bad_utf8(void);

char *nx_info_json(const char *query);
const char *nx_static_json(void);
char *nx_bad_json(void);
char *nx_nan_json(void);
const char *nx_no_json(void);

uint64_t nx_count(void);
void nx_reset(void);
void nx_sleep_ms(uint32_t ms);

#endif

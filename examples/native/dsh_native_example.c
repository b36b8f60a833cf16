/* An example C library for dsh-native-bindings rows (examples/native/README.md): a few functions
 * of every supported type, plus allocation accounting so tests can tell that the host freed what
 * a function returned exactly once. Not thread-safe: the host calls it on its one thread. */
#include "dsh_native_example.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- allocation accounting: every returned buffer carries a header the free function checks -- */
#define LIVE_MAGIC 0x6c697665u /* "live" */
#define DEAD_MAGIC 0x64656164u /* "dead" */

struct block {
    unsigned magic;
    size_t size;
};

static int64_t live_blocks;

static char *block_alloc(size_t size)
{
    struct block *b = malloc(sizeof(*b) + size);
    if (!b)
        return NULL;
    b->magic = LIVE_MAGIC;
    b->size = size;
    live_blocks++;
    return (char *)(b + 1);
}

static char *block_strdup(const char *text)
{
    size_t n = strlen(text);
    char *s = block_alloc(n + 1);
    if (s)
        memcpy(s, text, n + 1);
    return s;
}

void nx_free(void *p)
{
    if (!p)
        return;
    struct block *b = (struct block *)p - 1;
    if (b->magic != LIVE_MAGIC) {
        /* A double free or a pointer this library never returned: stop loudly. */
        fprintf(stderr, "nx_free: %p is not a live block (magic %#x)\n", p, b->magic);
        abort();
    }
    b->magic = DEAD_MAGIC;
    live_blocks--;
    free(b);
}

int64_t nx_live_blocks(void)
{
    return live_blocks;
}

/* ---- numbers ---------------------------------------------------------------------------------- */
double nx_hypot(double x, double y)
{
    return hypot(x, y);
}
bool nx_not(bool value)
{
    return !value;
}
int8_t nx_id_int8(int8_t v)
{
    return v;
}
int16_t nx_id_int16(int16_t v)
{
    return v;
}
int32_t nx_id_int32(int32_t v)
{
    return v;
}
int64_t nx_id_int64(int64_t v)
{
    return v;
}
uint8_t nx_id_uint8(uint8_t v)
{
    return v;
}
uint16_t nx_id_uint16(uint16_t v)
{
    return v;
}
uint32_t nx_id_uint32(uint32_t v)
{
    return v;
}
uint64_t nx_id_uint64(uint64_t v)
{
    return v;
}
float nx_id_float(float v)
{
    return v;
}
double nx_id_double(double v)
{
    return v;
}
int32_t nx_add_int32(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}
double nx_divide(double a, double b)
{
    return a / b;
}
float nx_divide_float(float a, float b)
{
    return a / b;
}
double nx_negative_zero(void)
{
    return -0.0;
}

/* Eight arguments of mixed widths: more than the argument registers of either ABI class. */
double nx_mix(int8_t a, uint16_t b, int32_t c, int64_t d, float e, double f, bool g, uint8_t h)
{
    return (double)a + b + c + (double)d + e + f + (g ? 1 : 0) + h;
}

/* ---- text ------------------------------------------------------------------------------------- */
uint32_t nx_crc32_text(const char *text)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        crc ^= *p;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    return ~crc;
}

uint64_t nx_length(const char *text)
{
    return strlen(text);
}

char *nx_greet(const char *name)
{
    char *s = block_alloc(strlen(name) + sizeof("hello, "));
    if (s)
        sprintf(s, "hello, %s", name);
    return s;
}

const char *nx_version(void)
{
    return "dsh-native-example 1";
}
const char *nx_no_text(void)
{
    return NULL;
}
char *nx_bad_utf8(void)
{
    return block_strdup("caf\xc3"); /* a cut two-byte sequence */
}

/* ---- json ------------------------------------------------------------------------------------- */
/* {"query": <query as given>, "bytes": <its length>}: the query's text is copied verbatim, so
 * its numbers keep their digits. */
char *nx_info_json(const char *query)
{
    size_t n = strlen(query);
    char *s = block_alloc(n + 48);
    if (s)
        sprintf(s, "{\"query\":%s,\"bytes\":%zu}", query, n);
    return s;
}

const char *nx_static_json(void)
{
    return "{\"name\":\"dsh-native-example\",\"version\":1,\"tags\":[\"static\",\"borrowed\"]}";
}

char *nx_bad_json(void)
{
    return block_strdup("{\"unterminated\": ");
}
char *nx_nan_json(void)
{
    return block_strdup("[NaN]");
}
const char *nx_no_json(void)
{
    return NULL;
}

/* ---- state and time --------------------------------------------------------------------------- */
static uint64_t counter;

uint64_t nx_count(void)
{
    return ++counter;
}
void nx_reset(void)
{
    counter = 0;
}

void nx_sleep_ms(uint32_t ms)
{
    struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

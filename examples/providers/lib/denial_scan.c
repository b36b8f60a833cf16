/* Finds the texts of denied operations (as Node's libuv, shells and the launcher word them) in
 * program output in one pass: an Aho-Corasick automaton over the fixed signatures, compiled once
 * into a DFA over byte classes, so each byte costs at most two table loads whatever the text holds
 * (at the root, one independent load: bytes that start no signature are skipped). Output
 * can be as large as maxOutputBytes; comparing every signature at every offset cost more than the
 * run that produced it. */
#include "denial_scan.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* EXDEV is how Landlock refuses a link or rename that would move a file across its rules. */
const char *const dshx__denial_signatures[] = {
    "EACCES",
    "EPERM",
    "EROFS",
    "EXDEV",
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "cross-device link",
    "dsh-sandbox-launch: confinement failed",
    NULL,
};

/* Upper bounds for the signatures above (checked while building: a longer list fails closed). */
enum { MAX_STATES = 192, MAX_CLASSES = 48 };

/* At most this many distinct first bytes (letters folded to lower case) are skipped sixteen at a
 * time; with more the skip goes byte by byte. */
enum { MAX_VECTOR_STARTS = 8 };

static struct {
    uint8_t class_of[256];           /* byte -> class; 0 = no signature contains it */
    bool starts[256];                /* bytes that leave the root: the first of a signature */
    unsigned char start_folded[MAX_VECTOR_STARTS]; /* each start byte | 0x20, once */
    unsigned n_start_folded;         /* MAX_VECTOR_STARTS + 1: too many for the vector skip */
    uint8_t next[MAX_STATES][MAX_CLASSES];
    bool accepting[MAX_STATES];
    bool usable;                     /* false if the tables did not fit: every scan then matches */
} dfa;

static pthread_once_t dfa_once = PTHREAD_ONCE_INIT;

static unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static void build_dfa(void)
{
    unsigned classes = 1;
    unsigned states = 1; /* 0 is the root */
    uint8_t fail[MAX_STATES] = {0};
    /* The trie, in next[][] (0 = no edge yet; the root is never a child, so 0 is free). */
    for (const char *const *s = dshx__denial_signatures; *s; s++) {
        unsigned state = 0;
        for (const unsigned char *p = (const unsigned char *)*s; *p; p++) {
            unsigned char c = fold(*p);
            if (!dfa.class_of[c]) {
                if (classes == MAX_CLASSES)
                    return;
                dfa.class_of[c] = (uint8_t)classes;
                if (c >= 'a' && c <= 'z')
                    dfa.class_of[c - 'a' + 'A'] = (uint8_t)classes;
                classes++;
            }
            uint8_t *edge = &dfa.next[state][dfa.class_of[c]];
            if (!*edge) {
                if (states == MAX_STATES)
                    return;
                *edge = (uint8_t)states++;
            }
            state = *edge;
        }
        dfa.accepting[state] = true;
    }
    /* Breadth first: each state's missing edges become its failure state's edges, so the DFA
     * never backs up. Trie children are numbered after their parents, but not in BFS order. */
    uint8_t queue[MAX_STATES];
    unsigned head = 0, tail = 0;
    for (unsigned k = 1; k < classes; k++)
        if (dfa.next[0][k])
            queue[tail++] = dfa.next[0][k];
    while (head < tail) {
        unsigned state = queue[head++];
        dfa.accepting[state] = dfa.accepting[state] || dfa.accepting[fail[state]];
        for (unsigned k = 1; k < classes; k++) {
            uint8_t child = dfa.next[state][k];
            if (child) {
                fail[child] = dfa.next[fail[state]][k];
                queue[tail++] = child;
            } else {
                dfa.next[state][k] = dfa.next[fail[state]][k];
            }
        }
    }
    for (unsigned c = 0; c < 256; c++) {
        dfa.starts[c] = dfa.next[0][dfa.class_of[c]] != 0;
        unsigned char folded = (unsigned char)(c | 0x20);
        bool known = false;
        for (unsigned k = 0; k < dfa.n_start_folded && k < MAX_VECTOR_STARTS; k++)
            known = known || dfa.start_folded[k] == folded;
        if (dfa.starts[c] && !known && dfa.n_start_folded++ < MAX_VECTOR_STARTS)
            dfa.start_folded[dfa.n_start_folded - 1] = folded;
    }
    dfa.usable = true;
}

/* The first position from i whose byte may start a signature (or len). Sixteen bytes at a time
 * where SSE2 is there: a byte is a candidate when byte | 0x20 is some start byte | 0x20, which
 * every start byte is (the others are false candidates the automaton steps over). */
static size_t skip_to_start(const unsigned char *p, size_t i, size_t len)
{
#ifdef __SSE2__
    if (dfa.n_start_folded >= 1 && dfa.n_start_folded <= MAX_VECTOR_STARTS && len - i >= 16) {
        const __m128i case_bit = _mm_set1_epi8(0x20);
        /* Always MAX_VECTOR_STARTS compares (unused ones repeat the first), so the loop below
         * unrolls completely. */
        __m128i starts[MAX_VECTOR_STARTS];
        for (unsigned k = 0; k < MAX_VECTOR_STARTS; k++)
            starts[k] = _mm_set1_epi8((char)dfa.start_folded[k < dfa.n_start_folded ? k : 0]);
        while (len - i >= 16) {
            __m128i v = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(p + i)), case_bit);
            __m128i hit = _mm_setzero_si128();
            for (unsigned k = 0; k < MAX_VECTOR_STARTS; k++)
                hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, starts[k]));
            unsigned mask = (unsigned)_mm_movemask_epi8(hit);
            if (mask)
                return i + (size_t)__builtin_ctz(mask);
            i += 16;
        }
    }
#endif
    while (i < len && !dfa.starts[p[i]])
        i++;
    return i;
}

bool dshx__denial_scan(const char *text, size_t len)
{
    pthread_once(&dfa_once, build_dfa);
    if (!dfa.usable)
        return true;
    const unsigned char *p = (const unsigned char *)text;
    unsigned state = 0;
    for (size_t i = 0; i < len; i++) {
        /* At the root, skip bytes that start nothing: no load depends on the previous byte. */
        if (state == 0)
            i = skip_to_start(p, i, len);
        if (i == len)
            break;
        state = dfa.next[state][dfa.class_of[p[i]]];
        if (dfa.accepting[state])
            return true;
    }
    return false;
}

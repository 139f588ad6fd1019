#include "CBenchRaw.h"

#include <sodium.h>
#include <string.h>

/* Instruction counting under valgrind --tool=callgrind: zero the counters
   before an operation's loop and dump them, labelled, after it. Outside
   valgrind (or without valgrind's headers) these do nothing. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CBENCHRAW_CALLGRIND 1
#endif
#endif

int CBenchRaw_on_valgrind(void) {
#ifdef CBENCHRAW_CALLGRIND
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

void CBenchRaw_count_begin(void) {
#ifdef CBENCHRAW_CALLGRIND
    CALLGRIND_ZERO_STATS;
#endif
}

void CBenchRaw_count_end(const char *label) {
#ifdef CBENCHRAW_CALLGRIND
    CALLGRIND_DUMP_STATS_AT(label);
#else
    (void)label;
#endif
}

/* For the instruction gate: libsodium's random bytes from a fixed seed, so
   that keys, nonces and messages made through it are the same on every run
   (OpenSSL's own generator is untouched). Set before sodium_init. */
static uint64_t deterministic_counter;

static const char *deterministic_name(void) { return "tokenmint-bench-deterministic"; }

static void deterministic_buf(void *const buf, const size_t size) {
    unsigned char seed[randombytes_SEEDBYTES] = {0};
    uint64_t n = ++deterministic_counter;
    memcpy(seed, &n, sizeof n);
    randombytes_buf_deterministic(buf, size, seed);
}

static uint32_t deterministic_random(void) {
    uint32_t value;
    deterministic_buf(&value, sizeof value);
    return value;
}

static struct randombytes_implementation deterministic_implementation = {
    .implementation_name = deterministic_name,
    .random = deterministic_random,
    .stir = NULL,
    .uniform = NULL,
    .buf = deterministic_buf,
    .close = NULL,
};

int CBenchRaw_deterministic_random(void) {
    return randombytes_set_implementation(&deterministic_implementation);
}

/* Heap allocation counting for the benchmark: this executable's malloc family
   forwards to glibc's and, while counting is on, adds one per allocation.
   Defined in the executable, these take precedence for every library loaded
   (the Swift runtime, Foundation, OpenSSL, libsodium). Linux/glibc only. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include "CBenchRaw.h"

#if defined(__linux__) && defined(__GLIBC__)
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_int counting;
static atomic_ulong allocations;

static inline void count_one(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void *malloc(size_t n) { count_one(); return __libc_malloc(n); }
void *calloc(size_t k, size_t n) { count_one(); return __libc_calloc(k, n); }
void *realloc(void *p, size_t n) { count_one(); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { count_one(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { count_one(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    if (a % sizeof(void *) != 0 || (a & (a - 1)) != 0) return EINVAL;
    count_one();
    void *p = __libc_memalign(a, n);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

int CBenchRaw_alloc_available(void) { return 1; }
void CBenchRaw_alloc_start(void) {
    atomic_store(&allocations, 0);
    atomic_store(&counting, 1);
}
uint64_t CBenchRaw_alloc_stop(void) {
    atomic_store(&counting, 0);
    return atomic_load(&allocations);
}
#else
int CBenchRaw_alloc_available(void) { return 0; }
void CBenchRaw_alloc_start(void) {}
uint64_t CBenchRaw_alloc_stop(void) { return 0; }
#endif

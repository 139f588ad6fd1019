#include "CBenchRaw.h"

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

/*
 * check.h - CHECK(cond, ...) of the MPI tests that count their checks:
 * a pass adds to npass, a failure to nfail and prints (the first 19) with
 * the rank and a printf-style message. The including file defines
 * `static int rank, nfail, npass;`.
 */
#ifndef XCHG_TESTS_CHECK_H
#define XCHG_TESTS_CHECK_H

#include <stdio.h>

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (cond) {                                                           \
            npass++;                                                          \
        } else {                                                              \
            nfail++;                                                          \
            if (nfail < 20) {                                                 \
                fprintf(stderr, "FAIL [rank %d] ", rank);                     \
                fprintf(stderr, __VA_ARGS__);                                 \
                fprintf(stderr, "\n");                                        \
            }                                                                 \
        }                                                                     \
    } while (0)

#endif /* XCHG_TESTS_CHECK_H */

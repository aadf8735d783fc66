/*
 * check.h - the assertion helper of the tests (every test program that
 * counts its checks uses it; do not write another).
 *
 * CHECK(cond, fmt, ...)      this rank's check: a pass adds to npass, a
 *                            failure to nfail and prints
 *                            "FAIL [rank R] <printf-style message>".
 * check_same_everywhere(v, comm)  1 on every rank of comm if all hold the
 *                            same int v (two MPI_Allreduce), else 0: a
 *                            collective, so every rank calls it.
 * CHECK_ALL(cond, fmt, ...)  an agreed check, called by every rank of
 *                            MPI_COMM_WORLD at the same point: it fails on
 *                            every rank if cond is false on any (one
 *                            MPI_Allreduce), each rank where it is false
 *                            prints its "FAIL [rank R] ..." line, and rank 0
 *                            also "FAILED: <message>" (the message as rank 0
 *                            formats it).
 *
 * Each rank prints its first CHECK_MAX_PRINTED (20) failure lines (a test
 * of 1000 calls should not print 1000); every failure is counted. The test
 * program exits non-zero when nfail is (or, reduced, any rank's is) non-zero.
 *
 * The including file defines `static int npass, nfail;` and its rank: a
 * variable `rank`, or another expression through `#define CHECK_RANK name`
 * before the include. A program without MPI defines CHECK_NO_MPI first
 * (lines "FAIL: ...", no CHECK_ALL).
 */
#ifndef XCHG_TESTS_CHECK_H
#define XCHG_TESTS_CHECK_H

#include <stdio.h>

#ifndef CHECK_RANK
#define CHECK_RANK rank
#endif
#ifndef CHECK_MAX_PRINTED
#define CHECK_MAX_PRINTED 20
#endif

/* failure lines this rank printed so far */
static inline int *check_printed_(void)
{
    static int n;
    return &n;
}

#ifdef CHECK_NO_MPI
#define CHECK_PREFIX_() fprintf(stderr, "FAIL: ")
#else
#define CHECK_PREFIX_() fprintf(stderr, "FAIL [rank %d] ", (int)(CHECK_RANK))
#endif

#define CHECK_REPORT_(...)                                                    \
    do {                                                                      \
        if ((*check_printed_())++ < CHECK_MAX_PRINTED) {                      \
            CHECK_PREFIX_();                                                  \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
        }                                                                     \
    } while (0)

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (cond) {                                                           \
            npass++;                                                          \
        } else {                                                              \
            nfail++;                                                          \
            CHECK_REPORT_(__VA_ARGS__);                                       \
        }                                                                     \
    } while (0)

#ifndef CHECK_NO_MPI
#define CHECK_ALL(cond, ...)                                                  \
    do {                                                                      \
        int check_ok_ = (cond) ? 1 : 0, check_all_ = 0;                       \
        if (!check_ok_)                                                       \
            CHECK_REPORT_(__VA_ARGS__);                                       \
        MPI_Allreduce(&check_ok_, &check_all_, 1, MPI_INT, MPI_MIN,           \
                      MPI_COMM_WORLD);                                        \
        if (check_all_) {                                                     \
            npass++;                                                          \
        } else {                                                              \
            nfail++;                                                          \
            if ((CHECK_RANK) == 0) {                                          \
                fprintf(stderr, "FAILED: ");                                  \
                fprintf(stderr, __VA_ARGS__);                                 \
                fprintf(stderr, "\n");                                        \
            }                                                                 \
        }                                                                     \
    } while (0)

static inline int check_same_everywhere(int v, MPI_Comm comm)
{
    int lo, hi;
    MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, comm);
    return lo == hi;
}
#endif

#endif /* XCHG_TESTS_CHECK_H */

/*
 * a2av_cases.h - alltoallv test cases, checked against MPI_Alltoallv.
 *
 * A case is a pattern of counts (the same P x P matrix built from a seed on
 * every rank), a layout of displacements, a pair of send/receive datatypes
 * and whether the call is MPI_IN_PLACE. a2av_case_check runs MPI_Alltoallv
 * and the exchange under test on identical inputs, with receive buffers
 * pre-filled identically (sentinel bytes, or the in-place data), and
 * compares the whole receive buffers byte for byte: received blocks must
 * agree and bytes MPI leaves alone must stay alone.
 *
 * Uses only xchg.h and MPI, so it tests the library as a user sees it.
 */
#ifndef A2AV_CASES_H
#define A2AV_CASES_H

#include <mpi.h>
#include <stddef.h>

typedef struct a2av_case {
    char name[160];
    int P, rank;
    int *sendcounts, *sdispls, *recvcounts, *rdispls;
    MPI_Datatype sendtype, recvtype; /* owned (freed) when derived */
    char *sendbuf;
    size_t sendbytes;
    char *recv_init;                 /* initial receive buffer contents */
    size_t recvbytes;
    int in_place;
    int expect_ints;                 /* 1: values can be checked by formula too */
    char pattern[32];
    unsigned seed;
} a2av_case;

/* Patterns: random sparse zero hot imbalance self onesided large tiny.
 * Layouts: contig gaps_reversed.
 * Types: int pair_vs_int vector_vs_contig int_vs_resized lb_shift.
 * Returns 0 on success, -1 for an unknown name. Collective-free. */
int a2av_case_build(a2av_case *c, MPI_Comm comm, const char *pattern,
                    const char *layout, const char *types, int in_place,
                    unsigned seed);
void a2av_case_free(a2av_case *c);

/* The MPI error class of an xchg return code (MPI_SUCCESS for success), and
 * its message (xchg_error_string; "" for success), in a static buffer. */
int a2av_err_class(int rc);
const char *a2av_err_msg(int rc);

/* The exchange under test: MPI_Alltoallv's signature plus a context. */
typedef int (*a2av_runner)(void *ctx, const void *sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int rdispls[],
                           MPI_Datatype recvtype, MPI_Comm comm);

/* Runs reference and runner once each on comm. Collective over comm.
 * Returns 1 if this rank's result matches, 0 if not (why says how). */
int a2av_case_check(const a2av_case *c, MPI_Comm comm, a2av_runner run, void *ctx,
                    char *why, size_t whylen);

/* A byte exchange for the tests of auto: the send counts sc (P ints,
 * malloc'd by the caller, owned from here), the receive counts by
 * MPI_Alltoall on comm, packed displacements, a send buffer filled from
 * the rank, MPI_Alltoallv's result (ref) and a zeroed buffer of the same
 * size for the exchange under test (out). Collective over comm. */
typedef struct a2av_bytes {
    int *sc, *sd, *rc, *rd;
    char *sb, *ref, *out;
    int rt; /* bytes received */
} a2av_bytes;
void a2av_bytes_make(a2av_bytes *x, int *sc, MPI_Comm comm);
int a2av_bytes_same(const a2av_bytes *x); /* out equals ref */
void a2av_bytes_free(a2av_bytes *x);
/* Runs x through xchg on comm (out zeroed before every start): blocking
 * (how 0), nonblocking (1) or a persistent request started `starts`
 * times (2). Returns xchg's code; *ran gets what ran (the request's
 * algorithm where persistent, else xchg_get_stats's). */
enum { A2AV_BLOCKING, A2AV_NONBLOCKING, A2AV_PERSISTENT };
int a2av_bytes_run(a2av_bytes *x, int how, int starts, MPI_Comm comm, int *ran);

/* Lists used by the drivers. */
extern const char *const a2av_patterns[];
extern const char *const a2av_layouts[];
extern const char *const a2av_types[];

#endif

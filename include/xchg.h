/*
 * xchg.h - fast MPI all-to-all exchanges for irregular data.
 *
 * The one public header of libxchg. Every function returns an MPI error code
 * (MPI_SUCCESS on success). Errors are also raised through the error handler
 * of the caller's communicator, exactly as MPI's own collectives do, so with
 * the default MPI_ERRORS_ARE_FATAL a bad argument aborts with a message, and
 * with MPI_ERRORS_RETURN the code comes back; MPI_Error_string() on it gives
 * a message that names the offending argument.
 *
 * Buffers: xchg never keeps a pointer to a caller's buffer past the return of
 * a blocking call. Arrays it allocates for the caller are freed by the
 * matching xchg_*_free call named next to the function that returns them.
 *
 * Communicators: on first use of a communicator, xchg duplicates it
 * (collectively) and caches the duplicate on it with an attribute; all
 * library traffic uses that duplicate, so no message of the caller's is ever
 * matched by library traffic. The duplicate is freed when the caller frees
 * its communicator.
 */
#ifndef XCHG_H
#define XCHG_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XCHG_VERSION_MAJOR 0
#define XCHG_VERSION_MINOR 1
#define XCHG_VERSION_PATCH 0

/* Symbols of the library's API (everything else in libxchg is hidden). */
#if defined(XCHG_BUILDING) && defined(__GNUC__)
#define XCHG_API __attribute__((visibility("default")))
#else
#define XCHG_API
#endif

/*
 * Algorithms for xchg_alltoallv. The numbers are stable (they may be stored
 * in tuning tables); names are what the environment, the benchmark and
 * xchg_algo_from_name() use. xchg_algo_count()/xchg_algo_at() enumerate the
 * algorithms this build provides.
 */
typedef enum xchg_algo {
    XCHG_ALGO_INVALID = -1,        /* returned for an unknown name */
    XCHG_ALGO_AUTO = 0,            /* "auto": the library chooses */
    XCHG_ALGO_VENDOR = 1,          /* "vendor": MPI_Alltoallv itself */
    XCHG_ALGO_LINEAR = 2,          /* "linear": spread-out Irecv/Isend */
    XCHG_ALGO_PAIRWISE = 3,        /* "pairwise": P-1 Sendrecv steps */
    XCHG_ALGO_SCATTERED = 4,       /* "scattered": linear, K requests in flight */
    XCHG_ALGO_PADDED_ALLTOALL = 5, /* "padded_alltoall" */
    XCHG_ALGO_BRUCK_PADDED = 6,    /* "bruck_padded" */
    XCHG_ALGO_BRUCK_TWOPHASE = 7,  /* "bruck_twophase" */
    XCHG_ALGO_BRUCK_RADIX = 8,     /* "bruck_radix" */
    XCHG_ALGO_HIERARCHICAL = 9,    /* "hierarchical" */
    XCHG_ALGO_GRID = 10,           /* "grid" */
    XCHG_ALGO_RMA_FENCE = 11,      /* "rma_fence" */
    XCHG_ALGO_RMA_LOCK = 12        /* "rma_lock" */
} xchg_algo;

/* MPI_Alltoallv with the same signature and semantics (MPI_IN_PLACE as
 * sendbuf included). The algorithm is chosen automatically, identically on
 * every rank, unless the environment variable XCHG_ALLTOALLV_ALGO names one. */
XCHG_API int xchg_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/* The same, with one algorithm forced (XCHG_ALGO_AUTO lets the library
 * choose and ignores XCHG_ALLTOALLV_ALGO). All ranks must pass the same algo.
 * An invalid algo gives MPI_ERR_ARG. */
XCHG_API int xchg_alltoallv_algo(xchg_algo algo, const void *sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm);

/* Name <-> id. xchg_algo_from_name returns XCHG_ALGO_INVALID for an unknown
 * name (including one this build does not provide); xchg_algo_name returns
 * NULL for an invalid id. The returned string is static. */
XCHG_API xchg_algo xchg_algo_from_name(const char *name);
XCHG_API const char *xchg_algo_name(xchg_algo algo);

/* The algorithms this build provides, excluding "auto": ids for
 * i = 0 .. xchg_algo_count()-1, in registry order. */
XCHG_API int xchg_algo_count(void);
XCHG_API xchg_algo xchg_algo_at(int i);

/* The message of an error code returned by xchg, naming the argument at
 * fault; for any other code, what MPI_Error_string says. string must hold
 * MPI_MAX_ERROR_STRING characters. Prefer it to MPI_Error_string: MPICH 4.0
 * returns a wrong string for error codes a library adds to a standard class. */
XCHG_API int xchg_error_string(int code, char *string, int *resultlen);

/* What the last xchg call on a communicator did, on this rank. */
typedef struct xchg_stats {
    xchg_algo algo;          /* the algorithm that ran ("auto" resolved) */
    size_t temp_bytes;       /* temporary memory it allocated on this rank */
    unsigned long calls;     /* xchg calls made on this communicator so far */
} xchg_stats;

/* Fills *stats for the calling rank. Not collective. A communicator xchg has
 * never used gives algo XCHG_ALGO_INVALID, temp_bytes 0, calls 0. */
XCHG_API int xchg_get_stats(MPI_Comm comm, xchg_stats *stats);

#ifdef __cplusplus
}
#endif
#endif /* XCHG_H */

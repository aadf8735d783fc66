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

/*
 * Persistent exchange: the same exchange shape run many times, as MPI-4's
 * MPI_Alltoallv_init / MPI_Start / MPI_Wait / MPI_Request_free.
 *
 * xchg_alltoallv_init is collective over comm and does all one-time work
 * (algorithm choice, message schedules, datatype handling, RMA windows,
 * exchange of remote displacements); each xchg_start then only moves data.
 * Buffers, counts, displacements and datatypes are fixed at init; the
 * contents of the buffers may change between starts. xchg copies the four
 * count/displacement arrays and duplicates derived datatypes at init, so the
 * caller may free or reuse them right after init returns. The buffers must
 * stay valid until xchg_request_free. With MPI_IN_PLACE as sendbuf, the data
 * sent by each start is what recvbuf's blocks hold when xchg_start is called.
 * comm must not be freed before the request.
 *
 * xchg_start (collective, all ranks start the same request in the same
 * order) begins one exchange; between xchg_start and the completing
 * xchg_wait/xchg_test the buffers must not be touched. Some algorithms
 * complete the whole exchange inside xchg_start (those without a
 * persistent plan of their own replay the blocking call); xchg_wait is then
 * immediate. xchg_test sets *flag to 1 once the exchange is complete (the
 * request is then inactive again), else to 0.
 * xchg_request_free (collective: it may free an RMA window) frees an
 * inactive request and sets *req to XCHG_REQUEST_NULL.
 *
 * Errors (MPI_ERR_REQUEST, raised through comm's error handler, or
 * MPI_COMM_SELF's for a NULL request): starting an active request,
 * waiting/testing an inactive one, freeing an active one, a NULL request.
 * The plain init honours XCHG_ALLTOALLV_ALGO, as xchg_alltoallv does. info
 * is reserved (pass MPI_INFO_NULL).
 */
typedef struct xchg_request_s *xchg_request;
#define XCHG_REQUEST_NULL ((xchg_request)0)

XCHG_API int xchg_alltoallv_init(const void *sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        xchg_request *req);
/* The same with one algorithm forced, as xchg_alltoallv_algo. */
XCHG_API int xchg_alltoallv_init_algo(xchg_algo algo, const void *sendbuf,
                        const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, xchg_request *req);
XCHG_API int xchg_start(xchg_request req);
XCHG_API int xchg_wait(xchg_request req);
XCHG_API int xchg_test(xchg_request req, int *flag);
XCHG_API int xchg_request_free(xchg_request *req);
/* The algorithm a request runs ("auto" resolved at init). */
XCHG_API xchg_algo xchg_request_algo(xchg_request req);

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

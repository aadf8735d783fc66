/*
 * xchg.h - fast MPI all-to-all exchanges for irregular data.
 *
 * The one public header of libxchg. Every function returns an MPI error code
 * (MPI_SUCCESS on success). Errors are also raised through the error handler
 * of the caller's communicator, exactly as MPI's own collectives do, so with
 * the default MPI_ERRORS_ARE_FATAL a bad argument aborts with a message, and
 * with MPI_ERRORS_RETURN the code comes back; MPI_Error_string() (or
 * xchg_error_string) on it gives a message that names the rank and the
 * offending argument ("xchg: rank 2: sendbuf is NULL but sendcounts[0] is 2").
 *
 * Buffers: xchg never keeps a pointer to a caller's buffer past the return of
 * a blocking call. Arrays it allocates for the caller are freed by the
 * matching xchg_*_free call named next to the function that returns them.
 *
 * Communicators: when xchg sets a communicator up, it duplicates it
 * (collectively) and caches the duplicate on it with an attribute; all
 * library traffic uses that duplicate, so no message of the caller's is
 * ever matched by library traffic. The duplicate is freed when the caller
 * frees its communicator. Set-up happens at the first exchange, except in
 * xchg_alltoallv (auto): its first calls on a communicator are MPI's own
 * MPI_Alltoallv, until set-up pays back (docs/setup.md). If MPI refuses
 * the duplicate (MPICH allows 2048 communicators per process), the call
 * returns an error naming the limit, the same class on every rank (auto
 * keeps MPI's own call instead); see xchg_comm_prepare.
 */
#ifndef XCHG_H
#define XCHG_H

#include <mpi.h>
#include <stddef.h>

#include "xchg_config.h" /* XCHG_HAVE_LARGE_COUNT: what the MPI library offered at build time */

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
    XCHG_ALGO_RMA_LOCK = 12,       /* "rma_lock" */
    XCHG_ALGO_MPICH_MODEL = 13,    /* "mpich_model": baseline, MPICH 4.0's default */
    XCHG_ALGO_OMPI_MODEL = 14,     /* "ompi_model": baseline, Open MPI 4.1's default */
    XCHG_ALGO_HYBRID = 15,         /* "hybrid": small blocks by radix Bruck, large directly */
    XCHG_ALGO_NODE_PAIRS = 16,     /* "node_pairs": one message per node pair, no leader */
    XCHG_ALGO_MULTILEADER = 17,    /* "multileader": k leaders per node, one message per leader pair */
    XCHG_ALGO_BRUCK_2LEVEL = 18,   /* "bruck_2level": radix Bruck across, then inside nodes */
    XCHG_ALGO_SHM = 19,            /* "shm": through a node-shared window, ranks on one node */
    XCHG_ALGO_NODE_PAIRS_SHM = 20, /* "node_pairs_shm": node_pairs, node steps through a window */
    XCHG_ALGO_BRUCK_2LEVEL_SHM = 21 /* "bruck_2level_shm": bruck_2level, node phase through a window */
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
 * name (including one this build does not provide, and NULL); a call given
 * that id fails with MPI_ERR_ARG saying so. xchg_algo_name returns a string
 * for any id, never NULL: "invalid" for an id that is no algorithm of this
 * build (xchg_algo_from_name("invalid") is XCHG_ALGO_INVALID). The
 * returned string is static. */
XCHG_API xchg_algo xchg_algo_from_name(const char *name);
XCHG_API const char *xchg_algo_name(xchg_algo algo);

/* The algorithms this build provides, excluding "auto": ids for
 * i = 0 .. xchg_algo_count()-1, in registry order. */
XCHG_API int xchg_algo_count(void);
XCHG_API xchg_algo xchg_algo_at(int i);

/* 1 if algo is a baseline, a reference to compare against rather than a
 * candidate: "vendor" (the MPI library's own MPI_Alltoallv) and the models
 * of MPICH 4.0's and Open MPI 4.1's default algorithms ("mpich_model",
 * "ompi_model"). The automatic choice, tuning tables and xchg-tune never
 * pick one. 0 for any other algorithm, "auto" or an invalid id. */
XCHG_API int xchg_algo_is_baseline(xchg_algo algo);

/* The message of an error code returned by xchg, "xchg: rank N: ...", N
 * the process's rank in MPI_COMM_WORLD, naming the argument at fault; for
 * any other code, what MPI_Error_string says. string must hold
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
 * complete the whole exchange inside xchg_start (rma_fence); the others
 * return once their first messages are posted, and the exchange advances
 * in xchg_test/xchg_wait (of this or any other xchg request). xchg_test
 * sets *flag to 1 once the exchange is complete (the request is then
 * inactive again), else to 0.
 * xchg_request_free (collective: it may free an RMA window) frees an
 * inactive request and sets *req to XCHG_REQUEST_NULL.
 *
 * Inactive requests, as MPI_Wait and MPI_Test treat MPI_REQUEST_NULL and
 * inactive persistent requests: xchg_wait, xchg_test and xchg_waitall on
 * a request that is not active (a persistent one never started or already
 * completed, a nonblocking one already completed, XCHG_REQUEST_NULL)
 * return MPI_SUCCESS at once, xchg_test with *flag = 1. So polling with
 * xchg_test and then calling xchg_wait is fine:
 *     xchg_start(req);
 *     while (!flag) { work(); xchg_test(req, &flag); }
 *     xchg_wait(req);   (returns at once: the request is inactive)
 * This holds for every kind of xchg request (persistent, nonblocking,
 * neighbour, large count).
 *
 * Errors (MPI_ERR_REQUEST, raised through comm's error handler, or
 * MPI_COMM_SELF's for a NULL request): starting an active request,
 * freeing an active one, starting or freeing XCHG_REQUEST_NULL.
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
/* As MPI_Waitall: completes every request of reqs[0..count) (any kinds,
 * any communicators; XCHG_REQUEST_NULL and inactive ones are skipped),
 * advancing all of them while it waits, whatever order the partners
 * complete them in. Returns MPI_SUCCESS, or the error of the failing
 * request with the lowest index (each error has gone through its own
 * request's error handler; the others are completed all the same).
 * count < 0 (MPI_ERR_COUNT) or reqs NULL with count > 0 (MPI_ERR_ARG):
 * MPI_COMM_SELF's error handler. The requests stay allocated (persistent
 * and nonblocking alike) until xchg_request_free. */
XCHG_API int xchg_waitall(int count, xchg_request reqs[]);
XCHG_API int xchg_request_free(xchg_request *req);
/* The algorithm a request runs ("auto" resolved at init; for
 * xchg_ialltoallv, the one that ran, once complete). */
XCHG_API xchg_algo xchg_request_algo(xchg_request req);
/* Where the active request *req is MPI's own nonblocking call (auto
 * passed a new communicator's xchg_ialltoallv to MPI_Ialltoallv:
 * docs/setup.md), hands MPI's request over: *mpi_req gets it, *req is
 * freed and set to XCHG_REQUEST_NULL, and 1 is returned; complete it
 * with MPI's own calls (MPI_Wait, MPI_Test, ...), as MPI_Ialltoallv's.
 * Else 0, and nothing changes. A program that mixes xchg's and MPI's
 * requests, or wraps xchg's in its own (the preload), saves the wrapping
 * on such calls. */
XCHG_API int xchg_request_to_mpi(xchg_request *req, MPI_Request *mpi_req);

/*
 * Nonblocking exchange, as MPI_Ialltoallv: the same arguments as
 * xchg_alltoallv plus a request; every algorithm and auto (its choice is
 * agreed as in the blocking call). Collective: every rank starts the same
 * exchanges on comm in the same order. Returns once the exchange has
 * posted what it can without waiting; it advances whenever the caller
 * tests or waits for any xchg request (xchg_test, xchg_wait), and is
 * complete when xchg_wait returns or xchg_test sets *flag. Until then the
 * buffers and the count/displacement arrays must not be touched (xchg
 * copies the arrays and duplicates derived types, so freeing a type at
 * once is allowed, as in MPI). Several exchanges may be outstanding, on
 * one communicator (they run one after the other, in start order) or on
 * several (side by side); a blocking xchg call on comm first completes the
 * ones outstanding there. The request then stays until xchg_request_free
 * (it cannot be restarted: xchg_start refuses it), inactive: where MPI
 * would have set the handle to MPI_REQUEST_NULL, a further xchg_wait or
 * xchg_test on it returns MPI_SUCCESS at once. Errors (the blocking
 * call's, agreed the same way) come from the completing xchg_wait or
 * xchg_test, through comm's error handler; an error found before anything
 * starts (no valid comm, req NULL) from xchg_ialltoallv itself.
 * auto's first calls on a new communicator are MPI's own MPI_Ialltoallv
 * until set-up pays back, as the blocking call's (docs/setup.md); then
 * the request is that call's, and the arrays are not copied.
 * Limits: an exchange that sets a communicator up makes xchg's state for
 * it (collective, blocking; xchg_comm_prepare does it beforehand); rma_fence
 * and rma_lock synchronise their windows by blocking MPI calls inside test
 * and wait; the node-aware algorithms (hierarchical, node_pairs,
 * multileader, bruck_2level) split node communicators (blocking, at the
 * start of their first exchange on a communicator; auto's first exchange on
 * a communicator of several multi-rank nodes makes them too, since auto may
 * choose one); shm makes its node-shared window the same way, at its first
 * exchange and at the first after one that needed a larger window.
 * docs/user-guide.md "Nonblocking use".
 */
XCHG_API int xchg_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             xchg_request *req);
/* The same with one algorithm forced, as xchg_alltoallv_algo. */
XCHG_API int xchg_ialltoallv_algo(xchg_algo algo, const void *sendbuf, const int sendcounts[],
                                  const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req);

/* Collective over comm: makes xchg's state for comm and its private
 * duplicate now rather than at the first exchange (xchg_alltoallv's auto
 * then runs its choice from the first call on comm instead of MPI's own
 * call until set-up pays back: the caller announces reuse). If MPI refuses the
 * duplicate (its limit on communicators is reached: MPICH allows 2048 per
 * process, and xchg holds one per communicator it exchanges on), *ready is
 * 0 on every rank and MPI_SUCCESS is returned: the caller may then use MPI
 * itself on comm, as the preload library does. Otherwise *ready is 1 and
 * exchanges on comm need no new communicator (except the algorithms that
 * build their own: the node-aware ones' node communicators, and the MPI windows of rma_* and of the
 * sparse rma). A refusal is remembered on comm: MPI is asked again after
 * 1, 2, 4, ... at most 64 calls of xchg on comm (this one included).
 * Other errors (an invalid comm, a NULL ready) go through comm's error
 * handler as usual. */
XCHG_API int xchg_comm_prepare(MPI_Comm comm, int *ready);

/* The MPI library xchg was built with, as its mpi.h said: "MPICH 4.0.2",
 * "Open MPI 4.1.4". Static string. */
XCHG_API const char *xchg_mpi_built_with(void);

/* Whether the MPI library running this program is the one xchg was built
 * with (MPI_Get_library_version against the build's mpi.h; no handle is
 * touched, callable before MPI_Init): 1 yes (also for an MPICH-based
 * library such as Intel MPI under an MPICH build, or an unknown one);
 * 0 the same flavour but another major version (handles compatible: xchg
 * calls fail with MPI_ERR_OTHER through the error handler); -1 another
 * flavour, MPICH's ABI against Open MPI's (handles incompatible: xchg
 * calls print why on stderr once and return the running library's
 * MPI_ERR_OTHER without touching any handle). why (may be NULL) gets the
 * reason, "" for 1. Every xchg entry point makes this check itself. */
XCHG_API int xchg_mpi_compatible(char *why, int whylen);
/*
 * Large counts, as MPI-4's MPI_Alltoallv_c and MPI_Alltoallv_init_c:
 * MPI_Count counts and MPI_Aint displacements (in extents of the datatype,
 * as always). Declared where the MPI library xchg was built with has
 * MPI_Alltoallv_c (XCHG_HAVE_LARGE_COUNT is 1: MPICH 4; Open MPI 4.1 has
 * not), found when xchg was configured.
 *
 * xchg's algorithms address a block with an int count and an int
 * displacement (the bytes they move and the offsets they compute are
 * 64-bit: a block of 2^28 doubles, 2 GiB, is fine). These calls convert
 * the arrays once, on entry, and agree across ranks (one MPI_Allreduce of
 * a flag on xchg's private communicator, every call; once at init) whether
 * every rank's values fit:
 *   - they do: the call is exactly xchg_alltoallv (or _algo, _init, ...)
 *     with those values;
 *   - some rank's do not (a count above INT_MAX, a displacement outside
 *     int): with "auto" (and "vendor") every rank passes the call to the MPI
 *     library's own MPI_Alltoallv_c (MPI_Alltoallv_init_c) on xchg's
 *     private communicator, and xchg_stats.passed_to_mpi says so; with any
 *     other algorithm forced, every rank returns MPI_ERR_COUNT, the failing
 *     rank's message naming the argument ("sendcounts[3] is 3000000000"),
 *     the others naming the failing rank.
 * A negative count is an argument error, as in xchg_alltoallv.
 */
#if XCHG_HAVE_LARGE_COUNT
XCHG_API int xchg_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                     MPI_Datatype recvtype, MPI_Comm comm);
XCHG_API int xchg_alltoallv_algo_c(xchg_algo algo, const void *sendbuf,
                     const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
XCHG_API int xchg_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                     xchg_request *req);
XCHG_API int xchg_alltoallv_init_algo_c(xchg_algo algo, const void *sendbuf,
                     const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Info info, xchg_request *req);
/* Nonblocking, as xchg_ialltoallv: the agreement on whether every rank's
 * values fit in int is part of the exchange (a nonblocking reduction), so
 * the start does not wait for partners; MPI_Ialltoallv_c does the work
 * where they do not (auto, vendor). */
XCHG_API int xchg_ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                     MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req);
XCHG_API int xchg_ialltoallv_algo_c(xchg_algo algo, const void *sendbuf,
                     const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     xchg_request *req);
#endif

/* xchg_stats.passed_to_mpi: why the last call was MPI's own. */
enum { XCHG_PASSED_BEYOND_INT = 1, XCHG_PASSED_BEFORE_SETUP = 2, XCHG_PASSED_SLOWER = 3 };

/* What the last xchg call on a communicator did, on this rank. */
typedef struct xchg_stats {
    xchg_algo algo;          /* the algorithm that ran ("auto" resolved);
                                XCHG_ALGO_INVALID after a sparse exchange */
    size_t temp_bytes;       /* temporary memory it allocated on this rank */
    unsigned long calls;     /* xchg calls made on this communicator so far */
    int sparse_algo;         /* the xchg_sparse_algo of the last sparse exchange
                                ("auto" resolved); XCHG_SPARSE_INVALID (-1) after
                                an alltoallv or before any sparse exchange */
    int passed_to_mpi;       /* the last call was passed to the MPI library's
                                own (algo is then XCHG_ALGO_VENDOR):
                                XCHG_PASSED_BEYOND_INT: a large-count one
                                (xchg_alltoallv_c, ..._init_c) passed to
                                MPI_Alltoallv_c(_init_c) because some rank's
                                counts did not fit in int;
                                XCHG_PASSED_BEFORE_SETUP: one of a new
                                communicator's first auto calls
                                (xchg_alltoallv, xchg_alltoallv_c), MPI's own
                                until set-up pays back (docs/setup.md);
                                XCHG_PASSED_SLOWER: an auto call on a
                                communicator where auto measured its choice
                                slower than MPI's own call (docs/setup.md),
                                until the statistics move;
                                else 0 */
    int neighbor_algo;       /* the xchg_neighbor_algo of the last neighbour
                                exchange on this communicator ("auto" resolved;
                                other calls leave it as it is);
                                XCHG_NEIGHBOR_INVALID (-1) before any. A neighbour
                                exchange sets algo and sparse_algo to INVALID */
    size_t shm_bytes;        /* node-shared memory of the windows this process
                                takes part in, all communicators together (each
                                node segment's bytes; blocking calls of
                                communicators with one group share one window:
                                docs/setup.md) */
} xchg_stats;

/* Fills *stats for the calling rank. Not collective. A communicator xchg has
 * never used gives algo XCHG_ALGO_INVALID, temp_bytes 0, calls 0,
 * sparse_algo XCHG_SPARSE_INVALID (shm_bytes is the process's, always). */
XCHG_API int xchg_get_stats(MPI_Comm comm, xchg_stats *stats);

/*
 * Dynamic sparse data exchange.
 *
 * Each rank knows only whom it sends to: ndest destinations, each with a
 * count and a displacement (in extents of `type`, as in MPI_Alltoallv) into
 * one send buffer. Receivers learn who sent to them and how much. The call
 * is collective over comm: every rank calls it, with ndest = 0 if it sends
 * nothing.
 *
 * Rules on the input, checked before any communication:
 *   - dests[i] in [0, size of comm), else MPI_ERR_RANK;
 *   - each destination at most once, else MPI_ERR_ARG naming both entries;
 *   - sendcounts[i] >= 0, else MPI_ERR_COUNT;
 *   - a send to self is allowed and is delivered like any other message;
 *   - an entry with sendcounts[i] == 0 sends nothing: the receiver sees no
 *     message from this rank (it cannot tell it from "not a destination",
 *     exactly as with MPI_Alltoall of counts + MPI_Alltoallv).
 * Every rank must pass datatypes of the same type signature per element.
 * A datatype of size 0 is allowed: the receiver still gets each message
 * with its count.
 *
 * Results come one of two ways:
 *   (a) a callback per received message, called on the receiving rank
 *       during the exchange, in arrival order (unspecified);
 *   (b) a packed result (xchg_sparse_result) sorted by source.
 */
typedef enum xchg_sparse_algo {
    XCHG_SPARSE_INVALID = -1, /* returned for an unknown name */
    XCHG_SPARSE_AUTO = 0,     /* "auto": the library chooses */
    XCHG_SPARSE_PEX = 1,      /* "pex": MPI_Alltoall of counts, then point-to-point */
    XCHG_SPARSE_RSX = 2,      /* "rsx": MPI_Reduce_scatter_block census, then Probe/Recv */
    XCHG_SPARSE_NBX = 3,      /* "nbx": Issend, Iprobe, nonblocking barrier (Hoefler 2010) */
    XCHG_SPARSE_RMA = 4,      /* "rma": counts by MPI_Put into a window, then point-to-point */
    XCHG_SPARSE_PEX_LOC = 5,  /* "pex_loc": pex's census per node, one aggregate per node pair */
    XCHG_SPARSE_NBX_LOC = 6,  /* "nbx_loc": nbx's protocol per step, one aggregate per node pair */
    XCHG_SPARSE_PEX_LOC_SHM = 7 /* "pex_loc_shm": pex_loc, inside each node through shared memory */
} xchg_sparse_algo;

/* Called once per received message: `count` elements of the datatype from
 * rank `source` of comm. `data` addresses them as MPI would (element i at
 * data + i * extent; for a contiguous type, simply the values). It points
 * into the library's (or, for a self-send, the caller's send) buffer and is
 * valid only during the call: copy what you keep. The callback must not
 * call xchg or communicate on comm. A nonzero return makes the exchange
 * return MPI_ERR_OTHER after it completes (it still completes, since other
 * ranks depend on it) and no further callbacks are made on this rank. */
typedef int (*xchg_sparse_recv_fn)(int source, int count, const void *data, void *ctx);

/* The packed result of a sparse exchange, owned by the caller after the
 * call and released with xchg_sparse_result_free. Sorted by source. */
typedef struct xchg_sparse_result {
    int nsources;   /* messages received (zero-count entries are never sent) */
    int *sources;   /* the nsources sending ranks, ascending */
    int *counts;    /* counts[i] elements came from sources[i] */
    int *displs;    /* ... starting at element displs[i] of recvbuf (extents of the
                       datatype), in source order with no gaps */
    void *recvbuf;  /* all received data, addressed as MPI would address
                       sum(counts) elements of the datatype (NULL if none) */
    void *mem_;     /* the library's: the allocation behind recvbuf */
} xchg_sparse_result;

/* Exchange with a callback per received message. The algorithm is chosen
 * automatically, identically on every rank, unless the environment variable
 * XCHG_SPARSE_ALGO names one (an unknown name is an MPI_ERR_ARG error).
 * The automatic choice uses P and what the previous sparse call on comm
 * sent (its census), so a change of pattern is followed one call later.
 * One rank's argument error fails every rank with the same class where the
 * algorithm's census carries it (pex, rsx: so always under auto), else on
 * that rank only (nbx, rma; XCHG_CHECK=1 agrees it there too). */
XCHG_API int xchg_sparse_exchange(int ndest, const int dests[], const void *sendbuf,
                                  const int sendcounts[], const int sdispls[],
                                  MPI_Datatype type, xchg_sparse_recv_fn fn, void *ctx,
                                  MPI_Comm comm);

/* Exchange into a packed result (*result is overwritten, not freed first;
 * on error it is left empty and safe to free). Algorithm as above. */
XCHG_API int xchg_sparse_exchange_result(int ndest, const int dests[], const void *sendbuf,
                                         const int sendcounts[], const int sdispls[],
                                         MPI_Datatype type, xchg_sparse_result *result,
                                         MPI_Comm comm);

/* Either form with the algorithm forced (XCHG_SPARSE_AUTO lets the library
 * choose and ignores XCHG_SPARSE_ALGO). Exactly one of fn and result must be
 * non-NULL. All ranks must pass the same algo. */
XCHG_API int xchg_sparse_exchange_algo(xchg_sparse_algo algo, int ndest, const int dests[],
                                       const void *sendbuf, const int sendcounts[],
                                       const int sdispls[], MPI_Datatype type,
                                       xchg_sparse_recv_fn fn, void *ctx,
                                       xchg_sparse_result *result, MPI_Comm comm);

/* Frees what a packed result holds and empties it (NULL or empty: no-op). */
XCHG_API int xchg_sparse_result_free(xchg_sparse_result *result);

/* Name <-> id of sparse algorithms ("pex", "rsx", "nbx", "rma", "pex_loc",
 * "nbx_loc", "auto"), as xchg_algo_from_name/xchg_algo_name (an unknown
 * name gives XCHG_SPARSE_INVALID, an invalid id the name "invalid"); and the
 * algorithms of this build, excluding "auto", for i = 0 ..
 * xchg_sparse_algo_count()-1. */
XCHG_API xchg_sparse_algo xchg_sparse_algo_from_name(const char *name);
XCHG_API const char *xchg_sparse_algo_name(xchg_sparse_algo algo);
XCHG_API int xchg_sparse_algo_count(void);
XCHG_API xchg_sparse_algo xchg_sparse_algo_at(int i);

/*
 * Neighbour exchange on a communicator with a topology, as MPI's
 * MPI_Neighbor_alltoallv (MPI-3) and MPI_Neighbor_alltoallv_init (MPI-4):
 * the graph is known and fixed for the communicator's life (halo
 * exchanges, sparse matrix-vector products), so xchg reads and analyses
 * it once per communicator (or once per persistent request) and each call
 * only moves data. docs/neighbor.md.
 *
 * comm must carry a topology, else MPI_ERR_TOPOLOGY:
 *   - xchg's own distributed graph (xchg_dist_graph_create_adjacent,
 *     below): as MPI's;
 *   - a distributed graph (MPI_Dist_graph_create_adjacent,
 *     MPI_Dist_graph_create): receive block i comes from the i-th source
 *     and send block j goes to the j-th destination, in the order
 *     MPI_Dist_graph_neighbors gives them (weights are ignored);
 *   - a Cartesian grid (MPI_Cart_create): 2 x ndims blocks on each side,
 *     for each dimension d first the neighbour at -1 then at +1
 *     (MPI_Cart_shift(comm, d, 1)); a missing neighbour of a non-periodic
 *     dimension (MPI_PROC_NULL) has a block that moves nothing;
 *   - a graph (MPI_Graph_create): the MPI_Graph_neighbors of the rank, in
 *     that order, as sources and as destinations.
 * A neighbour may appear several times, the rank itself too: the k-th
 * block this rank sends to a neighbour is received by the k-th block that
 * neighbour receives from this rank (MPI's order of messages, which is
 * what MPICH and Open MPI do).
 * Counts and displacements (in extents of the datatypes) have indegree
 * entries on the receive side and outdegree entries on the send side.
 * Block sizes must match as in MPI_Alltoallv (a block larger than its
 * receive gives MPI_ERR_TRUNCATE on the receiver). MPI_IN_PLACE is not
 * allowed (MPI does not allow it either): MPI_ERR_BUFFER.
 *
 * Buffers: the blocking call keeps no pointer past its return. The
 * nonblocking and persistent forms copy the count/displacement arrays and
 * duplicate derived datatypes when called, as xchg_ialltoallv and
 * xchg_alltoallv_init do; their buffers belong to xchg from the call (or
 * each xchg_start) until the completing xchg_wait/xchg_test.
 *
 * Errors: an argument error (a negative count, a NULL or uncommitted
 * datatype, NULL arrays with blocks to describe, a communicator without
 * topology) is found before any data moves and named in the message. It
 * is agreed, every rank failing with the same class, where a collective
 * runs anyway: the first neighbour exchange on a communicator (which reads
 * and agrees on the graph) and every persistent init; with XCHG_CHECK=1
 * on every call. Elsewhere it is the failing rank's only (its partners
 * may then wait), as for xchg_alltoallv's direct algorithms.
 *
 * Algorithms: XCHG_NEIGHBOR_ALGO (environment) forces one for the calls
 * without _algo; auto chooses once per communicator (per request for the
 * persistent form), identically on every rank.
 */
typedef enum xchg_neighbor_algo {
    XCHG_NEIGHBOR_INVALID = -1, /* returned for an unknown name */
    XCHG_NEIGHBOR_AUTO = 0,     /* "auto": the library chooses */
    XCHG_NEIGHBOR_DIRECT = 1,   /* "direct": one message per neighbour, receives pre-posted */
    XCHG_NEIGHBOR_LOCALITY = 2, /* "locality": one aggregate per other node, handed on there */
    XCHG_NEIGHBOR_MPICH_MODEL = 3, /* "mpich_model": baseline, MPICH 4's MPI_Neighbor_alltoallv
                                      (every block sent, zero-size too; never chosen by auto) */
    XCHG_NEIGHBOR_LOCALITY_SHM = 4 /* "locality_shm": locality with the steps inside a node
                                      through a node-shared window */
} xchg_neighbor_algo;

/* A distributed-graph communicator whose graph xchg holds, for an MPI
 * that cannot make one (SimGrid SMPI) or a caller who wants the graph
 * checked: the same arguments and meaning as MPI_Dist_graph_create_adjacent
 * (collective over comm_old; weights, info and reorder are accepted and
 * ignored: ranks keep their order). *comm_dist_graph is a duplicate of
 * comm_old on which the xchg neighbour exchanges (every form below) see
 * this graph; MPI's own topology functions and neighbour collectives do
 * not (it carries no MPI topology), and a duplicate of it (MPI_Comm_dup)
 * carries no graph. Free it with MPI_Comm_free.
 *
 * Unlike MPI, the graph is checked, at the cost of one MPI_Alltoall of P
 * ints: every edge s -> d must be listed as many times among s's
 * destinations as among d's sources (else a receive would wait for
 * ever). A negative degree, NULL arrays with neighbours to list, a rank
 * outside comm_old (MPI_ERR_RANK) or an inconsistent graph
 * (MPI_ERR_TOPOLOGY, naming the first rank pair that differs) fails on
 * every rank alike, *comm_dist_graph = MPI_COMM_NULL, raised on comm_old. */
XCHG_API int xchg_dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                             const int sources[], const int sourceweights[],
                                             int outdegree, const int destinations[],
                                             const int destweights[], MPI_Info info,
                                             int reorder, MPI_Comm *comm_dist_graph);

XCHG_API int xchg_neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                     const int sdispls[], MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[],
                                     const int rdispls[], MPI_Datatype recvtype,
                                     MPI_Comm comm);
/* The same with one algorithm forced (XCHG_NEIGHBOR_AUTO lets the library
 * choose and ignores XCHG_NEIGHBOR_ALGO). All ranks must pass the same
 * algo; one this build lacks gives MPI_ERR_ARG. */
XCHG_API int xchg_neighbor_alltoallv_algo(xchg_neighbor_algo algo, const void *sendbuf,
                                          const int sendcounts[], const int sdispls[],
                                          MPI_Datatype sendtype, void *recvbuf,
                                          const int recvcounts[], const int rdispls[],
                                          MPI_Datatype recvtype, MPI_Comm comm);
/* Persistent, as MPI_Neighbor_alltoallv_init: collective; the graph is
 * analysed, the algorithm chosen and every message prepared (direct:
 * MPI_Send_init/MPI_Recv_init) once here; each xchg_start only starts
 * them. Requests work with xchg_start, xchg_wait, xchg_test and
 * xchg_request_free as those of xchg_alltoallv_init (same rules). info is
 * reserved (pass MPI_INFO_NULL). */
XCHG_API int xchg_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                          const int sdispls[], MPI_Datatype sendtype,
                                          void *recvbuf, const int recvcounts[],
                                          const int rdispls[], MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info info, xchg_request *req);
XCHG_API int xchg_neighbor_alltoallv_init_algo(xchg_neighbor_algo algo, const void *sendbuf,
                                               const int sendcounts[], const int sdispls[],
                                               MPI_Datatype sendtype, void *recvbuf,
                                               const int recvcounts[], const int rdispls[],
                                               MPI_Datatype recvtype, MPI_Comm comm,
                                               MPI_Info info, xchg_request *req);
/* Nonblocking, as MPI_Ineighbor_alltoallv: completes with xchg_wait,
 * xchg_test or xchg_waitall (then inactive, as xchg_ialltoallv's), freed
 * with xchg_request_free (it cannot be restarted); runs in start order
 * with the other nonblocking xchg exchanges on comm. */
XCHG_API int xchg_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                      const int sdispls[], MPI_Datatype sendtype,
                                      void *recvbuf, const int recvcounts[],
                                      const int rdispls[], MPI_Datatype recvtype,
                                      MPI_Comm comm, xchg_request *req);
XCHG_API int xchg_ineighbor_alltoallv_algo(xchg_neighbor_algo algo, const void *sendbuf,
                                           const int sendcounts[], const int sdispls[],
                                           MPI_Datatype sendtype, void *recvbuf,
                                           const int recvcounts[], const int rdispls[],
                                           MPI_Datatype recvtype, MPI_Comm comm,
                                           xchg_request *req);
#if XCHG_HAVE_LARGE_COUNT
/* Large counts, as MPI-4's MPI_Neighbor_alltoallv_c (where the MPI has it:
 * MPICH 4): MPI_Count counts, MPI_Aint displacements, converted to int on
 * entry; whether every rank's values fit is agreed by one MPI_Allreduce
 * per call. If they fit, the call is exactly xchg_neighbor_alltoallv (or
 * _algo); if some rank's do not, auto (and XCHG_NEIGHBOR_ALGO unset or
 * auto) passes the call to the MPI library's MPI_Neighbor_alltoallv_c on
 * xchg's private communicator (xchg_stats.passed_to_mpi = 1), a forced
 * algorithm fails with MPI_ERR_COUNT on every rank, the failing rank
 * naming the argument. The nonblocking and persistent _c forms do the
 * same: all fit, the int form's request; some rank's do not, auto's
 * request runs MPI's blocking MPI_Neighbor_alltoallv_c on the private
 * communicator at the call (nonblocking) or at each xchg_start
 * (persistent), so it is complete when they return. On xchg's own graph
 * (xchg_dist_graph_create_adjacent) values beyond int fail with
 * MPI_ERR_COUNT on every rank: MPI cannot take a call on it. */
XCHG_API int xchg_neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                       const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                       void *recvbuf, const MPI_Count recvcounts[],
                                       const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                       MPI_Comm comm);
XCHG_API int xchg_neighbor_alltoallv_algo_c(xchg_neighbor_algo algo, const void *sendbuf,
                                            const MPI_Count sendcounts[],
                                            const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                            void *recvbuf, const MPI_Count recvcounts[],
                                            const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                            MPI_Comm comm);
XCHG_API int xchg_ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                        const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                        void *recvbuf, const MPI_Count recvcounts[],
                                        const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                        MPI_Comm comm, xchg_request *req);
XCHG_API int xchg_ineighbor_alltoallv_algo_c(xchg_neighbor_algo algo, const void *sendbuf,
                                             const MPI_Count sendcounts[],
                                             const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                             void *recvbuf, const MPI_Count recvcounts[],
                                             const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                             MPI_Comm comm, xchg_request *req);
XCHG_API int xchg_neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                            const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                            void *recvbuf, const MPI_Count recvcounts[],
                                            const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                            MPI_Comm comm, MPI_Info info, xchg_request *req);
XCHG_API int xchg_neighbor_alltoallv_init_algo_c(xchg_neighbor_algo algo, const void *sendbuf,
                                                 const MPI_Count sendcounts[],
                                                 const MPI_Aint sdispls[],
                                                 MPI_Datatype sendtype, void *recvbuf,
                                                 const MPI_Count recvcounts[],
                                                 const MPI_Aint rdispls[],
                                                 MPI_Datatype recvtype, MPI_Comm comm,
                                                 MPI_Info info, xchg_request *req);
#endif
/* The algorithm a neighbour request runs ("auto" resolved);
 * XCHG_NEIGHBOR_INVALID for any other request. */
XCHG_API xchg_neighbor_algo xchg_request_neighbor_algo(xchg_request req);

/* Name <-> id ("direct", "locality", "mpich_model", "auto"), as
 * xchg_algo_from_name/xchg_algo_name (an unknown name gives
 * XCHG_NEIGHBOR_INVALID, an invalid id the name "invalid"), and the
 * neighbour algorithms of this build, excluding "auto", for
 * i = 0 .. xchg_neighbor_algo_count()-1. */
XCHG_API xchg_neighbor_algo xchg_neighbor_algo_from_name(const char *name);
XCHG_API const char *xchg_neighbor_algo_name(xchg_neighbor_algo algo);
XCHG_API int xchg_neighbor_algo_count(void);
XCHG_API xchg_neighbor_algo xchg_neighbor_algo_at(int i);

#ifdef __cplusplus
}
#endif
#endif /* XCHG_H */

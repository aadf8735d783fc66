/*
 * api.h - what the entry points (src/api/) share among themselves.
 */
#ifndef XCHG_API_H
#define XCHG_API_H

#include "request.h"

/* The state of comm for an entry point (xchg_comm_state_get with the
 * registries' names). */
int xchg_api_state(MPI_Comm comm, xchg_comm_state **cs);
/* What core's settings need from the layers above (names, the tuning
 * table's checksum, the algorithms' own settings): what xchg_api_state
 * hands xchg_comm_state_get. */
const xchg_algo_names *xchg_api_names(void);

/* XCHG_RECORD (record.c): the count matrix of each distinct exchange shape.
 * xchg_record_call is collective over pcomm when cs->settings.record is
 * set (every rank calls it, also one with an argument error: local_err,
 * which makes every rank skip the call): one allreduce of the hashes of
 * the ranks' send byte counts (counts[j] x type_size), and a gather of the
 * counts to rank 0 the first time a shape is seen; count_it: this is a call
 * of the shape (0 for a persistent init, whose starts count). *shape: the
 * shape's index for xchg_record_count (-1: not recorded).
 * xchg_record_count counts one more call of a shape (a persistent start;
 * no traffic). */
int xchg_record_call(xchg_comm_state *cs, const int counts[], int type_size, int local_err,
                     int count_it, long *shape);
void xchg_record_count(xchg_comm_state *cs, long shape);

/* XCHG_CHECK=1: verifies the counts of all ranks against each other (one
 * MPI_Alltoall, one MPI_Allreduce) and agrees on local_err; the same error
 * class on every rank. c may carry zero arrays when local_err is set. */
int xchg_check_mode(xchg_call *c, int local_err);

/* Everything of an xchg_alltoallv call after the communicator's state is
 * known: checks, agreement, choice, the exchange, stats. Returns the code
 * without raising it (the caller does, at the end of the call or in the
 * completing xchg_wait/xchg_test of a nonblocking one). */
typedef struct xchg_a2av_args {
    xchg_algo algo;
    int from_env, pre_err;
    const void *sendbuf;
    const int *sendcounts, *sdispls;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts, *rdispls;
    MPI_Datatype recvtype;
    MPI_Comm comm; /* the caller's */
    xchg_comm_state *cs;
} xchg_a2av_args;
int xchg_alltoallv_body(const xchg_a2av_args *a);
/* The body of xchg_alltoallv and _algo (from_env: XCHG_ALLTOALLV_ALGO
 * decides, as for auto), also of the large-count entries once their arrays
 * are converted: pre_err is an argument error their conversion found
 * (MPI_SUCCESS if none), treated as one found by the checks here. */
int xchg_alltoallv_run(xchg_algo algo, int from_env, int pre_err, const void *sendbuf,
                       const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, MPI_Comm comm);
/* The same for xchg_alltoallv_init and _init_algo (persistent.c). */
int xchg_alltoallv_init_run(xchg_algo algo, int from_env, int pre_err, const void *sendbuf,
                            const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Info info, xchg_request *req);
/* xchg_ialltoallv and _algo (persistent.c). */
int xchg_ialltoallv_run(xchg_algo algo, int from_env, const void *sendbuf,
                        const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req);
/* What a nonblocking request runs instead of xchg_alltoallv_body, if set:
 * xchg_ialltoallv_c's agreement whether every rank's values fit in int,
 * then the int exchange a or MPI's MPI_Ialltoallv_c (large_count.c);
 * free releases ext. */
typedef struct xchg_nb_body {
    int (*run)(void *ext, const xchg_a2av_args *a);
    void (*free)(void *ext);
    void *ext;
} xchg_nb_body;
/* The parts of xchg_ialltoallv that xchg_ialltoallv_c shares
 * (persistent.c): the checks before a request can be made (raised on comm);
 * the start of a request for the exchange a, whose arrays are copies the
 * request takes over (arrays, and body's ext if body is not NULL; both
 * freed on failure, which is MPI_ERR_NO_MEM, not raised); the report of a
 * call that ran blocking for want of memory (rc: its result). */
int xchg_ialltoallv_prepare(MPI_Comm comm, xchg_request *req, int *P, xchg_comm_state **cs);
int xchg_ialltoallv_launch(const xchg_a2av_args *a, int *arrays, const xchg_nb_body *body,
                           xchg_request *req);
int xchg_ialltoallv_ran_blocking(MPI_Comm comm, int rc, const char *fn);
#if XCHG_HAVE_LARGE_COUNT
/* A persistent request that is MPI's own MPI_Alltoallv_init_c on pcomm
 * (persistent.c): for large-count inits whose values some rank cannot give
 * xchg's algorithms. Collective; keeps copies of the arrays and of derived
 * datatypes, as every request does. */
int xchg_request_mpi_large(xchg_comm_state *cs, const void *sendbuf,
                           const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                           const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                           xchg_request *req);
#endif

/* The algorithm to run: algo itself, or with from_env the one
 * XCHG_ALLTOALLV_ALGO names (s: the agreed settings); an error if it is not
 * in this build. */
int xchg_resolve_algo(const xchg_settings *s, xchg_algo algo, int from_env, xchg_algo *out);

#endif /* XCHG_API_H */

/*
 * preload.h - the parts of libxchg-preload.so (preload.c: the C entry
 * points and the routing; fortran.c: the Fortran ones; report.c: what was
 * served, printed at MPI_Finalize).
 */
#ifndef XCHG_PRELOAD_H
#define XCHG_PRELOAD_H

#include "xchg.h"

/* Everything declared here is internal to the preload: only the MPI
 * entry points are exported. */
#pragma GCC visibility push(hidden)

/* Where a call came in. */
typedef enum preload_entry {
    ENTRY_C,           /* MPI_Alltoallv */
    ENTRY_LARGE,       /* MPI_Alltoallv_c (MPI-4 large counts) */
    ENTRY_FORTRAN,     /* mpi_alltoallv_ and the other manglings (mpif.h, use mpi) */
    ENTRY_F08,         /* use mpi_f08: mpi_alltoallv_f08_ (Open MPI), mpi_alltoallv_f08ts_ (MPICH) */
    ENTRY_NONBLOCKING, /* MPI_Ialltoallv, MPI_Ialltoallv_c */
    ENTRY_PERSISTENT,  /* MPI_Alltoallv_init, MPI_Alltoallv_init_c */
    ENTRY_F08_REQUEST, /* MPICH's use mpi_f08 mpi_ialltoallv_f08ts_, mpi_alltoallv_init_f08ts_ */
    /* the neighbour exchange (counted by xchg_neighbor_algo) */
    ENTRY_NEIGHBOR,            /* MPI_Neighbor_alltoallv */
    ENTRY_NEIGHBOR_LARGE,      /* MPI_Neighbor_alltoallv_c (MPI-4) */
    ENTRY_NEIGHBOR_NONBLOCKING, /* MPI_Ineighbor_alltoallv(_c) */
    ENTRY_NEIGHBOR_PERSISTENT, /* MPI_Neighbor_alltoallv_init(_c) (MPI-4) */
    ENTRY_NEIGHBOR_FORTRAN,    /* mpi_neighbor_alltoallv_ and the other manglings */
    ENTRY_NEIGHBOR_F08,        /* mpi_neighbor_alltoallv_f08_ (Open MPI), _f08ts_ (MPICH) */
    ENTRY_NEIGHBOR_F08_REQUEST, /* MPICH's mpi_ineighbor_alltoallv_f08ts_, ..._init_f08ts_ */
    ENTRY_COUNT
} preload_entry;

/* Why a call went to the MPI library instead of xchg. */
typedef enum preload_reason {
    REASON_OFF,         /* XCHG_PRELOAD=off */
    REASON_OTHER_MPI,   /* running under another major version of the MPI built with */
    REASON_NO_COMM,     /* MPI refused xchg's private communicator (its limit) */
    REASON_NULL_COMM,   /* MPI_COMM_NULL: MPI reports the error */
    REASON_INTER,       /* an intercommunicator */
    REASON_LARGE,       /* counts beyond int: xchg passed it to MPI_Alltoallv_c */
    REASON_BYPASS,      /* the library's own Fortran binding went straight to PMPI */
    REASON_NULL_ARG,    /* request is NULL: MPI reports the error */
    REASON_F08_WAIT,    /* MPICH's mpi_f08 MPI_Wait calls PMPI_Wait: xchg's request would never complete */
    REASON_NO_TOPOLOGY, /* a neighbour exchange on a communicator without topology: MPI reports it */
    REASON_LARGE_NEIGHBOR, /* counts beyond int: xchg passed it to MPI_Neighbor_alltoallv_c */
    REASON_BEFORE_SETUP, /* a communicator's first calls: xchg passed it to MPI (docs/setup.md) */
    REASON_SLOWER,      /* auto measured its choice slower than MPI's call there (docs/setup.md) */
    REASON_COUNT
} preload_reason;

/* Counting (report.c): atomic, any thread. A served call counts under the
 * algorithm that ran, or XCHG_ALGO_INVALID when xchg returned an error
 * before running one; a neighbour entry's (preload_is_neighbor) under its
 * xchg_neighbor_algo, passed as the int it is. */
void preload_count_served(preload_entry e, xchg_algo algo);
int preload_is_neighbor(preload_entry e);
void preload_count_fell(preload_entry e, preload_reason r);
/* With XCHG_VERBOSE >= 1, rank 0 of MPI_COMM_WORLD prints the counts on
 * stderr; once per process, whichever Finalize comes first. With
 * XCHG_PRELOAD_TIME=1 it also prints the time in blocking MPI_Alltoallv
 * calls, reduced over MPI_COMM_WORLD (collective: every rank must run the
 * preload). */
void preload_report(void);

/* XCHG_PRELOAD_TIME: whether blocking MPI_Alltoallv calls are timed, and
 * the time of one (seconds of MPI_Wtime) added to this rank's sum. */
int preload_timing(void);
void preload_count_time(double seconds);

/* Whether xchg takes a call on comm; else *reason says why not. */
int preload_route(MPI_Comm comm, preload_reason *reason);

/* The int-count call from any entry: xchg_alltoallv or PMPI_Alltoallv,
 * counted under entry. */
int preload_alltoallv(preload_entry entry, const void *sendbuf, const int sendcounts[],
                      const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                      MPI_Comm comm);

/* Whether xchg takes a neighbour exchange on comm (a topology, then
 * preload_route); else *reason says why not. */
int preload_route_neighbor(MPI_Comm comm, preload_reason *reason);

/* MPI_Neighbor_alltoallv from any entry: xchg_neighbor_alltoallv or
 * PMPI_Neighbor_alltoallv, counted under entry. */
int preload_neighbor_alltoallv(preload_entry entry, const void *sendbuf,
                               const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/* requests.c defines MPI_Ialltoallv(_c), MPI_Alltoallv_init(_c) and the
 * request calls (MPI_Start, MPI_Wait, MPI_Test, ...) that must know
 * xchg's requests. */

/* A Fortran wrapper that hands a call to the MPI library's own binding
 * (fortran.c) tags the thread with its entry; the library's binding then
 * calls MPI_Alltoallv(_c), where the tag names the entry the call is
 * counted under, and marks that it arrived. preload_tag_begin returns the
 * previous tag (restore it with preload_tag_end); preload_tag_end returns
 * whether the call arrived here. */
int preload_tag_begin(preload_entry e);
int preload_tag_end(int previous);
/* The entry a C entry point counts its call under: the tag, or itself. */
preload_entry preload_entry_of(preload_entry self);

#pragma GCC visibility pop

#endif

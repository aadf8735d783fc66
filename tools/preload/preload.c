/*
 * preload.c - libxchg-preload.so: an unmodified MPI application gets
 * xchg's MPI_Alltoallv by LD_PRELOAD, with no rebuild.
 *
 *     LD_PRELOAD=/path/libxchg-preload.so mpiexec -n 64 ./app
 *
 * The C entry points, defined here (the PMPI profiling interface makes
 * this legal):
 *   MPI_Alltoallv      -> xchg_alltoallv (which chooses an algorithm, or
 *                         takes XCHG_ALLTOALLV_ALGO)
 *   MPI_Alltoallv_c    -> xchg_alltoallv_c (MPI-4 large counts, where the
 *                         library has them: mpi4py >= 4 on MPICH 4 calls it)
 *   MPI_Ialltoallv(_c), MPI_Alltoallv_init(_c) -> xchg_ialltoallv(_c),
 *                         xchg_alltoallv_init(_c), with MPI's request calls
 *                         taught xchg's requests (requests.c)
 *   MPI_Neighbor_alltoallv(_c) -> xchg_neighbor_alltoallv(_c) (on a
 *                         communicator with a topology; without one MPI
 *                         reports it),
 *                         MPI_Ineighbor_alltoallv(_c) and (MPI-4)
 *                         MPI_Neighbor_alltoallv_init(_c) in requests.c
 *   MPI_Finalize       -> the report (XCHG_VERBOSE=1), then PMPI_Finalize
 * The Fortran entry points are in fortran.c, the counts in report.c.
 * xchg's own calls of MPI's all-to-all go through PMPI_, so nothing
 * recurses. XCHG_PRELOAD=off passes every call straight to the MPI library
 * (for comparing runs without relinking); calls are still counted.
 */
#include "preload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The preload must run in the MPI it was built with: in the other flavour
 * (MPICH's ABI against Open MPI's) the arguments are not handles of ours,
 * so it cannot even forward them to PMPI_Alltoallv: it says why and ends
 * the process (as MPI's default error handler would), rather than crash
 * or return with recvbuf never filled. Of another major version of the
 * same flavour the handles are alike: it forwards to the MPI library. */
static int preload_usable(void)
{
    static int compat = 2; /* 2: not checked yet */
    if (compat == 2) {
        char why[512];
        int c = xchg_mpi_compatible(why, (int)sizeof why);
        if (c < 0) {
            fprintf(stderr, "libxchg-preload.so: %s. Ending this process: its "
                    "MPI_Alltoallv can be neither served nor forwarded.\n", why);
            fflush(stderr);
            _exit(1);
        }
        if (c == 0)
            fprintf(stderr, "libxchg-preload.so: %s; MPI_Alltoallv goes to the MPI "
                    "library itself.\n", why);
        compat = c;
    }
    return compat == 1;
}

static _Thread_local int tag = -1;    /* entry of a Fortran wrapper up the stack */
static _Thread_local int arrived = 0; /* a tagged call reached an entry here */

int preload_tag_begin(preload_entry e)
{
    int previous = tag;
    tag = (int)e;
    arrived = 0;
    return previous;
}

int preload_tag_end(int previous)
{
    tag = previous;
    int a = arrived;
    arrived = 0;
    return a;
}

preload_entry preload_entry_of(preload_entry self)
{
    if (tag < 0)
        return self;
    arrived = 1;
    return (preload_entry)tag;
}

/* lazy: the call is xchg_alltoallv's auto, which passes a new
 * communicator's calls to MPI and makes the duplicate only once it pays
 * (staying with MPI's call where MPI refuses it), so nothing is made here. */
static int route(MPI_Comm comm, preload_reason *reason, int lazy)
{
    static int mode = -1; /* -1 unknown, 0 off, 1 on; a benign race: same value */
    if (mode < 0) {
        const char *e = getenv("XCHG_PRELOAD");
        mode = !(e && (!strcmp(e, "off") || !strcmp(e, "0")));
    }
    int inter = 0;
    int ready = 0;
    if (!mode)
        *reason = REASON_OFF;
    else if (!preload_usable())
        *reason = REASON_OTHER_MPI;
    else if (comm == MPI_COMM_NULL)
        *reason = REASON_NULL_COMM;
    else if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter)
        *reason = REASON_INTER;
    /* MPI may refuse xchg the private communicator it needs (MPICH's limit
     * on communicators): then this call is MPI's own, never an abort in a
     * call the application did not make. Agreed: every rank falls back.
     * Collective: every entry that routes is a collective call on comm. */
    else if (!lazy && xchg_comm_prepare(comm, &ready) == MPI_SUCCESS && !ready)
        *reason = REASON_NO_COMM;
    else
        return 1;
    return 0;
}

int preload_route(MPI_Comm comm, preload_reason *reason)
{
    return route(comm, reason, 0);
}

/* What xchg did with the call just made on comm: the algorithm, or
 * XCHG_ALGO_INVALID if it failed before running one (calls_before: the
 * call count before). */
static xchg_algo algo_run(MPI_Comm comm, unsigned long calls_before, int *passed_to_mpi)
{
    xchg_stats s;
    *passed_to_mpi = 0;
    if (xchg_get_stats(comm, &s) != MPI_SUCCESS || s.calls == calls_before)
        return XCHG_ALGO_INVALID;
    *passed_to_mpi = s.passed_to_mpi;
    return s.algo;
}

static unsigned long calls_so_far(MPI_Comm comm)
{
    xchg_stats s;
    return xchg_get_stats(comm, &s) == MPI_SUCCESS ? s.calls : 0;
}

/* Why xchg passed a call to MPI: xchg_stats.passed_to_mpi, nonzero. */
static preload_reason passed_reason(int passed)
{
    switch (passed) {
    case XCHG_PASSED_BEYOND_INT:
        return REASON_LARGE;
    case XCHG_PASSED_SLOWER:
        return REASON_SLOWER;
    default:
        return REASON_BEFORE_SETUP;
    }
}

static int alltoallv_routed(preload_entry entry, const void *sendbuf, const int sendcounts[],
                            const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    preload_reason why;
    if (!route(comm, &why, 1)) {
        preload_count_fell(entry, why);
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    }
    unsigned long before = calls_so_far(comm);
    int rc = xchg_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm);
    int passed;
    xchg_algo ran = algo_run(comm, before, &passed);
    if (passed) /* auto's first calls on comm, or after its verdict: MPI's own (docs/setup.md) */
        preload_count_fell(entry, passed_reason(passed));
    else
        preload_count_served(entry, ran);
    return rc;
}

int preload_alltoallv(preload_entry entry, const void *sendbuf, const int sendcounts[],
                      const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                      MPI_Comm comm)
{
    if (!preload_timing())
        return alltoallv_routed(entry, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                recvcounts, rdispls, recvtype, comm);
    /* the whole call, served or forwarded, so that runs with and without
     * xchg (XCHG_PRELOAD=off) time the same thing */
    double start = PMPI_Wtime();
    int rc = alltoallv_routed(entry, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                              recvcounts, rdispls, recvtype, comm);
    preload_count_time(PMPI_Wtime() - start);
    return rc;
}

int preload_route_neighbor(MPI_Comm comm, preload_reason *reason)
{
    int topo = MPI_UNDEFINED;
    if (comm != MPI_COMM_NULL && PMPI_Topo_test(comm, &topo) == MPI_SUCCESS &&
        topo != MPI_DIST_GRAPH && topo != MPI_CART && topo != MPI_GRAPH) {
        *reason = REASON_NO_TOPOLOGY; /* also an intercommunicator: none has one */
        return 0;
    }
    return preload_route(comm, reason);
}

/* What xchg did with the neighbour exchange just made on comm: the
 * algorithm, or XCHG_NEIGHBOR_INVALID if it failed before running one. */
static xchg_neighbor_algo neighbor_run(MPI_Comm comm, unsigned long calls_before)
{
    xchg_stats s;
    if (xchg_get_stats(comm, &s) != MPI_SUCCESS || s.calls == calls_before)
        return XCHG_NEIGHBOR_INVALID;
    return (xchg_neighbor_algo)s.neighbor_algo;
}

int preload_neighbor_alltoallv(preload_entry entry, const void *sendbuf,
                               const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    preload_reason why;
    if (!preload_route_neighbor(comm, &why)) {
        preload_count_fell(entry, why);
        return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, comm);
    }
    unsigned long before = calls_so_far(comm);
    int rc = xchg_neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                     recvcounts, rdispls, recvtype, comm);
    preload_count_served(entry, (xchg_algo)neighbor_run(comm, before));
    return rc;
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return preload_neighbor_alltoallv(preload_entry_of(ENTRY_NEIGHBOR), sendbuf, sendcounts,
                                      sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                      recvtype, comm);
}

#if XCHG_HAVE_LARGE_COUNT
int MPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    preload_entry entry = preload_entry_of(ENTRY_NEIGHBOR_LARGE);
    preload_reason why;
    if (!preload_route_neighbor(comm, &why)) {
        preload_count_fell(entry, why);
        return PMPI_Neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                         recvcounts, rdispls, recvtype, comm);
    }
    /* values beyond int on some rank: xchg agrees on it and passes the
     * call to PMPI_Neighbor_alltoallv_c itself (on every rank alike) */
    unsigned long before = calls_so_far(comm);
    int rc = xchg_neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype, comm);
    xchg_stats s;
    if (xchg_get_stats(comm, &s) == MPI_SUCCESS && s.calls != before && s.passed_to_mpi)
        preload_count_fell(entry, REASON_LARGE_NEIGHBOR);
    else
        preload_count_served(entry, (xchg_algo)neighbor_run(comm, before));
    return rc;
}
#endif

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return preload_alltoallv(preload_entry_of(ENTRY_C), sendbuf, sendcounts, sdispls, sendtype,
                             recvbuf, recvcounts, rdispls, recvtype, comm);
}

#if XCHG_HAVE_LARGE_COUNT
int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    preload_entry entry = preload_entry_of(ENTRY_LARGE);
    preload_reason why;
    if (!route(comm, &why, 1)) {
        preload_count_fell(entry, why);
        return PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm);
    }
    /* auto's first calls on comm, and values beyond int on some rank
     * (agreed): xchg passes the call to PMPI_Alltoallv_c itself, on every
     * rank alike */
    unsigned long before = calls_so_far(comm);
    int rc = xchg_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    int passed;
    xchg_algo algo = algo_run(comm, before, &passed);
    if (passed)
        preload_count_fell(entry, passed_reason(passed));
    else
        preload_count_served(entry, algo);
    return rc;
}

#endif

int MPI_Finalize(void)
{
    preload_report();
    return PMPI_Finalize();
}

/*
 * preload.c - libxchg-preload.so: an unmodified MPI application gets
 * xchg's MPI_Alltoallv by LD_PRELOAD, with no rebuild.
 *
 *     LD_PRELOAD=/path/libxchg-preload.so mpiexec -n 64 ./app
 *
 * It defines MPI_Alltoallv (the PMPI profiling interface makes this legal)
 * and forwards to xchg_alltoallv, which chooses an algorithm or takes
 * XCHG_ALLTOALLV_ALGO. xchg's "vendor" algorithm calls PMPI_Alltoallv, so
 * there is no recursion. XCHG_PRELOAD=off passes every call straight to
 * the MPI library (for comparing runs without relinking).
 * C callers only: Fortran bindings may call PMPI_Alltoallv directly.
 */
#include "xchg.h"

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

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    static int mode = -1; /* -1 unknown, 0 off, 1 on */
    if (mode < 0) {
        const char *e = getenv("XCHG_PRELOAD");
        mode = !(e && (!strcmp(e, "off") || !strcmp(e, "0")));
    }
    int inter = 0;
    if (!preload_usable() || !mode || comm == MPI_COMM_NULL || (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    /* MPI may refuse xchg the private communicator it needs (MPICH's limit
     * on communicators): then this call is MPI's own, never an abort in a
     * call the application did not make. Agreed: every rank falls back. */
    int ready = 0;
    if (xchg_comm_prepare(comm, &ready) == MPI_SUCCESS && !ready)
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
    return xchg_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                          rdispls, recvtype, comm);
}

/*
 * nbc_check.c - are SMPI's nonblocking collectives synchronizing?
 *
 * For libxchg's own barrier (xchg_ibarrier, src/core/ibarrier.c), SMPI's
 * MPI_Ibarrier and MPI_Iallreduce (sum of rank+1): one rank (first 0, then
 * P-1) computes for 1 ms of simulated time before it enters; every rank
 * polls with MPI_Test until done. A correct operation completes no rank
 * before the late rank entered (simulated clock), and the allreduce gives
 * every rank P(P+1)/2. Also prints the time from the late rank's entry to
 * the last rank's completion.
 *
 *   sim/run -np 64 --rpn 16 build/smpi/sim/nbc_check
 *
 * Prints one line per operation. Exits non-zero if xchg_ibarrier fails
 * (CTest smpi.ibarrier); SMPI's own operations are only reported
 * (docs/simulation.md, "Building and running").
 */
#include "ibarrier.h"

#include <simgrid/host.h>
#include <stdio.h>

enum { OP_XCHG_IBARRIER, OP_MPI_IBARRIER, OP_MPI_IALLREDUCE, NOPS };
static const char *op_name[NOPS] = {"xchg_ibarrier", "MPI_Ibarrier", "MPI_Iallreduce"};

/* Returns 1 if operation `op` was correct on all ranks (same on all). */
static int run(int op, int late, int rank, int P, int *early, int *wrong, double *span)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double entered = 0;
    if (rank == late) {
        smpi_execute_flops(1e-3 * sg_host_get_speed(sg_host_self()));
        entered = MPI_Wtime();
    }
    xchg_ibarrier b;
    MPI_Request req = MPI_REQUEST_NULL;
    long long in = rank + 1, out = -1;
    int done = 0, rc;
    if (op == OP_XCHG_IBARRIER)
        rc = xchg_ibarrier_start(&b, MPI_COMM_WORLD, 100, 1);
    else if (op == OP_MPI_IBARRIER)
        rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
    else
        rc = MPI_Iallreduce(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &req);
    while (rc == MPI_SUCCESS && !done)
        rc = op == OP_XCHG_IBARRIER ? xchg_ibarrier_test(&b, &done)
                                    : MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    double left = MPI_Wtime();
    MPI_Bcast(&entered, 1, MPI_DOUBLE, late, MPI_COMM_WORLD);
    MPI_Allreduce(&left, span, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *span -= entered;
    int is_early = rc != MPI_SUCCESS || left < entered;
    int is_wrong = op == OP_MPI_IALLREDUCE && out != (long long)P * (P + 1) / 2;
    MPI_Allreduce(&is_early, early, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&is_wrong, wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return !*early && !*wrong;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, ours_ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int lates[2] = {0, P - 1};
    for (int l = 0; l < 2; l++)
        for (int op = 0; op < NOPS; op++) {
            int early, wrong;
            double span;
            int ok = run(op, lates[l], rank, P, &early, &wrong, &span);
            if (rank == 0)
                printf("%-15s P=%d, rank %d late: %s (%d ranks done before it entered, "
                       "%d wrong results), last done %.2f us after it entered\n",
                       op_name[op], P, lates[l], ok ? "correct" : "BROKEN", early, wrong,
                       span * 1e6);
            if (op == OP_XCHG_IBARRIER && !ok)
                ours_ok = 0;
        }
    MPI_Finalize();
    return ours_ok ? 0 : 1;
}

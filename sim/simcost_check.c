/*
 * simcost_check.c - the simulated build's charges for local work
 * (src/core/simcost.c), checked against their definitions: run with
 * sim/run at 16 ranks on one node (--rpn 16, the default memory of 50
 * GB/s a node) and, for the unlimited case, with --mem-bw none.
 *
 *   - one rank copying 1 MB alone: its core's rate (5 GB/s: 200 us) plus
 *     one call's fixed cost;
 *   - 8 ranks at once: 40 GB/s together, under the node's 50: 200 us each;
 *   - 16 ranks at once: the node's 50 GB/s shared, 320 us each (200 with
 *     --mem-bw none: argument "unlimited");
 *   - CPU work: 1,000 block-size sum steps cost 1,000 x XCHG_CAL_SIZE_SUM_NS.
 * libxchg's charge functions are internal (linkable from the static
 * library, as nbc_check's barrier).
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibrated.h"
#include "core.h"

static int rank, failed;

static void check(int ok, const char *what, double got, double want)
{
    if (rank == 0)
        printf("%s: %.3f us (expected %.3f) %s\n", what, got * 1e6, want * 1e6,
               ok ? "ok" : "FAILED");
    failed |= !ok;
}

/* The slowest rank's time for `active` ranks each copying `bytes` at once. */
static double copies_at_once(int active, size_t bytes)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank < active) {
        xchg_charge_copy(bytes);
        xchg_charge_flush();
    }
    double dt = MPI_Wtime() - t0, most = 0;
    MPI_Allreduce(&dt, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return most;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const int unlimited = argc > 1 && strcmp(argv[1], "unlimited") == 0;
    const double core = 1e6 / (XCHG_CAL_COPY_CORE_GBPS * 1e9), call = XCHG_CAL_COPY_CALL_NS * 1e-9;
    /* MPI_Wtime's own simulated cost and the barrier's skew: well under 1% */
    const double tol = 0.01;
    double t = copies_at_once(1, 1000000);
    check(fabs(t - (core + call)) < tol * core, "1 MB copied by one rank", t, core + call);
    t = copies_at_once(P / 2, 1000000);
    check(fabs(t - (core + call)) < tol * core, "1 MB copied by half the node's ranks at once",
          t, core + call);
    double node = 1e6 * P / (P * 3.125e9); /* 3.125 GB/s a rank of a node (mkplatform) */
    double want = unlimited ? core : (node > core ? node : core);
    t = copies_at_once(P, 1000000);
    check(fabs(t - (want + call)) < tol * want,
          unlimited ? "1 MB copied by every rank at once, no node limit"
                    : "1 MB copied by every rank at once, the node's bandwidth shared",
          t, want + call);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    xchg_charge_ops(XCHG_OP_SIZE_SUM, 1000);
    xchg_charge_flush();
    t = MPI_Wtime() - t0;
    want = 1000 * XCHG_CAL_SIZE_SUM_NS * 1e-9;
    check(fabs(t - want) < 0.01 * want + 1e-8, "1,000 size sum steps", t, want);
    if (rank == 0)
        printf("%s\n", failed ? "simcost_check: FAILED" : "simcost_check: all ok");
    MPI_Finalize();
    return failed;
}

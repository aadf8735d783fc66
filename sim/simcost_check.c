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
 *   - CPU work: 1,000 block-size sum steps cost 1,000 x XCHG_CAL_SIZE_SUM_NS;
 *   - a node synchronisation (the node window's flags, node/shm_window.c):
 *     no rank leaves before the last one arrives, and the last leaves
 *     within ceil(log2 16) = 4 flags (XCHG_CAL_FLAG_NS each) of its
 *     arrival, whether every rank arrives together or one is 10 us late.
 * libxchg's charge functions, the communicator state and the node window
 * are internal (linkable from the static library, as nbc_check's barrier).
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibrated.h"
#include "core.h"
#include "node/node_layout.h"
#include "node/shm_window.h"
#include "xchg.h"

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

/* The node window of MPI_COMM_WORLD (one node: --rpn 16), made after one
 * forced exchange has set the communicator up; NULL where it cannot be. */
static xchg_shm_window *world_window(int P)
{
    char sb[64] = {0}, rb[64];
    int cnt[64], dsp[64];
    for (int i = 0; i < P && i < 64; i++)
        cnt[i] = 1, dsp[i] = i;
    xchg_comm_state *cs = NULL;
    const xchg_node_layout *nl = NULL;
    xchg_shm_window *w = NULL;
    if (P > 64 ||
        xchg_alltoallv_algo(XCHG_ALGO_LINEAR, sb, cnt, dsp, MPI_BYTE, rb, cnt, dsp, MPI_BYTE,
                            MPI_COMM_WORLD) != MPI_SUCCESS ||
        xchg_comm_state_lookup(MPI_COMM_WORLD, &cs) != MPI_SUCCESS || !cs ||
        xchg_node_layout_of(cs, &nl) != MPI_SUCCESS ||
        xchg_node_window_of(cs, nl->node, 64, 0, &w) != MPI_SUCCESS)
        return NULL;
    return w;
}

/* One node synchronisation with rank `late` arriving late_s after the
 * others: checks the leaving times against the last arrival. */
static void node_sync_check(xchg_shm_window *w, uint64_t e, int late, double late_s,
                            const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == late)
        xchg_charge_ops(XCHG_OP_MODEL, (size_t)(late_s / (XCHG_CAL_MODEL_NS * 1e-9) + 0.5));
    xchg_charge_flush();
    double t[2] = {MPI_Wtime(), 0};
    xchg_shm_sync(w, e);
    xchg_charge_flush();
    t[1] = MPI_Wtime();
    double last_in = 0, first_out = 0, last_out = 0;
    MPI_Allreduce(&t[0], &last_in, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&t[1], &first_out, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&t[1], &last_out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double flag = XCHG_CAL_FLAG_NS * 1e-9, want = 4 * flag;
    check(first_out >= last_in && last_out - last_in >= flag &&
              last_out - last_in <= want + 0.05e-6,
          what, last_out - last_in, want);
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
    xchg_shm_window *w = world_window(P);
    if (!w || P != 16) {
        check(0, "a node window of 16 ranks", 0, 0);
    } else {
        uint64_t e = w->epoch;
        node_sync_check(w, ++e, -1, 0, "node sync, every rank at once: last in to last out");
        node_sync_check(w, ++e, 5, 10e-6, "node sync, rank 5 10 us late: last in to last out");
        w->epoch = e;
    }
    if (rank == 0)
        printf("%s\n", failed ? "simcost_check: FAILED" : "simcost_check: all ok");
    MPI_Finalize();
    return failed;
}

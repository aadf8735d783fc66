/*
 * flag_cost.c - what one flag of a node window costs to see, natively:
 * two ranks of one node hand an epoch flag back and forth through an
 * MPI_Win_allocate_shared window exactly as libxchg's node windows do
 * (src/node/shm_window.c: MPI_Win_sync, a release store; the reader
 * spins on an acquire load with MPI_Win_sync, then MPI_Win_sync). Half a
 * round trip is one flag published by one core and seen by another: what
 * each of the L-1 flag reads of a node synchronisation costs once every
 * member has published. Run by sim/calibrate/run at 2 ranks (one core
 * each); prints "FLAG_NS value", the median of 15 repetitions of 2,000
 * round trips.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { TRIPS = 2000, REPS = 15 };

static void publish(MPI_Win win, uint64_t *mine, uint64_t e)
{
    MPI_Win_sync(win);
    __atomic_store_n(mine, e, __ATOMIC_RELEASE);
}

static void wait_for(MPI_Win win, const uint64_t *theirs, uint64_t e)
{
    while (__atomic_load_n(theirs, __ATOMIC_ACQUIRE) < e)
        MPI_Win_sync(win);
    MPI_Win_sync(win);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P != 2) {
        if (rank == 0)
            fprintf(stderr, "flag_cost: run at 2 ranks of one node\n");
        MPI_Finalize();
        return 2;
    }
    uint64_t *base;
    MPI_Win win;
    /* two flags a cache line apart, as each member's flag is its own */
    MPI_Win_allocate_shared(rank == 0 ? 256 : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Aint size;
    int disp;
    MPI_Win_shared_query(win, 0, &size, &disp, &base);
    uint64_t *flag[2] = {base, base + 16};
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    if (rank == 0)
        *flag[0] = *flag[1] = 0;
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    double t[REPS];
    uint64_t e = 0;
    for (int r = 0; r < REPS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int k = 0; k < TRIPS; k++) {
            e++;
            if (rank == 0) {
                publish(win, flag[0], e);
                wait_for(win, flag[1], e);
            } else {
                wait_for(win, flag[0], e);
                publish(win, flag[1], e);
            }
        }
        t[r] = (MPI_Wtime() - t0) / (2.0 * TRIPS) * 1e9;
    }
    qsort(t, REPS, sizeof t[0], cmp);
    if (rank == 0)
        printf("FLAG_NS %.1f   # one flag published and seen by another core (half a round "
               "trip), median of %d x %d round trips\n", t[REPS / 2], REPS, TRIPS);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}

/*
 * iprobe_cost.c - what one MPI_Iprobe and one MPI_Test cost on a real MPI,
 * to set SMPI's smpi/iprobe and smpi/test (simulated seconds injected per
 * call). Both are measured the way NBX uses them: a probe that finds nothing,
 * a test of a request that is not complete. Also the cost of posting one
 * small Isend (the per-message software overhead, for reference).
 *
 *   sim/calibrate/run        (builds with both flavours, runs at 2 ranks)
 *
 * Rank 1 only waits; rank 0 times batches of calls and reports the best
 * batch (least disturbed by the other users of the machine) and the median.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CALLS 20000
#define BATCHES 25

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, double *t)
{
    qsort(t, BATCHES, sizeof *t, cmp);
    printf("%-28s best %8.1f ns  median %8.1f ns\n", what, t[0] / CALLS * 1e9,
           t[BATCHES / 2] / CALLS * 1e9);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "iprobe_cost: run at 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double t[BATCHES];
    if (rank == 0) {
        char name[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(name, &len);
        for (int i = 0; i < len; i++)
            if (name[i] == '\n') { name[i] = 0; break; }
        printf("# %s\n", name);
        /* Probe with nothing to find. */
        for (int b = 0; b < BATCHES; b++) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < CALLS; i++)
                MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            t[b] = MPI_Wtime() - t0;
        }
        report("MPI_Iprobe (nothing there)", t);
        /* Test of a receive that cannot complete yet. */
        int buf = 0;
        MPI_Request req;
        MPI_Irecv(&buf, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &req);
        for (int b = 0; b < BATCHES; b++) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < CALLS; i++)
                MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            t[b] = MPI_Wtime() - t0;
        }
        report("MPI_Test (incomplete)", t);
        MPI_Send(&buf, 1, MPI_INT, 1, 9, MPI_COMM_WORLD); /* release rank 1 */
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        /* Posting small Isends (8 bytes) to rank 1, which receives them all. */
        MPI_Request *reqs = malloc(sizeof *reqs * CALLS);
        for (int b = 0; b < BATCHES; b++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < CALLS; i++)
                MPI_Isend(&buf, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, &reqs[i]);
            t[b] = MPI_Wtime() - t0;
            MPI_Waitall(CALLS, reqs, MPI_STATUSES_IGNORE);
        }
        report("MPI_Isend post (4 bytes)", t);
        free(reqs);
    } else {
        int buf;
        MPI_Recv(&buf, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&buf, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
        for (int b = 0; b < BATCHES; b++) {
            MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < CALLS; i++)
                MPI_Recv(&buf, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}

/*
 * repro_a2a.c - "padded alltoall vs alltoallv for small messages": the
 * vendor MPI_Alltoall against MPI_Alltoallv moving the same uniform blocks
 * (Intel MPI Benchmarks style), and xchg's padded_alltoall when this build
 * has it, on the same uniform counts and on random counts of the same mean.
 *
 *   repro_a2a [BYTES [ITERS]]     (default 256 bytes, 3 iterations)
 *
 * Prints one line per method: simulated time per call, max over ranks, the
 * minimum over iterations (simulated time is deterministic; iterations only
 * differ by warm-up effects). Run through sim/repro (platform, settings).
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int P, rank, iters = 3;

typedef int (*method_fn)(char *sb, int *sc, int *sd, char *rb, int *rc, int *rd, void *arg);

static double timeit(method_fn f, char *sb, int *sc, int *sd, char *rb, int *rc, int *rd,
                     void *arg)
{
    double best = 1e30;
    for (int i = 0; i < iters + 1; i++) { /* one warm-up */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (f(sb, sc, sd, rb, rc, rd, arg) != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 2);
        double dt = MPI_Wtime() - t0, tmax;
        MPI_Allreduce(&dt, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (i > 0 && tmax < best)
            best = tmax;
    }
    return best;
}

static int do_alltoall(char *sb, int *sc, int *sd, char *rb, int *rc, int *rd, void *arg)
{
    (void)sd; (void)rc; (void)rd; (void)arg;
    return MPI_Alltoall(sb, sc[0], MPI_BYTE, rb, sc[0], MPI_BYTE, MPI_COMM_WORLD);
}

static int do_alltoallv(char *sb, int *sc, int *sd, char *rb, int *rc, int *rd, void *arg)
{
    (void)arg;
    return MPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
}

static int do_xchg(char *sb, int *sc, int *sd, char *rb, int *rc, int *rd, void *arg)
{
    return xchg_alltoallv_algo(*(xchg_algo *)arg, sb, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE,
                               MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int bytes = argc > 1 ? atoi(argv[1]) : 256;
    if (argc > 2)
        iters = atoi(argv[2]);
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    /* Room for random counts up to 2 x bytes per block. */
    char *sb = calloc((size_t)P, 2 * (size_t)bytes + 1), *rb = calloc((size_t)P, 2 * (size_t)bytes + 1);
    for (int j = 0; j < P; j++) {
        sc[j] = rc[j] = bytes;
        sd[j] = rd[j] = j * 2 * bytes;
    }
    xchg_algo padded = xchg_algo_from_name("padded_alltoall");
    if (rank == 0)
        printf("# repro_a2a: %d ranks, %d-byte blocks, min of %d iterations, time per call\n",
               P, bytes, iters);
    /* Alltoall needs contiguous blocks: lay them out densely for it. */
    int *dd = malloc(sizeof(int) * P);
    for (int j = 0; j < P; j++)
        dd[j] = j * bytes;
    double ta = timeit(do_alltoall, sb, sc, dd, rb, rc, dd, NULL);
    double tv = timeit(do_alltoallv, sb, sc, dd, rb, rc, dd, NULL);
    if (rank == 0) {
        printf("uniform  MPI_Alltoall              %10.2f us\n", ta * 1e6);
        printf("uniform  MPI_Alltoallv             %10.2f us   (alltoallv / alltoall = %.2fx)\n",
               tv * 1e6, tv / ta);
    }
    if (padded != XCHG_ALGO_INVALID) {
        double tp = timeit(do_xchg, sb, sc, sd, rb, rc, rd, &padded);
        if (rank == 0)
            printf("uniform  xchg padded_alltoall      %10.2f us   (vendor alltoallv / padded = %.2fx)\n",
                   tp * 1e6, tv / tp);
        /* Random counts in [0, 2 bytes]: what padded_alltoall is for. */
        srand(4242u + (unsigned)rank);
        for (int j = 0; j < P; j++)
            sc[j] = rand() % (2 * bytes + 1);
        MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
        double tr = timeit(do_alltoallv, sb, sc, sd, rb, rc, rd, NULL);
        double trp = timeit(do_xchg, sb, sc, sd, rb, rc, rd, &padded);
        if (rank == 0) {
            printf("random   MPI_Alltoallv             %10.2f us\n", tr * 1e6);
            printf("random   xchg padded_alltoall      %10.2f us   (vendor alltoallv / padded = %.2fx)\n",
                   trp * 1e6, tr / trp);
        }
    } else if (rank == 0) {
        printf("# padded_alltoall: not in this build (bruck branch not merged)\n");
    }
    free(sc); free(sd); free(rc); free(rd); free(sb); free(rb); free(dd);
    MPI_Finalize();
    return 0;
}

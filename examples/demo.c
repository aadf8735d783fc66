/*
 * demo.c - every algorithm of the build on one random exchange: its median
 * time and whether its result matches MPI_Alltoallv byte for byte.
 *
 * Adopting xchg is one line: MPI_Alltoallv(...) becomes xchg_alltoallv(...).
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, iters = 20;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    srand(12345u + (unsigned)rank);
    for (int j = 0; j < P; j++)
        sc[j] = rand() % 512; /* up to 2 KiB of doubles' worth of ints */
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
    int stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        sd[j] = stot; stot += sc[j];
        rd[j] = rtot; rtot += rc[j];
    }
    int *sb = malloc(sizeof(int) * (stot + 1)), *ref = malloc(sizeof(int) * (rtot + 1)),
        *got = malloc(sizeof(int) * (rtot + 1));
    for (int k = 0; k < stot; k++)
        sb[k] = rank * 1000003 + k;
    MPI_Alltoallv(sb, sc, sd, MPI_INT, ref, rc, rd, MPI_INT, MPI_COMM_WORLD);

    double *t = malloc(sizeof(double) * iters);
    if (rank == 0)
        printf("# xchg demo: %d ranks, random counts, %d iterations\n%-18s %12s %6s\n", P,
               iters, "algorithm", "median_us", "check");
    for (int a = 0; a < xchg_algo_count(); a++) {
        xchg_algo al = xchg_algo_at(a);
        memset(got, 0, sizeof(int) * (rtot + 1));
        int rc0 = xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, got, rc, rd, MPI_INT, MPI_COMM_WORLD);
        int ok = rc0 == MPI_SUCCESS && memcmp(got, ref, sizeof(int) * rtot) == 0, all;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        for (int i = 0; i < iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, got, rc, rd, MPI_INT, MPI_COMM_WORLD);
            double dt = MPI_Wtime() - t0;
            MPI_Allreduce(&dt, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        qsort(t, iters, sizeof(double), cmp_double);
        if (rank == 0)
            printf("%-18s %12.1f %6s\n", xchg_algo_name(al), t[iters / 2] * 1e6, all ? "ok" : "WRONG");
    }
    free(sc); free(sd); free(rc); free(rd); free(sb); free(ref); free(got); free(t);
    MPI_Finalize();
    return 0;
}

/* tune_time.c - xchg-tune's timing loop (tune_time.h), one for every family. */
#include "tune_time.h"

#include <mpi.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tune_time(void (*call)(void *ctx), void (*after)(void *ctx), void *ctx, int iters)
{
    double *t = malloc(sizeof(double) * (size_t)iters);
    for (int i = 0; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        call(ctx);
        double dt = MPI_Wtime() - t0;
        if (after)
            after(ctx);
        MPI_Allreduce(&dt, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    double med = t[iters / 2];
    free(t);
    return med;
}

/*
 * repro_a2a.c - "padded alltoall vs alltoallv for small messages": the
 * MPI_Alltoall of this run (SMPI's, under the run's selector) against
 * alltoallv moving the same uniform blocks (Intel MPI Benchmarks style),
 * and xchg's padded_alltoall (MPI_Alltoall of blocks padded to the largest)
 * on the same uniform counts and on random counts of the same mean.
 *
 *   repro_a2a [BYTES [ITERS [MODELS]]]   (default 256 bytes, 3 iterations,
 *                                          mpich_model,ompi_model)
 *
 * The alltoallv baselines: the models of MPICH 4.0's and Open MPI 4.1's
 * default alltoallv named in MODELS (comma list, run through
 * xchg_alltoallv_algo; "none" for none), and SMPI's own MPI_Alltoallv,
 * labelled as SMPI's. Prints one line per method: simulated time per call,
 * max over ranks, the minimum over iterations (simulated time is
 * deterministic; iterations only differ by warm-up effects). Run through
 * sim/repro (platform, settings).
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

#define MAXMODEL 4

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int bytes = argc > 1 ? atoi(argv[1]) : 256;
    if (argc > 2)
        iters = atoi(argv[2]);
    /* the faithful alltoallv baselines */
    char models[256] = "mpich_model,ompi_model";
    if (argc > 3)
        snprintf(models, sizeof models, "%s", argv[3]);
    xchg_algo model[MAXMODEL];
    const char *mname[MAXMODEL];
    int nmodel = 0;
    /* strtok_r: libc's strtok state would be shared by all simulated ranks */
    char *save = NULL;
    for (char *t = strtok_r(models, ",", &save); t && nmodel < MAXMODEL;
         t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "none") == 0)
            continue;
        model[nmodel] = xchg_algo_from_name(t);
        if (model[nmodel] == XCHG_ALGO_INVALID) {
            if (rank == 0)
                fprintf(stderr, "repro_a2a: unknown algorithm %s\n", t);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        mname[nmodel++] = t;
    }
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
        printf("# repro_a2a: %d ranks, %d-byte blocks, min of %d iterations, time per call "
               "(slowest rank); MPI_Alltoall and MPI_Alltoallv are SMPI's own\n",
               P, bytes, iters);
    /* Alltoall needs contiguous blocks: lay them out densely for it. */
    int *dd = malloc(sizeof(int) * P);
    for (int j = 0; j < P; j++)
        dd[j] = j * bytes;
    double ta = timeit(do_alltoall, sb, sc, dd, rb, rc, dd, NULL);
    double tv = timeit(do_alltoallv, sb, sc, dd, rb, rc, dd, NULL);
    double tm[MAXMODEL];
    for (int m = 0; m < nmodel; m++)
        tm[m] = timeit(do_xchg, sb, sc, dd, rb, rc, dd, &model[m]);
    if (rank == 0) {
        printf("uniform  SMPI's MPI_Alltoall       %10.2f us\n", ta * 1e6);
        printf("uniform  SMPI's MPI_Alltoallv      %10.2f us   (alltoallv / alltoall = %.2fx)\n",
               tv * 1e6, tv / ta);
        for (int m = 0; m < nmodel; m++)
            printf("uniform  %-25s %10.2f us   (alltoallv / alltoall = %.2fx)\n", mname[m],
                   tm[m] * 1e6, tm[m] / ta);
    }
    if (padded != XCHG_ALGO_INVALID) {
        double tp = timeit(do_xchg, sb, sc, sd, rb, rc, rd, &padded);
        if (rank == 0) {
            printf("uniform  xchg padded_alltoall      %10.2f us   (SMPI's alltoallv / padded = %.2fx",
                   tp * 1e6, tv / tp);
            for (int m = 0; m < nmodel; m++)
                printf(", %s / padded = %.2fx", mname[m], tm[m] / tp);
            printf(")\n");
        }
        /* Random counts in [0, 2 bytes]: what padded_alltoall is for. */
        srand(4242u + (unsigned)rank);
        for (int j = 0; j < P; j++)
            sc[j] = rand() % (2 * bytes + 1);
        MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
        double tr = timeit(do_alltoallv, sb, sc, sd, rb, rc, rd, NULL);
        double trm[MAXMODEL];
        for (int m = 0; m < nmodel; m++)
            trm[m] = timeit(do_xchg, sb, sc, sd, rb, rc, rd, &model[m]);
        double trp = timeit(do_xchg, sb, sc, sd, rb, rc, rd, &padded);
        if (rank == 0) {
            printf("random   SMPI's MPI_Alltoallv      %10.2f us\n", tr * 1e6);
            for (int m = 0; m < nmodel; m++)
                printf("random   %-25s %10.2f us\n", mname[m], trm[m] * 1e6);
            printf("random   xchg padded_alltoall      %10.2f us   (SMPI's alltoallv / padded = %.2fx",
                   trp * 1e6, tr / trp);
            for (int m = 0; m < nmodel; m++)
                printf(", %s / padded = %.2fx", mname[m], trm[m] / trp);
            printf(")\n");
        }
    } else if (rank == 0) {
        printf("# padded_alltoall: not in this build (bruck branch not merged)\n");
    }
    free(sc); free(sd); free(rc); free(rd); free(sb); free(rb); free(dd);
    MPI_Finalize();
    return 0;
}

/*
 * test_preload.c - an "unmodified application": it calls MPI_Alltoallv and
 * knows nothing of xchg. Run under LD_PRELOAD=libxchg-preload.so, its
 * calls must go to xchg (seen through xchg_get_stats, looked up at run
 * time) and give the right data (checked by formula: MPI_Alltoallv itself
 * is the function under test here, so it cannot be the reference).
 * XCHG_ALLTOALLV_ALGO chooses the algorithm, so CTest runs it per algorithm.
 */
#include <mpi.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int algo;
    size_t temp_bytes;
    unsigned long calls;
    char rest[64]; /* the fields of xchg_stats after calls, and room to grow */
} stats_t; /* begins like xchg_stats: this program does not include xchg.h */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    int st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = (rank + 2 * j) % 4;       /* some zeros */
        rc[j] = (j + 2 * rank) % 4;       /* what j sends me */
        sd[j] = st; st += sc[j];
        rd[j] = rt; rt += rc[j];
    }
    int *sb = malloc(sizeof(int) * (st + 1)), *rb = malloc(sizeof(int) * (rt + 1));
    for (int it = 0; it < 5; it++) {
        for (int j = 0; j < P; j++)
            for (int k = 0; k < sc[j]; k++)
                sb[sd[j] + k] = it * 1000000 + rank * 1000 + j * 10 + k;
        for (int k = 0; k < rt; k++)
            rb[k] = -1;
        if (MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS)
            bad++;
        for (int j = 0; j < P; j++)
            for (int k = 0; k < rc[j]; k++)
                if (rb[rd[j] + k] != it * 1000000 + j * 1000 + rank * 10 + k)
                    bad++;
    }
    int (*get_stats)(MPI_Comm, stats_t *) =
        (int (*)(MPI_Comm, stats_t *))dlsym(RTLD_DEFAULT, "xchg_get_stats");
    stats_t s = {0, 0, 0, {0}};
    if (!get_stats) {
        fprintf(stderr, "FAIL [rank %d] xchg is not loaded (LD_PRELOAD missing?)\n", rank);
        bad++;
    } else if (get_stats(MPI_COMM_WORLD, &s) != MPI_SUCCESS || s.calls != 5) {
        fprintf(stderr, "FAIL [rank %d] xchg saw %lu calls, expected 5\n", rank, s.calls);
        bad++;
    }
    if (bad)
        fprintf(stderr, "FAIL [rank %d] %d wrong values or calls\n", rank, bad);
    int all;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_preload on %d ranks (xchg algorithm %d): %d passed, %d failed\n", P, s.algo,
               all ? 0 : 1, all ? 1 : 0);
    MPI_Finalize();
    return all ? 1 : 0;
}

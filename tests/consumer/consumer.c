/* consumer.c - xchg_alltoallv from a program built against an installed
 * xchg. Prints "consumer: ok" when the values are right, or "consumer:
 * refused ..." when libxchg refuses the running MPI with MPI_ERR_OTHER
 * (exit 3: the script decides which it expected). */
#include <xchg.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int *sc = malloc(sizeof(int) * (size_t)P), *sd = malloc(sizeof(int) * (size_t)P);
    int *sb = malloc(sizeof(int) * (size_t)P), *rb = malloc(sizeof(int) * (size_t)P);
    for (int j = 0; j < P; j++) {
        sc[j] = 1;
        sd[j] = j;
        sb[j] = rank * 100 + j;
        rb[j] = -1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = xchg_alltoallv(sb, sc, sd, MPI_INT, rb, sc, sd, MPI_INT, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        printf("consumer: refused on rank %d: xchg_alltoallv returned %d (MPI_ERR_OTHER is "
               "%d here), xchg built with %s\n", rank, rc, MPI_ERR_OTHER, xchg_mpi_built_with());
        MPI_Finalize();
        return rc == MPI_ERR_OTHER ? 3 : 1;
    }
    for (int j = 0; j < P; j++)
        bad += rb[j] != j * 100 + rank;
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("consumer: %s on %d ranks (xchg built with %s)\n", all ? "WRONG VALUES" : "ok",
               P, xchg_mpi_built_with());
    MPI_Finalize();
    return all ? 1 : 0;
}

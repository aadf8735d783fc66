/*
 * pingpong.c - measures the simulated platform's small-message latency
 * (docs/simulation.md, "Platforms"): half the round trip of an 8-byte
 * MPI_Send/MPI_Recv ping-pong between rank 0 and another rank of its node
 * (intra) and rank 0 and the first rank of another node (inter), median of
 * TRIALS trials of ROUNDS round trips each. Only the two ranks of a pair
 * take part; the others wait in a barrier.
 *
 *   sim/run -np 32 --rpn 16 build/smpi/sim/pingpong [--intra LO:HI] [--inter LO:HI]
 *
 * With --intra/--inter (microseconds), exits non-zero if a
 * measured figure leaves its range: the CTest check that the platform's
 * latencies still match what docs/simulation.md documents.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MSG_BYTES = 8, ROUNDS = 20, TRIALS = 9 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Half round trip in seconds between rank 0 and `peer` (median of TRIALS);
 * returns -1 on ranks other than 0. */
static double half_round_trip(int rank, int peer)
{
    char buf[MSG_BYTES] = {0};
    double t[TRIALS];
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0 && rank != peer)
        return -1;
    for (int trial = 0; trial < TRIALS; trial++) {
        double t0 = MPI_Wtime();
        for (int r = 0; r < ROUNDS; r++) {
            if (rank == 0) {
                MPI_Send(buf, MSG_BYTES, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, MSG_BYTES, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, MSG_BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, MSG_BYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        t[trial] = (MPI_Wtime() - t0) / (2.0 * ROUNDS);
    }
    qsort(t, TRIALS, sizeof t[0], cmp_double);
    return rank == 0 ? t[TRIALS / 2] : -1;
}

/* Parses "LO:HI" (microseconds). */
static int parse_range(const char *s, double range[2])
{
    return sscanf(s, "%lf:%lf", &range[0], &range[1]) == 2 && range[0] <= range[1];
}

static int report(const char *what, double us, const double *range)
{
    int ok = !range || (us >= range[0] && us <= range[1]);
    printf("pingpong %-5s %d B: %.3f us half round trip", what, MSG_BYTES, us);
    if (range)
        printf(" (expected %.2f-%.2f: %s)", range[0], range[1], ok ? "ok" : "OUT OF RANGE");
    printf("\n");
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    double intra_range[2], inter_range[2];
    const double *intra_check = NULL, *inter_check = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--intra") && i + 1 < argc && parse_range(argv[i + 1], intra_range)) {
            intra_check = intra_range;
            i++;
        } else if (!strcmp(argv[i], "--inter") && i + 1 < argc &&
                   parse_range(argv[i + 1], inter_range)) {
            inter_check = inter_range;
            i++;
        } else {
            if (rank == 0)
                fprintf(stderr, "pingpong: bad argument %s (usage: [--intra LO:HI] "
                                "[--inter LO:HI], microseconds)\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }

    /* Which ranks share rank 0's host: the first one is the intra peer, the
     * first one that does not is the inter peer. */
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(name, &len);
    char *names = calloc((size_t)P, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    int intra = -1, inter = -1;
    for (int i = 1; i < P; i++) {
        int same = strcmp(names + (size_t)i * MPI_MAX_PROCESSOR_NAME, names) == 0;
        if (same && intra < 0)
            intra = i;
        if (!same && inter < 0)
            inter = i;
    }
    free(names);

    int ok = 1;
    if (intra > 0) {
        double s = half_round_trip(rank, intra);
        if (rank == 0)
            ok &= report("intra", s * 1e6, intra_check);
    } else if (rank == 0 && intra_check) {
        printf("pingpong intra: no second rank on rank 0's node\n");
        ok = 0;
    }
    if (inter > 0) {
        double s = half_round_trip(rank, inter);
        if (rank == 0)
            ok &= report("inter", s * 1e6, inter_check);
    } else if (rank == 0 && inter_check) {
        printf("pingpong inter: all ranks on rank 0's node\n");
        ok = 0;
    }
    fflush(stdout);
    /* Every rank returns the verdict (SMPI 3.32's MPI_Abort exits 0). */
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}

/*
 * test_preload_callers.c - an "unmodified application" that uses every C
 * entry point of the MPI_Alltoallv family, run under libxchg-preload.so
 * with XCHG_VERBOSE=1; CTest checks the preload's report (what xchg
 * served, what fell through and why) with tests/expect_lines.sh.
 *
 * On each rank, with P ranks in MPI_COMM_WORLD:
 *   MPI_Alltoallv      2 calls on MPI_COMM_WORLD, 1 on an intercommunicator
 *                      (P >= 2: two halves), which xchg does not take
 *   MPI_Alltoallv_c    2 calls, and 1 whose count on the last rank is above
 *                      INT_MAX (of a zero-size type): passed to MPI by xchg
 *                      (where the library has large counts)
 *   MPI_Ialltoallv     1 call + MPI_Wait: served (test_preload_requests.c
 *                      tests the request calls)
 *   MPI_Alltoallv_init 1 request, 2 starts (MPI-4 libraries): served
 * Every result is checked by formula (MPI's own all-to-all is under test
 * here, so it cannot be the reference). Knows nothing of xchg.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int rank, P, bad;

static int value(int from, int to, int k, int round)
{
    return round * 1000000 + from * 1000 + to * 10 + k;
}

/* counts (rank + 2 j) % 4 to j, some zeros; displacements packed */
static void layout(int me, int n, int remote_base, int *sc, int *sd, int *rc, int *rd, int *st,
                   int *rt)
{
    *st = *rt = 0;
    for (int j = 0; j < n; j++) {
        int peer = remote_base + j;
        sc[j] = (me + 2 * peer) % 4;
        rc[j] = (peer + 2 * me) % 4;
        sd[j] = *st;
        rd[j] = *rt;
        *st += sc[j];
        *rt += rc[j];
    }
}

static void fill(int *sb, const int *sc, const int *sd, int n, int base, int round)
{
    for (int j = 0; j < n; j++)
        for (int k = 0; k < sc[j]; k++)
            sb[sd[j] + k] = value(rank, base + j, k, round);
}

static void check(const int *rb, const int *rc, const int *rd, int n, int base, int round,
                  const char *what)
{
    for (int j = 0; j < n; j++)
        for (int k = 0; k < rc[j]; k++)
            if (rb[rd[j] + k] != value(base + j, rank, k, round)) {
                fprintf(stderr, "FAIL [rank %d] %s: element %d from rank %d is %d, expected %d\n",
                        rank, what, k, base + j, rb[rd[j] + k], value(base + j, rank, k, round));
                bad++;
                return;
            }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    int st, rt;
    layout(rank, P, 0, sc, sd, rc, rd, &st, &rt);
    int *sb = malloc(sizeof(int) * (st + 1)), *rb = malloc(sizeof(int) * (rt + 1));

    for (int round = 0; round < 2; round++) {
        fill(sb, sc, sd, P, 0, round);
        if (MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
            bad++;
        check(rb, rc, rd, P, 0, round, "MPI_Alltoallv");
    }

    if (P >= 2) { /* an intercommunicator between the two halves */
        int half = P / 2, low = rank < half;
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, low, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 7, &inter);
        int rbase = low ? half : 0, rn = low ? P - half : half;
        int *isc = malloc(sizeof(int) * rn), *isd = malloc(sizeof(int) * rn);
        int *irc = malloc(sizeof(int) * rn), *ird = malloc(sizeof(int) * rn);
        int ist, irt;
        layout(rank, rn, rbase, isc, isd, irc, ird, &ist, &irt);
        int *isb = malloc(sizeof(int) * (ist + 1)), *irb = malloc(sizeof(int) * (irt + 1));
        fill(isb, isc, isd, rn, rbase, 7);
        if (MPI_Alltoallv(isb, isc, isd, MPI_INT, irb, irc, ird, MPI_INT, inter) != MPI_SUCCESS)
            bad++;
        check(irb, irc, ird, rn, rbase, 7, "MPI_Alltoallv on an intercommunicator");
        free(isc); free(isd); free(irc); free(ird); free(isb); free(irb);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }

    {
        MPI_Request req;
        fill(sb, sc, sd, P, 0, 3);
        if (MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &req) !=
                MPI_SUCCESS ||
            MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            bad++;
        check(rb, rc, rd, P, 0, 3, "MPI_Ialltoallv");
    }

#if MPI_VERSION >= 4
    {
        MPI_Request req;
        if (MPI_Alltoallv_init(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &req) != MPI_SUCCESS)
            bad++;
        for (int round = 4; round < 6; round++) {
            fill(sb, sc, sd, P, 0, round);
            if (MPI_Start(&req) != MPI_SUCCESS || MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                bad++;
            check(rb, rc, rd, P, 0, round, "MPI_Alltoallv_init");
        }
        MPI_Request_free(&req);
    }
    {
        MPI_Count *csc = malloc(sizeof(MPI_Count) * P), *crc = malloc(sizeof(MPI_Count) * P);
        MPI_Aint *csd = malloc(sizeof(MPI_Aint) * P), *crd = malloc(sizeof(MPI_Aint) * P);
        for (int j = 0; j < P; j++) {
            csc[j] = sc[j];
            crc[j] = rc[j];
            csd[j] = sd[j];
            crd[j] = rd[j];
        }
        for (int round = 8; round < 10; round++) {
            fill(sb, sc, sd, P, 0, round);
            if (MPI_Alltoallv_c(sb, csc, csd, MPI_INT, rb, crc, crd, MPI_INT, MPI_COMM_WORLD) !=
                MPI_SUCCESS)
                bad++;
            check(rb, rc, rd, P, 0, round, "MPI_Alltoallv_c");
        }
        /* a count above INT_MAX of a zero-size type, on the last rank */
        MPI_Datatype empty;
        MPI_Type_contiguous(0, MPI_INT, &empty);
        MPI_Type_commit(&empty);
        for (int j = 0; j < P; j++) {
            csc[j] = crc[j] = 1;
            csd[j] = crd[j] = 0;
        }
        if (rank == P - 1)
            csc[0] = 3000000000LL;
        if (MPI_Alltoallv_c(sb, csc, csd, empty, rb, crc, crd, empty, MPI_COMM_WORLD) !=
            MPI_SUCCESS)
            bad++;
        MPI_Type_free(&empty);
        free(csc); free(crc); free(csd); free(crd);
    }
#endif

    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_preload_callers on %d ranks: %s\n", P, all ? "FAILED" : "results correct");
    free(sc); free(sd); free(rc); free(rd); free(sb); free(rb);
    MPI_Finalize();
    return all ? 1 : 0;
}

/*
 * test_isolation.c - library traffic never meets the caller's messages.
 *
 * 1. Each rank posts MPI_ANY_SOURCE/MPI_ANY_TAG receives on its own
 *    communicator, then runs every algorithm on that same communicator while
 *    its own sends are in flight. If xchg used the caller's communicator, a
 *    wildcard receive would take a library message (wrong contents or
 *    truncation) and the library would wait forever for it.
 * 2. The private duplicate is freed with the caller's communicator: a loop
 *    creating, using and freeing communicators runs past MPICH's ~2000
 *    context ids, so a leaked duplicate makes MPI_Comm_dup fail.
 *
 * Usage: test_isolation [free-loop-iterations]   (default 2100 on one rank,
 * where MPI_Comm_dup is local and fast, 30 on more: a leak does not depend
 * on the rank count, and oversubscribed MPICH needs ~0.1 s per dup)
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC 0x5eed

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, fails = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int loops = argc > 1 ? atoi(argv[1]) : (P == 1 ? 2100 : 30);

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    int nalg = xchg_algo_count();
    int *sc = malloc(sizeof(int) * (size_t)P), *sd = malloc(sizeof(int) * (size_t)P);
    int *sb = malloc(sizeof(int) * (size_t)P * 3), *rb = malloc(sizeof(int) * (size_t)P * 3);
    for (int i = 0; i < P; i++) {
        sc[i] = 3;
        sd[i] = 3 * i;
    }

    /* the caller's wildcard receives: one message from every rank per algorithm */
    int nuser = P * nalg;
    int(*umsg)[4] = calloc((size_t)nuser, sizeof *umsg);
    int(*usend)[4] = calloc((size_t)nuser, sizeof *usend);
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)nuser);
    for (int k = 0; k < nuser; k++)
        MPI_Irecv(umsg[k], 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &req[k]);

    for (int a = 0; a < nalg; a++) {
        /* this round's user messages are in flight during the exchange */
        for (int j = 0; j < P; j++) {
            int k = a * P + j;
            usend[k][0] = MAGIC; usend[k][1] = rank; usend[k][2] = a; usend[k][3] = j;
            MPI_Isend(usend[k], 4, MPI_INT, j, a % 5, comm, &req[nuser + k]);
        }
        for (int i = 0; i < 3 * P; i++) {
            sb[i] = rank * 1000 + i;
            rb[i] = -1;
        }
        int rc = xchg_alltoallv_algo(xchg_algo_at(a), sb, sc, sd, MPI_INT, rb, sc, sd, MPI_INT, comm);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "FAIL [rank %d] %s returned %d\n", rank, xchg_algo_name(xchg_algo_at(a)), rc);
            fails++;
        }
        for (int j = 0; j < P; j++)
            for (int q = 0; q < 3; q++)
                if (rb[3 * j + q] != j * 1000 + 3 * rank + q) {
                    fprintf(stderr, "FAIL [rank %d] %s: wrong data from %d\n", rank,
                            xchg_algo_name(xchg_algo_at(a)), j);
                    fails++;
                    q = 3; j = P;
                }
    }
    MPI_Waitall(2 * nuser, req, MPI_STATUSES_IGNORE);
    /* every user message arrived intact, once each */
    int *seen = calloc((size_t)nuser, sizeof(int));
    for (int k = 0; k < nuser; k++) {
        int src = umsg[k][1], a = umsg[k][2];
        if (umsg[k][0] != MAGIC || umsg[k][3] != rank || src < 0 || src >= P || a < 0 || a >= nalg ||
            seen[a * P + src]++) {
            fprintf(stderr, "FAIL [rank %d] user receive %d got a foreign message\n", rank, k);
            fails++;
            break;
        }
    }
    free(seen);

    /* the private duplicate goes with the caller's communicator */
    int one = 1, got = 0;
    for (int it = 0; it < loops && !fails; it++) {
        MPI_Comm c;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &c) != MPI_SUCCESS) {
            fprintf(stderr, "FAIL [rank %d] MPI_Comm_dup failed at iteration %d: "
                    "private duplicates leak\n", rank, it);
            fails++;
            break;
        }
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        if (xchg_alltoallv(&one, (int[]){1}, (int[]){0}, MPI_INT, &got, (int[]){1}, (int[]){0},
                           MPI_INT, P == 1 ? c : MPI_COMM_SELF) != MPI_SUCCESS ||
            xchg_alltoallv_algo(XCHG_ALGO_LINEAR, sb, sc, sd, MPI_INT, rb, sc, sd, MPI_INT, c) != MPI_SUCCESS) {
            fprintf(stderr, "FAIL [rank %d] exchange failed at iteration %d\n", rank, it);
            fails++;
        }
        MPI_Comm_free(&c);
    }

    MPI_Comm_free(&comm);
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_isolation on %d ranks: %d passed, %d failed\n", P, all ? 0 : 1, all ? 1 : 0);
    free(sc); free(sd); free(sb); free(rb); free(umsg); free(usend); free(req);
    MPI_Finalize();
    return all ? 1 : 0;
}

/*
 * test_shm_threads.c - the node-shared window under MPI_THREAD_MULTIPLE:
 * two threads per rank, each with its own communicator, run forced shm
 * and auto at once, with blocks that grow from call to call (so windows
 * are made and grown while the other thread's are in use), against
 * MPI_Alltoallv on the same communicator.
 *
 * Where MPI makes no shared window at that level or at all (Open MPI
 * without osc sm, or whose one-sided component refuses
 * MPI_THREAD_MULTIPLE), every rank must run linear instead; where
 * XCHG_MAX_TEMP_BYTES keeps a window from growing, the calls that do not
 * fit run linear. Either way every call ends alike on every rank (the
 * same error class, here none) with MPI's result; never an abort or a
 * hang (ctest's timeout). Prints "N passed, M failed".
 */
#include "xchg.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 2, CALLS = 8 };

static int rank, P;

typedef struct worker {
    int id;
    MPI_Comm comm;
    int npass, nfail;
} worker;

/* Blocks of call k: grow by 4x every other call, 16 B to 4 KiB x (rank+1),
 * and zero to every third peer (empty blocks too). */
static int count_of(int k, int from, int to)
{
    if ((from + to + k) % 3 == 0)
        return 0;
    return (16 << (2 * (k / 2))) / 4 * (1 + (from + 2 * to) % 3);
}

static int one_call(worker *w, int k, char *detail, size_t len)
{
    int *sc = calloc(P, sizeof(int)), *sd = calloc(P, sizeof(int));
    int *rc = calloc(P, sizeof(int)), *rd = calloc(P, sizeof(int));
    int st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = count_of(k, rank, j);
        rc[j] = count_of(k, j, rank);
        sd[j] = st; st += sc[j];
        rd[j] = rt; rt += rc[j];
    }
    int *sb = malloc(sizeof(int) * (st + 1)), *r1 = calloc(rt + 1, sizeof(int));
    int *r2 = calloc(rt + 1, sizeof(int));
    for (int i = 0; i < st; i++)
        sb[i] = rank * 1000003 + w->id * 7919 + k * 131 + i;
    MPI_Alltoallv(sb, sc, sd, MPI_INT, r1, rc, rd, MPI_INT, w->comm);
    int e = k % 2 == 0 ? xchg_alltoallv_algo(XCHG_ALGO_SHM, sb, sc, sd, MPI_INT, r2, rc, rd,
                                             MPI_INT, w->comm)
                       : xchg_alltoallv(sb, sc, sd, MPI_INT, r2, rc, rd, MPI_INT, w->comm);
    int cls = MPI_SUCCESS;
    if (e != MPI_SUCCESS)
        MPI_Error_class(e, &cls);
    int lo = cls, hi = cls;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, w->comm);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, w->comm);
    int ok = lo == hi && lo == MPI_SUCCESS && memcmp(r1, r2, sizeof(int) * rt) == 0;
    snprintf(detail, len, "call %d (%s): error classes %d..%d over ranks, data %s", k,
             k % 2 == 0 ? "shm" : "auto", lo, hi,
             memcmp(r1, r2, sizeof(int) * rt) == 0 ? "right" : "wrong");
    free(sc); free(sd); free(rc); free(rd); free(sb); free(r1); free(r2);
    return ok;
}

static void *work(void *p)
{
    worker *w = p;
    for (int k = 0; k < CALLS; k++) {
        char detail[256];
        int ok = one_call(w, k, detail, sizeof detail), all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, w->comm);
        if (all) {
            w->npass++;
        } else {
            w->nfail++;
            if (!ok)
                fprintf(stderr, "FAIL [rank %d thread %d] %s\n", rank, w->id, detail);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("test_shm_threads: MPI_THREAD_MULTIPLE not provided: skipped\n");
        MPI_Finalize();
        return 77;
    }
    worker w[THREADS];
    pthread_t t[THREADS];
    memset(w, 0, sizeof w);
    for (int i = 0; i < THREADS; i++) { /* in the same order on every rank */
        w[i].id = i;
        MPI_Comm_dup(MPI_COMM_WORLD, &w[i].comm);
        MPI_Comm_set_errhandler(w[i].comm, MPI_ERRORS_RETURN);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, work, &w[i]);
    int npass = 0, nfail = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        npass += w[i].npass;
        nfail += w[i].nfail;
        MPI_Comm_free(&w[i].comm);
    }
    if (rank == 0)
        printf("test_shm_threads on %d ranks, %d threads each: %d passed, %d failed\n", P,
               THREADS, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}

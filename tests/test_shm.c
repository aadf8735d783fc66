/*
 * test_shm.c - "shm" across window growth: calls on one communicator whose
 * blocks alternate between fitting the node-shared window and not (run
 * with a small XCHG_SHM_BYTES), blocking, nonblocking and persistent, each
 * checked element by element. A call that does not fit runs linear and
 * the next one grows the window (shm.c): the data must be right either
 * way, on every rank, and no call may hang.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>

enum { MODE_BLOCKING, MODE_NONBLOCKING, MODE_PERSISTENT, MODE_COUNT };
static const char *mode_name[] = {"blocking", "nonblocking", "persistent"};

static int value(int src, int dst, int k, int it)
{
    return ((src * 64 + dst) * 1000 + k) * 16 + it % 16;
}

/* One call of n ints to every peer (rank+1 more to the next rank, so the
 * counts differ), checked; returns the number of wrong elements. */
static int run_once(MPI_Comm comm, int mode, int n, int it)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    int *sc = malloc(sizeof(int) * 4 * (size_t)P), *sd = sc + P, *rc = sc + 2 * P,
        *rd = sc + 3 * P;
    int st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = n + (j == (me + 1) % P ? me + 1 : 0);
        rc[j] = n + (me == (j + 1) % P ? j + 1 : 0);
        sd[j] = st, rd[j] = rt;
        st += sc[j], rt += rc[j];
    }
    int *sb = malloc(sizeof(int) * (size_t)(st + 1)), *rb = malloc(sizeof(int) * (size_t)(rt + 1));
    for (int j = 0; j < P; j++)
        for (int k = 0; k < sc[j]; k++)
            sb[sd[j] + k] = value(me, j, k, it);
    for (int k = 0; k < rt; k++)
        rb[k] = -1;
    int err = MPI_SUCCESS;
    xchg_request req;
    if (mode == MODE_BLOCKING) {
        err = xchg_alltoallv_algo(XCHG_ALGO_SHM, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm);
    } else if (mode == MODE_NONBLOCKING) {
        err = xchg_ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm, &req);
        if (err == MPI_SUCCESS)
            err = xchg_wait(req);
        xchg_request_free(&req);
    } else {
        err = xchg_alltoallv_init(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm, MPI_INFO_NULL,
                                  &req);
        for (int s = 0; s < 2 && err == MPI_SUCCESS; s++) {
            err = xchg_start(req);
            if (err == MPI_SUCCESS)
                err = xchg_wait(req);
        }
        if (err == MPI_SUCCESS)
            xchg_request_free(&req);
    }
    int bad = err != MPI_SUCCESS;
    for (int j = 0; j < P && !bad; j++)
        for (int k = 0; k < rc[j]; k++)
            bad += rb[rd[j] + k] != value(j, me, k, it);
    free(sb);
    free(rb);
    free(sc);
    return bad;
}

int main(int argc, char **argv)
{
    /* the nonblocking and persistent calls take it from here: read when a
     * communicator's state is made */
    setenv("XCHG_ALLTOALLV_ALGO", "shm", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int me, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    /* ints per peer: fits, overflows (grows next call), fits, larger... */
    const int sizes[] = {1, 40, 2, 0, 200, 3, 50, 1000, 1, 5, 0, 2000, 7};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    int failed = 0, passed = 0;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        int bad = 0;
        for (int it = 0; it < nsizes; it++) {
            int mine = run_once(comm, mode, sizes[it], it), all = 0;
            MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (all && !bad && me == 0)
                printf("FAIL %s: call %d (%d ints per peer): %d wrong elements\n",
                       mode_name[mode], it, sizes[it], all);
            bad += all != 0;
        }
        if (me == 0 && !bad)
            printf("ok %s: %d calls\n", mode_name[mode], nsizes);
        failed += bad != 0;
        passed += bad == 0;
        MPI_Comm_free(&comm);
    }
    if (me == 0)
        printf("test_shm on %d ranks: %d passed, %d failed\n", P, passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}

/*
 * test_shm_share.c - one node window for many communicators: blocking
 * "shm" calls on 16 live duplicates of one communicator hold no more
 * node-shared memory than calls on one (xchg_stats.shm_bytes), also
 * after one of them grows the window, and after the communicator that
 * made it is freed; a communicator of the same ranks in another order
 * gets its own; nonblocking and persistent calls (their own window) run
 * between blocking calls on the others; every call checked element by
 * element; with every communicator freed, nothing is held.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>

enum { COMMS = 16 };

static int me_world;
static int failures;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "rank %d: ", me_world);                                        \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

static int value(int src, int dst, int k, int tag)
{
    return ((src * 64 + dst) * 4096 + k) * 64 + tag % 64;
}

/* One exchange's buffers: n ints to every peer, one more per rank of
 * distance (counts differ between pairs). */
typedef struct exchange {
    int P, me, tag;
    int *sc, *sd, *rc, *rd, *sb, *rb;
} exchange;

static void exchange_make(exchange *x, MPI_Comm comm, int n, int tag)
{
    MPI_Comm_size(comm, &x->P);
    MPI_Comm_rank(comm, &x->me);
    int P = x->P, me = x->me;
    x->tag = tag;
    x->sc = malloc(sizeof(int) * 4 * (size_t)P);
    x->sd = x->sc + P, x->rc = x->sc + 2 * P, x->rd = x->sc + 3 * P;
    int st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        x->sc[j] = n + (j - me + P) % P;
        x->rc[j] = n + (me - j + P) % P;
        x->sd[j] = st, x->rd[j] = rt;
        st += x->sc[j], rt += x->rc[j];
    }
    x->sb = malloc(sizeof(int) * (size_t)(st + 1));
    x->rb = malloc(sizeof(int) * (size_t)(rt + 1));
    for (int j = 0; j < P; j++)
        for (int k = 0; k < x->sc[j]; k++)
            x->sb[x->sd[j] + k] = value(me, j, k, tag);
    for (int k = 0; k < rt; k++)
        x->rb[k] = -1;
}

/* Checks and frees; returns the wrong elements. */
static int exchange_check(exchange *x, const char *what)
{
    int bad = 0;
    for (int j = 0; j < x->P; j++)
        for (int k = 0; k < x->rc[j]; k++)
            if (x->rb[x->rd[j] + k] != value(j, x->me, k, x->tag))
                bad++;
    CHECK(bad == 0, "%s: %d wrong elements", what, bad);
    free(x->sc);
    free(x->sb);
    free(x->rb);
    return bad;
}

static void blocking(MPI_Comm comm, int n, int tag, const char *what)
{
    exchange x;
    exchange_make(&x, comm, n, tag);
    int rc = xchg_alltoallv_algo(XCHG_ALGO_SHM, x.sb, x.sc, x.sd, MPI_INT, x.rb, x.rc, x.rd,
                                 MPI_INT, comm);
    CHECK(rc == MPI_SUCCESS, "%s: rc %d", what, rc);
    exchange_check(&x, what);
}

static size_t held(MPI_Comm comm)
{
    xchg_stats s;
    xchg_get_stats(comm, &s);
    return s.shm_bytes;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me_world);
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm comms[COMMS];
    for (int i = 0; i < COMMS; i++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);

    /* One communicator's window, then the same calls on all 16. */
    blocking(comms[0], 4, 1, "first communicator");
    const size_t one = held(comms[0]);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < COMMS; i++)
            blocking(comms[i], 4, 2 + round, "16 communicators");
    size_t all = held(comms[0]);
    CHECK(all == one, "16 communicators hold %zu bytes of shared memory, one held %zu", all,
          one);
    int made = one > 0; /* a window (MPI may refuse it: then linear, nothing held) */

    /* One grows the window (256 ints a peer: the first call runs linear
     * and asks for more, the next grows it); all use the larger one. */
    blocking(comms[5], 256, 10, "growing");
    blocking(comms[5], 256, 11, "grown");
    const size_t grown = held(comms[5]);
    for (int i = 0; i < COMMS; i++)
        blocking(comms[i], 256, 12, "after growth");
    CHECK(held(comms[0]) == grown, "after growth %zu bytes held, the grown window is %zu",
          held(comms[0]), grown);
    CHECK(!made || P == 1 || grown > one, "the window did not grow (%zu, was %zu)", grown, one);

    /* The maker freed: the others keep the window. */
    MPI_Comm_free(&comms[0]);
    for (int i = 1; i < COMMS; i++)
        blocking(comms[i], 8, 20, "maker freed");
    CHECK(held(comms[1]) == grown, "maker freed: %zu bytes held, was %zu", held(comms[1]),
          grown);

    /* The same ranks in reverse order: another window of their own. */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - me_world, &rev);
    blocking(rev, 8, 30, "reversed order");
    CHECK(!made || P == 1 || held(rev) > grown, "the reversed communicator borrowed (%zu "
          "bytes held, %zu before)", held(rev), grown);
    blocking(comms[3], 8, 31, "after the reversed one");

    /* Nonblocking and persistent calls (their own windows) with blocking
     * calls on communicators that share one between start and wait. */
    for (int it = 0; it < 3; it++) {
        exchange a, b;
        xchg_request ra, rb;
        exchange_make(&a, comms[1], 6, 40 + it);
        int rc = xchg_ialltoallv_algo(XCHG_ALGO_SHM, a.sb, a.sc, a.sd, MPI_INT, a.rb, a.rc, a.rd,
                                      MPI_INT, comms[1], &ra);
        CHECK(rc == MPI_SUCCESS, "ialltoallv rc %d", rc);
        exchange_make(&b, comms[2], 5, 50 + it);
        rc = xchg_alltoallv_init_algo(XCHG_ALGO_SHM, b.sb, b.sc, b.sd, MPI_INT, b.rb, b.rc, b.rd,
                                      MPI_INT, comms[2], MPI_INFO_NULL, &rb);
        CHECK(rc == MPI_SUCCESS, "init rc %d", rc);
        if (rc == MPI_SUCCESS)
            rc = xchg_start(rb);
        blocking(comms[4], 7, 60 + it, "between start and wait");
        blocking(comms[1 + it % 2 + 2], 3, 70 + it, "between start and wait");
        CHECK(xchg_wait(ra) == MPI_SUCCESS, "ialltoallv wait");
        CHECK(rc == MPI_SUCCESS && xchg_wait(rb) == MPI_SUCCESS, "persistent wait");
        exchange_check(&a, "nonblocking");
        exchange_check(&b, "persistent");
        xchg_request_free(&ra);
        xchg_request_free(&rb);
    }
    blocking(comms[6], 9, 80, "after the nonblocking ones");

    /* Freed in another order than made: at the end nothing is held. */
    MPI_Comm_free(&rev);
    for (int i = COMMS - 1; i >= 1; i--)
        MPI_Comm_free(&comms[i]);
    CHECK(held(MPI_COMM_WORLD) == 0, "%zu bytes still held with every communicator freed",
          held(MPI_COMM_WORLD));

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me_world == 0)
        printf("%s: shm window %s, %zu bytes for 16 communicators (%zu grown)\n",
               total ? "FAIL" : "ok", made ? "made" : "refused by MPI", one, grown);
    MPI_Finalize();
    return total ? 1 : 0;
}

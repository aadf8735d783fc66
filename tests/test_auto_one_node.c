/*
 * test_auto_one_node.c - below XCHG_AUTO_MIN_P, with every rank on one
 * node, auto chooses between linear and shm by its model (select.c,
 * SMALL_NODE; model.c, xchg_model_shm), the same on every rank, and the
 * result is MPI_Alltoallv's.
 *
 * Whether shm can run is this MPI's to say: the test makes a shared
 * window itself (MPI_Win_allocate_shared on a duplicate of
 * MPI_COMM_WORLD); where MPI refuses one (Open MPI without its osc sm
 * component), every call below must run linear, as the stats report: a
 * communicator's first blocking call that chooses shm tries the window,
 * finds it refused (on every rank) and runs linear. Where it can:
 *   - dense 16 B blocks: shm (a flag per peer beats a message per block);
 *   - a ring (one 16 B block to the next rank) on 3+ ranks: linear (the
 *     flags of every peer cost more than two messages);
 *   - dense 64 KiB blocks: shm too (the bytes cost the same either way);
 *   - dense then a ring on one communicator: linear again within
 *     XCHG_AUTO_REFRESH calls (the refresh sees the pattern move);
 *   - a nonblocking first call: linear (a window is made by a blocking
 *     call, never inside a coroutine); then a blocking call: shm (and the
 *     window the nonblocking call wanted); then a nonblocking call: shm;
 *   - a blocking first call: shm; then a nonblocking call: linear (its
 *     coroutine may not use the window of blocking calls, which other
 *     communicators of the group may borrow, and auto's nonblocking start
 *     makes none: node/shm_window.h); shm once the next blocking call made
 *     the communicator's own;
 *   - XCHG_SHM_BYTES=0 on a new communicator: linear, window or not;
 *   - a persistent request: correct whatever its init chose.
 * One rank (P=1) has no peers: linear.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "a2av_cases.h"
#include "check.h"

static int rank, P, npass, nfail;

enum { DENSE, RING };
enum { BLOCKING = A2AV_BLOCKING, NONBLOCKING = A2AV_NONBLOCKING, PERSISTENT = A2AV_PERSISTENT };

static MPI_Comm fresh(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    return comm;
}

/* Whether this MPI makes a shared window over every rank here (the same
 * answer everywhere: MPI_Win_allocate_shared is collective). */
static int mpi_shares_memory(void)
{
    MPI_Comm comm = fresh(), node;
    int nsize = 0;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    char *base = NULL;
    MPI_Win win = MPI_WIN_NULL;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int ok = MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, comm, &base, &win) == MPI_SUCCESS;
    if (win != MPI_WIN_NULL)
        MPI_Win_free(&win);
    int all = 0, mine = ok && nsize == P;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Comm_free(&comm);
    return all;
}

/* One exchange of the pattern with blocks of `bytes`; returns the
 * algorithm xchg ran (XCHG_ALGO_INVALID on an error), *ok when the result
 * equals MPI_Alltoallv's. */
static xchg_algo exchange(MPI_Comm comm, int pattern, int bytes, int how, int *ok)
{
    int *sc = calloc(P, sizeof(int));
    for (int j = 0; j < P; j++)
        sc[j] = pattern == DENSE || j == (rank + 1) % P ? bytes : 0;
    a2av_bytes x;
    a2av_bytes_make(&x, sc, comm);
    int ran, e = a2av_bytes_run(&x, how, 3, comm, &ran);
    *ok = e == MPI_SUCCESS && a2av_bytes_same(&x);
    a2av_bytes_free(&x);
    return e == MPI_SUCCESS ? (xchg_algo)ran : XCHG_ALGO_INVALID;
}

static const char *name(xchg_algo a)
{
    return xchg_algo_name(a) ? xchg_algo_name(a) : "?";
}

#define EXPECT_RAN(a, ok, want, what)                                                    \
    CHECK_ALL((ok) && (a) == (want) && check_same_everywhere((int)(a), MPI_COMM_WORLD), \
              "%s: auto ran %s, expected %s (correct: %d)", what, name(a), name(want), ok)

/* Dense 16 B calls on a new communicator, one per step, each expecting
 * what auto runs. */
typedef struct call_step {
    int how;
    xchg_algo want;
    const char *what;
} call_step;

static void calls_on_fresh(const call_step *steps, int n)
{
    MPI_Comm comm = fresh();
    for (int i = 0; i < n; i++) {
        int ok;
        xchg_algo a = exchange(comm, DENSE, 16, steps[i].how, &ok);
        EXPECT_RAN(a, ok, steps[i].want, steps[i].what);
    }
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const int shares = mpi_shares_memory();
    const xchg_algo one_node = P > 1 && shares ? XCHG_ALGO_SHM : XCHG_ALGO_LINEAR;
    int ok;
    xchg_algo a;

    MPI_Comm comm = fresh();
    a = exchange(comm, DENSE, 16, BLOCKING, &ok);
    EXPECT_RAN(a, ok, one_node, "dense 16 B, first call");
    for (int k = 0; k < 3; k++) {
        a = exchange(comm, DENSE, 16, BLOCKING, &ok);
        EXPECT_RAN(a, ok, one_node, "dense 16 B");
    }
    MPI_Comm_free(&comm);

    if (P >= 3) {
        comm = fresh();
        a = exchange(comm, RING, 16, BLOCKING, &ok);
        EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "ring 16 B");
        MPI_Comm_free(&comm);
    }

    comm = fresh();
    a = exchange(comm, DENSE, 65536, BLOCKING, &ok);
    EXPECT_RAN(a, ok, one_node, "dense 64 KiB");
    MPI_Comm_free(&comm);

    /* the pattern moves: the refresh (at most XCHG_AUTO_REFRESH calls
     * away, 4 in tests/CMakeLists.txt) chooses again */
    comm = fresh();
    a = exchange(comm, DENSE, 16, BLOCKING, &ok);
    EXPECT_RAN(a, ok, one_node, "dense, then a ring: dense");
    if (P >= 3) {
        int all_ok = 1;
        for (int k = 0; k < 12; k++) {
            a = exchange(comm, RING, 16, BLOCKING, &ok);
            all_ok &= ok;
        }
        EXPECT_RAN(a, all_ok, XCHG_ALGO_LINEAR, "dense, then a ring: the ring");
    }
    MPI_Comm_free(&comm);

    const call_step nonblocking_first[] = {
        {NONBLOCKING, XCHG_ALGO_LINEAR, "a nonblocking first call"},
        {BLOCKING, one_node, "then a blocking call"},
        {NONBLOCKING, one_node, "then a nonblocking call (the blocking one made its own window)"}};
    calls_on_fresh(nonblocking_first, 3);
    const call_step blocking_first[] = {
        {BLOCKING, one_node, "a blocking first call"},
        {NONBLOCKING, XCHG_ALGO_LINEAR, "then a nonblocking call (no window of its own yet)"},
        {BLOCKING, one_node, "then a blocking call again (it makes the own window)"},
        {NONBLOCKING, one_node, "then a nonblocking call (with its own window)"}};
    calls_on_fresh(blocking_first, 4);

    setenv("XCHG_SHM_BYTES", "0", 1);
    comm = fresh();
    a = exchange(comm, DENSE, 16, BLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "XCHG_SHM_BYTES=0");
    MPI_Comm_free(&comm);
    unsetenv("XCHG_SHM_BYTES");

    comm = fresh();
    a = exchange(comm, DENSE, 16, PERSISTENT, &ok);
    CHECK_ALL(ok && check_same_everywhere((int)a, MPI_COMM_WORLD),
              "persistent, dense 16 B: ran %s (correct: %d)", name(a), ok);
    MPI_Comm_free(&comm);

    int tot[2] = {npass, nfail};
    if (rank == 0)
        printf("test_auto_one_node on %d ranks (shared windows: %s): %d passed, %d failed\n", P,
               shares ? "yes" : "no", tot[0], tot[1]);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}

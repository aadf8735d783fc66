/*
 * test_relays.c - the node-aware algorithms that relay blocks in messages
 * with headers (relay_common.h), over nodes made by XCHG_RANKS_PER_NODE
 * (read once per communicator): their relays, their agreed refusals and a
 * relay that runs out of memory.
 *
 * Usage: test_relays node_pairs|multileader. node_pairs' relays: the member
 * at place l of a node of L serves the nodes at distance l+1, l+1+L, ...;
 * multileader's: the first member of each of the min(k, L) groups of
 * consecutive places (k = XCHG_LEADERS, which must be set).
 *
 * For k = 2, 3, 1, unset (one machine: one node), 2 (set with setenv alike
 * on all ranks, then a new communicator each):
 *  - values: two exchanges of 3 ints per block, checked by formula, with a
 *    gap before each receive block that must stay untouched;
 *  - relays: a member that relays for more ranks holds strictly more
 *    temporary memory (xchg_get_stats) than a node-mate (node_pairs) or
 *    group-mate (multileader) relaying for fewer;
 *  - agreed: one rank's argument error (sendcounts[0] = -1 on rank P-1)
 *    and one rank without memory for its own blocks
 *    (XCHG_FAULT_TEMP_LIMIT=0 there) give every rank the same class
 *    (MPI_ERR_COUNT, MPI_ERR_NO_MEM), with nothing written to any
 *    receive buffer; then a good call works;
 *  - relay refused: the busiest relay limited to one byte under its peak
 *    (its last allocation, a relayed message, fails mid-exchange): it
 *    returns MPI_ERR_NO_MEM, every other rank MPI_ERR_NO_MEM or the right
 *    data, nobody hangs (the CTest timeout); then a good call works; and
 *    with that relay at half its peak and an argument error elsewhere,
 *    every rank still ends with one class.
 * Prints "N passed, M failed"; exits non-zero on a failure.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK_RANK me
#include "check.h"

static int me, P, npass, nfail;
static xchg_algo algo;
static int leaders; /* multileader: XCHG_LEADERS */

enum { B = 3 }; /* ints per block */

typedef struct bufs {
    int sc[64], sd[64], rc[64], rd[64];
    int sb[64 * B], rb[64 * (B + 1)];
} bufs;

static void fill(bufs *b)
{
    for (int r = 0; r < P; r++) {
        b->sc[r] = b->rc[r] = B;
        b->sd[r] = r * B;
        b->rd[r] = r * (B + 1) + 1; /* a gap before each block */
        for (int i = 0; i < B; i++)
            b->sb[r * B + i] = me * 1000000 + r * 1000 + i;
    }
    for (int i = 0; i < P * (B + 1); i++)
        b->rb[i] = -7;
}

static int correct(const bufs *b)
{
    for (int r = 0; r < P; r++) {
        if (b->rb[b->rd[r] - 1] != -7)
            return 0;
        for (int i = 0; i < B; i++)
            if (b->rb[b->rd[r] + i] != r * 1000000 + me * 1000 + i)
                return 0;
    }
    return 1;
}

/* Nothing written, except (maybe) this rank's own block. */
static int untouched(const bufs *b)
{
    for (int i = 0; i < P * (B + 1); i++)
        if (b->rb[i] != -7 && (i < b->rd[me] || i >= b->rd[me] + B))
            return 0;
    return 1;
}

static int run(bufs *b, MPI_Comm comm)
{
    int code = xchg_alltoallv_algo(algo, b->sb, b->sc, b->sd, MPI_INT, b->rb,
                                   b->rc, b->rd, MPI_INT, comm), cls;
    MPI_Error_class(code, &cls);
    return cls;
}

/* Group of rank r (multileader: its first place; node_pairs: its node). */
static int unit_of(int r, int k)
{
    int a = r / k, L = (a + 1) * k > P ? P - a * k : k, l = r % k;
    if (algo != XCHG_ALGO_MULTILEADER)
        return a * k;
    int kk = leaders < L ? leaders : L, q = 0;
    while (q + 1 < kk && (long long)(q + 1) * L / kk <= l)
        q++;
    return a * k + (int)((long long)q * L / kk);
}

/* Ranks rank r relays for, on nodes of k ranks (k = P: one node):
 * node_pairs the remote nodes' ranks it serves, multileader its group. */
static int relayed(int r, int k)
{
    int N = (P + k - 1) / k, a = r / k, L = a == N - 1 ? P - a * k : k, n = 0;
    if (algo == XCHG_ALGO_MULTILEADER) {
        if (unit_of(r, k) != r)
            return 0;
        for (int q = r; q < P && unit_of(q, k) == r; q++)
            n++;
        return n;
    }
    for (int d = r % k + 1; d < N; d += L) {
        int b = (a + d) % N;
        n += b == N - 1 ? P - b * k : k;
    }
    return n;
}

static unsigned long long temp_bytes(MPI_Comm comm)
{
    xchg_stats st;
    if (xchg_get_stats(comm, &st) != MPI_SUCCESS || st.algo != algo)
        return 0;
    return st.temp_bytes;
}

static void values_and_relays(MPI_Comm comm, int k, bufs *b)
{
    fill(b);
    int cls = run(b, comm);
    CHECK_ALL(cls == MPI_SUCCESS && correct(b), "values, XCHG_RANKS_PER_NODE=%d", k);
    unsigned long long mine = temp_bytes(comm), all[64];
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG,
                  MPI_COMM_WORLD);
    int kk = k > 0 ? k : P, ok = 1;
    for (int r = 0; r < P; r++) {
        if (P > 1 && all[r] == 0)
            ok = 0;
        for (int q = r / kk * kk; q < P && q / kk == r / kk; q++)
            if (unit_of(q, kk) == unit_of(r, kk) && relayed(r, kk) > relayed(q, kk) &&
                all[r] <= all[q])
                ok = 0;
    }
    CHECK_ALL(ok, "relays hold more memory, XCHG_RANKS_PER_NODE=%d (rank %d: %llu bytes)", k,
              me, mine);
}

static void agreed(MPI_Comm comm, int k, bufs *b)
{
    /* an argument error on the last rank */
    fill(b);
    if (me == P - 1)
        b->sc[0] = -1;
    int cls = run(b, comm), same = check_same_everywhere(cls, MPI_COMM_WORLD);
    CHECK_ALL(P == 1 || (cls == MPI_ERR_COUNT && same && untouched(b)),
              "rpn %d: sendcounts[0] = -1 on rank %d: class %d, the same everywhere, "
              "nothing delivered", k, P - 1, cls);
    /* no memory for its own blocks on rank 0 */
    fill(b);
    if (me == 0)
        setenv("XCHG_FAULT_TEMP_LIMIT", "0", 1);
    cls = run(b, comm);
    unsetenv("XCHG_FAULT_TEMP_LIMIT");
    same = check_same_everywhere(cls, MPI_COMM_WORLD); /* collective: outside the condition */
    CHECK_ALL(P == 1 || (cls == MPI_ERR_NO_MEM && same && untouched(b)),
              "rpn %d: XCHG_FAULT_TEMP_LIMIT=0 on rank 0: class %d, the same everywhere, "
              "nothing delivered", k, cls);
    fill(b);
    cls = run(b, comm);
    CHECK_ALL(cls == MPI_SUCCESS && correct(b), "rpn %d: a good call after the refusals", k);
}

static void relay_refused(MPI_Comm comm, int k, bufs *b)
{
    int kk = k > 0 ? k : P, busiest = 0;
    for (int r = 0; r < P; r++)
        if (relayed(r, kk) > relayed(busiest, kk))
            busiest = r;
    if (P == 1 || relayed(busiest, kk) == 0)
        return; /* nobody relays */
    fill(b);
    run(b, comm);
    unsigned long long peak = temp_bytes(comm);
    MPI_Bcast(&peak, 1, MPI_UNSIGNED_LONG_LONG, busiest, MPI_COMM_WORLD);
    char v[32];
    snprintf(v, sizeof v, "%llu", peak - 1);
    fill(b);
    if (me == busiest)
        setenv("XCHG_FAULT_TEMP_LIMIT", v, 1);
    int cls = run(b, comm);
    unsetenv("XCHG_FAULT_TEMP_LIMIT");
    int ok = me == busiest ? cls == MPI_ERR_NO_MEM
                           : cls == MPI_ERR_NO_MEM || (cls == MPI_SUCCESS && correct(b));
    CHECK_ALL(ok, "rpn %d: relay %d limited to %s bytes: class %d here", k, busiest, v, cls);
    fill(b);
    cls = run(b, comm);
    CHECK_ALL(cls == MPI_SUCCESS && correct(b), "rpn %d: a good call after the lost relay", k);
    /* both at once: the argument error's flag still reaches every rank
     * (flagged messages carry a header only, which needs no memory) */
    snprintf(v, sizeof v, "%llu", peak / 2);
    fill(b);
    if (me == P - 1)
        b->sc[0] = -1;
    if (me == busiest)
        setenv("XCHG_FAULT_TEMP_LIMIT", v, 1);
    cls = run(b, comm);
    unsetenv("XCHG_FAULT_TEMP_LIMIT");
    int same = check_same_everywhere(cls, MPI_COMM_WORLD);
    CHECK_ALL(same && (cls == MPI_ERR_COUNT || cls == MPI_ERR_NO_MEM),
              "rpn %d: relay %d limited to %s bytes and an argument error on rank %d: class "
              "%d, the same everywhere", k, busiest, v, P - 1, cls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    algo = argc > 1 ? xchg_algo_from_name(argv[1]) : XCHG_ALGO_INVALID;
    const char *lv = getenv("XCHG_LEADERS");
    leaders = lv ? atoi(lv) : 0;
    if (P > 64 || (algo != XCHG_ALGO_NODE_PAIRS && algo != XCHG_ALGO_MULTILEADER) ||
        (algo == XCHG_ALGO_MULTILEADER && leaders < 1)) {
        if (me == 0)
            printf("usage: test_relays node_pairs|multileader (with XCHG_LEADERS=k >= 1), "
                   "at most 64 ranks\n");
        MPI_Finalize();
        return 1;
    }
    bufs *b = malloc(sizeof *b);
    const int ks[] = {2, 3, 1, 0, 2};
    for (int i = 0; i < 5; i++) {
        char v[16];
        if (ks[i] > 0) {
            snprintf(v, sizeof v, "%d", ks[i]);
            setenv("XCHG_RANKS_PER_NODE", v, 1);
        } else {
            unsetenv("XCHG_RANKS_PER_NODE"); /* this test assumes one machine */
        }
        MPI_Comm comm; /* settings are read once per communicator */
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        values_and_relays(comm, ks[i], b);
        values_and_relays(comm, ks[i], b); /* the cached tables, again */
        agreed(comm, ks[i], b);
        relay_refused(comm, ks[i], b);
        MPI_Comm_free(&comm);
    }
    unsetenv("XCHG_RANKS_PER_NODE");
    free(b);
    if (me == 0)
        printf("test_relays %s on %d ranks: %d passed, %d failed\n", argv[1], P, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}

/*
 * test_hierarchical.c - the node grouping of "hierarchical" takes effect
 * and follows XCHG_RANKS_PER_NODE (read once per communicator).
 *
 * For k = 2, 3, 1, unset, 2 (set with setenv identically on all ranks,
 * then a new communicator) it runs two exchanges, checks the
 * received values by formula, and checks the leaders through the temporary
 * memory xchg_get_stats reports: a leader also holds its node's outgoing
 * and incoming data, so within each node of more than one rank the leader
 * (the node's first rank) reports strictly more than every other member.
 * With the variable unset all ranks of this machine share one node, led by
 * rank 0. The node-aware bruck_2level runs the same exchanges on the same
 * communicators (values only: it has no leader), also after hierarchical
 * on one communicator (both share its node layout). Prints "N passed, M
 * failed"; exits non-zero on a failure.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK_RANK me
#include "check.h"

static int me, P, npass, nfail;

/* Every block has the same size (3 ints, value s * 1000000 + d * 1000 + i),
 * so all members of a node hold the same temporary memory and only the
 * leader holds more. */
static int count(int s, int d) { (void)s; (void)d; return 3; }

static int run_once(MPI_Comm comm, int k, xchg_algo algo)
{
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    int ns = 0, nr = 0;
    for (int r = 0; r < P; r++) {
        sc[r] = count(me, r);
        sd[r] = ns;
        ns += sc[r];
        rc[r] = count(r, me);
        rd[r] = nr + 1; /* a gap before each block stays untouched */
        nr += rc[r] + 1;
    }
    int *sb = malloc(sizeof(int) * (size_t)ns), *rb = malloc(sizeof(int) * (size_t)nr);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < sc[r]; i++)
            sb[sd[r] + i] = me * 1000000 + r * 1000 + i;
    for (int i = 0; i < nr; i++)
        rb[i] = -7;
    int ok = xchg_alltoallv_algo(algo, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm) ==
             MPI_SUCCESS;
    for (int r = 0; r < P && ok; r++) {
        if (rb[rd[r] - 1] != -7)
            ok = 0;
        for (int i = 0; i < rc[r]; i++)
            if (rb[rd[r] + i] != r * 1000000 + me * 1000 + i)
                ok = 0;
    }
    char what[64];
    snprintf(what, sizeof what, "%s values, XCHG_RANKS_PER_NODE=%d", xchg_algo_name(algo), k);
    CHECK_ALL(ok, "%s", what);
    if (algo != XCHG_ALGO_HIERARCHICAL) {
        free(sb);
        free(rb);
        free(sc);
        free(sd);
        free(rc);
        free(rd);
        return ok;
    }

    /* leaders hold more temporary memory than the members of their node */
    xchg_stats st;
    unsigned long long mine = 0, *all = malloc(sizeof *all * (size_t)P);
    if (xchg_get_stats(comm, &st) == MPI_SUCCESS && st.algo == XCHG_ALGO_HIERARCHICAL)
        mine = st.temp_bytes;
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, comm);
    int kk = k > 0 ? k : P;
    ok = 1;
    for (int r = 0; r < P; r++) {
        if (P > 1 && all[r] == 0) /* P = 1 is a local copy */
            ok = 0;
        int lead = r / kk * kk;
        if (r != lead && all[r] >= all[lead])
            ok = 0;
    }
    snprintf(what, sizeof what, "leaders, XCHG_RANKS_PER_NODE=%d", k);
    CHECK_ALL(ok, "%s", what);
    free(all);
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const int ks[] = {2, 3, 1, 0, 2};
    for (int i = 0; i < 5; i++) {
        char v[16];
        if (ks[i] > 0) {
            snprintf(v, sizeof v, "%d", ks[i]);
            setenv("XCHG_RANKS_PER_NODE", v, 1);
        } else {
            /* unset: the real (shared-memory) nodes; this test assumes
             * one machine */
            unsetenv("XCHG_RANKS_PER_NODE");
        }
        /* settings are read once per communicator: a new one per k */
        MPI_Comm comm, comm2;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_dup(MPI_COMM_WORLD, &comm2);
        run_once(comm, ks[i], XCHG_ALGO_HIERARCHICAL);
        run_once(comm, ks[i], XCHG_ALGO_HIERARCHICAL); /* the cached grouping, again */
        run_once(comm, ks[i], XCHG_ALGO_BRUCK_2LEVEL);   /* on the same layout */
        run_once(comm2, ks[i], XCHG_ALGO_BRUCK_2LEVEL);  /* the layout made by it */
        run_once(comm2, ks[i], XCHG_ALGO_BRUCK_2LEVEL);
        MPI_Comm_free(&comm);
        MPI_Comm_free(&comm2);
    }
    if (me == 0)
        printf("test_hierarchical on %d ranks: %d passed, %d failed\n", P, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}

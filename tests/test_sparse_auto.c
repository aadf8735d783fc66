/*
 * test_sparse_auto.c - the sparse automatic choice over a script of calls
 * whose patterns change every call: what it runs is the same on every
 * rank, follows the previous census as documented (sparse.c's rules), and
 * every call's messages are exactly what the script says was sent.
 *
 * The script is known to every rank (each rank computes any rank's
 * destinations), so the expected messages and the expected choice are
 * computed here independently of the library: the census model below
 * restates pex's and rsx's contract (remote messages per rank, clipped at
 * 63; a rank sending a count of 2^24 or more through pex counts as 63),
 * and the rule restates sparse.c's table (rsx for 32 <= P <= 127 when the
 * previous census saw at most 2 messages per rank, else pex). At 1 to 8
 * ranks (CTest, both MPIs) the rule always gives pex; under SMPI at 40
 * ranks (sim/CMakeLists.txt) it switches, and the script makes it switch
 * both ways, through a change on one rank only, through a stale census
 * (a forced nbx call between two auto calls), and through pex's large
 * counts. Two steps give one rank a bad destination, once while auto runs
 * rsx (at 40 ranks) and once while it runs pex: every rank must return
 * MPI_ERR_RANK (the census carries the error), none a message, and the
 * census must stay the previous call's.
 */
#include "xchg.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, P, nfail, npass;

enum { CLIP = 63, BIG = (1 << 24) + 3 };

/* The script. Each step: a pattern and how the call is made. */
enum pat { RING1, RING2, RING2_ROOT_ALL, DENSE, NONE, SELF_ONLY, BIG_ZERO_TYPE };
static const struct step {
    enum pat pat;
    int forced_nbx; /* 1: xchg_sparse_exchange_algo(NBX), no census */
    int bad_dest;   /* 1: rank P-1 sends to rank P (MPI_ERR_RANK everywhere) */
} script[] = {
    {RING1, 0, 0},          /* no census yet: pex */
    {RING1, 0, 0},          /* 1 per rank: rsx in 32..127 */
    {RING1, 0, 1},          /* the same rsx, failing on every rank */
    {DENSE, 0, 0},          /* still from RING1's census */
    {RING1, 0, 1},          /* from DENSE: pex, failing on every rank */
    {RING2, 0, 0},          /* still from DENSE: pex */
    {RING2_ROOT_ALL, 0, 0}, /* from RING2 (2 per rank): rsx in 32..127 */
    {RING1, 0, 0},          /* rank 0 alone pushed the mean above 2: pex */
    {DENSE, 1, 0},          /* forced nbx: the census stays RING1's */
    {NONE, 0, 0},           /* from RING1 (stale by one call): rsx in 32..127 */
    {SELF_ONLY, 0, 0},      /* 0 messages: rsx */
    {DENSE, 0, 0},          /* 0 (self messages are not remote): rsx */
    {BIG_ZERO_TYPE, 0, 0},  /* from DENSE: pex, with a count of 2^24 + 3 */
    {RING1, 0, 0},          /* pex counted rank 0 as 63 */
    {RING1, 0, 0},
};
enum { NSTEPS = (int)(sizeof script / sizeof script[0]) };

/* Rank r's destinations and counts in pattern p; returns how many. */
static int pattern(enum pat p, int r, int *dests, int *counts)
{
    int n = 0;
    switch (p) {
    case RING1:
    case RING2:
    case RING2_ROOT_ALL:
        for (int j = 1; j <= (p == RING1 ? 1 : 2); j++) {
            int d = (r + j) % P, dup = 0;
            for (int i = 0; i < n; i++)
                dup |= dests[i] == d;
            if (!dup) {
                dests[n] = d;
                counts[n++] = 1 + (r + j) % 3;
            }
        }
        if (p == RING2_ROOT_ALL && r == 0) {
            for (int q = 0; q < P; q++) {
                int dup = 0;
                for (int i = 0; i < n; i++)
                    dup |= dests[i] == q;
                if (!dup) {
                    dests[n] = q;
                    counts[n++] = 2;
                }
            }
        }
        break;
    case DENSE:
        for (int q = 0; q < P; q++) {
            dests[n] = (r + q) % P; /* self first, then the others in ring order */
            counts[n++] = 1 + q % 2;
        }
        break;
    case NONE:
        break;
    case SELF_ONLY:
        dests[n] = r;
        counts[n++] = 3;
        break;
    case BIG_ZERO_TYPE:
        /* rank 0 sends 2^24 + 3 elements of a size-0 type to rank 1; the
         * others 1 element to their ring neighbour (P = 1: to itself) */
        dests[n] = (r + 1) % P;
        counts[n++] = r == 0 ? BIG : 1;
        break;
    }
    return n;
}

static int value(int src, int dst, int step, int j)
{
    return src * 1000003 + dst * 1009 + step * 31 + j;
}

/* pex's, rsx's and pex_loc's census of a pattern: remote messages summed over ranks,
 * each rank's clipped at CLIP (pex: CLIP for a rank with a count >= 2^24). */
static long long census_of(enum pat p, int pex, int *dests, int *counts)
{
    long long total = 0;
    for (int r = 0; r < P; r++) {
        int n = pattern(p, r, dests, counts), remote = 0, big = 0;
        for (int i = 0; i < n; i++)
            if (counts[i] > 0 && dests[i] != r) {
                remote++;
                big |= counts[i] >= (1 << 24);
            }
        total += (pex && big) || remote > CLIP ? CLIP : remote;
    }
    return total;
}

/* Mean ranks per node as the library's node layout makes them (blocks of
 * XCHG_RANKS_PER_NODE, or shared-memory nodes); collective. */
static double ranks_per_node(void)
{
    const char *k = getenv("XCHG_RANKS_PER_NODE");
    long r = k ? atol(k) : 0;
    if (r > 0)
        return (double)P / (double)((P + r - 1) / r);
    MPI_Comm node;
    int lrank, first, nodes;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lrank);
    MPI_Comm_free(&node);
    first = lrank == 0;
    MPI_Allreduce(&first, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return (double)P / nodes;
}
static double rpn_mean;

/* Whether MPI makes shared windows here: not Open MPI without its osc sm
 * component (OMPI_MCA_osc naming others only). */
static int windows_made(void)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return !osc || strstr(osc, "sm") != NULL;
}

/* sparse_rules.c's rule, restated. */
static xchg_sparse_algo expected_choice(long long census)
{
    const int win = windows_made();
    if (win && P >= 2 && rpn_mean >= P)
        return XCHG_SPARSE_PEX_LOC_SHM;
    if (win && P >= 32 && rpn_mean >= 16 && rpn_mean <= 63)
        return XCHG_SPARSE_PEX_LOC_SHM;
    if (win && rpn_mean >= 16 && (P >= 1024 || (census >= 0 && P >= 32 && census <= 3LL * P)))
        return XCHG_SPARSE_PEX_LOC_SHM;
    if (P >= 32 && P <= 127 && census >= 0 && census <= 2LL * P)
        return XCHG_SPARSE_RSX;
    if (rpn_mean >= 16 && census >= 0 &&
        ((P >= 1024 && census <= (long long)CLIP * P) || (P >= 256 && census <= 3LL * P)))
        return XCHG_SPARSE_PEX_LOC;
    return XCHG_SPARSE_PEX;
}

typedef struct got {
    int *count; /* per source: count received, -1 none */
    int bad, dup, step, zero;
} got;

static int on_message(int source, int count, const void *data, void *ctx)
{
    got *g = ctx;
    if (source < 0 || source >= P) {
        g->bad++;
        return 0;
    }
    if (g->count[source] >= 0)
        g->dup++;
    g->count[source] = count;
    if (!g->zero)
        for (int j = 0; j < count; j++)
            if (((const int *)data)[j] != value(source, rank, g->step, j))
                g->bad++;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int rounds = argc > 1 ? atoi(argv[1]) : 2;
    rpn_mean = ranks_per_node();
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Datatype zero_type;
    MPI_Type_contiguous(0, MPI_INT, &zero_type);
    MPI_Type_commit(&zero_type);

    int *dests = malloc(sizeof(int) * (size_t)P), *counts = malloc(sizeof(int) * (size_t)P);
    int *d2 = malloc(sizeof(int) * (size_t)P), *c2 = malloc(sizeof(int) * (size_t)P);
    int *displs = malloc(sizeof(int) * (size_t)P);
    int *expect = malloc(sizeof(int) * (size_t)P);
    got g = {malloc(sizeof(int) * (size_t)P), 0, 0, 0, 0};
    long long census = -1; /* what the library should have seen last */
    int switched[2] = {0, 0}; /* auto ran pex, rsx */

    for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < NSTEPS; k++) {
            int step = round * NSTEPS + k;
            const struct step *st = &script[k];
            int zero = st->pat == BIG_ZERO_TYPE;
            MPI_Datatype type = zero ? zero_type : MPI_INT;
            int n = pattern(st->pat, rank, dests, counts), tot = 0;
            for (int i = 0; i < n; i++) {
                displs[i] = tot;
                tot += zero ? 0 : counts[i];
            }
            int *sbuf = malloc(sizeof(int) * (size_t)(tot + 1));
            for (int i = 0; i < n; i++)
                for (int j = 0; !zero && j < counts[i]; j++)
                    sbuf[displs[i] + j] = value(rank, dests[i], step, j);
            for (int s = 0; s < P; s++) {
                expect[s] = -1;
                int n2 = pattern(st->pat, s, d2, c2);
                for (int i = 0; i < n2 && !st->bad_dest; i++)
                    if (d2[i] == rank && c2[i] > 0)
                        expect[s] = c2[i];
            }
            if (st->bad_dest && rank == P - 1 && n > 0)
                dests[0] = P;
            xchg_sparse_algo want =
                st->forced_nbx ? XCHG_SPARSE_NBX : expected_choice(census);
            for (int s = 0; s < P; s++)
                g.count[s] = -1;
            g.bad = g.dup = 0;
            g.step = step;
            g.zero = zero;
            int rc;
            if (st->forced_nbx) {
                rc = xchg_sparse_exchange_algo(XCHG_SPARSE_NBX, n, dests, sbuf, counts, displs,
                                               type, on_message, &g, NULL, comm);
            } else if (step % 2) {
                rc = xchg_sparse_exchange(n, dests, sbuf, counts, displs, type, on_message, &g,
                                          comm);
            } else {
                xchg_sparse_result r;
                rc = xchg_sparse_exchange_result(n, dests, sbuf, counts, displs, type, &r,
                                                 comm);
                for (int i = 0; rc == MPI_SUCCESS && i < r.nsources; i++)
                    on_message(r.sources[i], r.counts[i],
                               zero ? NULL : (int *)r.recvbuf + r.displs[i], &g);
                xchg_sparse_result_free(&r);
            }
            xchg_stats stats;
            xchg_get_stats(comm, &stats);
            int mine[2] = {stats.sparse_algo, -stats.sparse_algo}, ext[2];
            MPI_Allreduce(mine, ext, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            int cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            if (st->bad_dest)
                CHECK(cls == MPI_ERR_RANK, "step %d: rank %d's bad destination: class %d, "
                      "expected MPI_ERR_RANK (%d) on every rank", step, P - 1, cls,
                      MPI_ERR_RANK);
            else
                CHECK(rc == MPI_SUCCESS, "step %d: returned %d", step, rc);
            CHECK(ext[0] == -ext[1], "step %d: ranks ran different algorithms (ids %d..%d)",
                  step, -ext[1], ext[0]);
            CHECK(stats.sparse_algo == (int)want,
                  "step %d (P=%d, last census %lld): auto ran %s, the rule says %s", step, P,
                  census, xchg_sparse_algo_name((xchg_sparse_algo)stats.sparse_algo),
                  xchg_sparse_algo_name(want));
            int wrong = g.bad + g.dup;
            for (int s = 0; s < P; s++)
                wrong += g.count[s] != expect[s];
            CHECK(wrong == 0, "step %d (%s): %d messages wrong (%d bad values, %d twice)", step,
                  xchg_sparse_algo_name((xchg_sparse_algo)stats.sparse_algo), wrong, g.bad,
                  g.dup);
            if (!st->forced_nbx)
                switched[stats.sparse_algo == XCHG_SPARSE_RSX] = 1;
            /* pex_loc and pex_loc_shm count as rsx does (no 6-bit fold) */
            int counted = stats.sparse_algo == XCHG_SPARSE_PEX ||
                          stats.sparse_algo == XCHG_SPARSE_RSX ||
                          stats.sparse_algo == XCHG_SPARSE_PEX_LOC ||
                          stats.sparse_algo == XCHG_SPARSE_PEX_LOC_SHM;
            if (counted && !st->bad_dest)
                census = census_of(st->pat, stats.sparse_algo == XCHG_SPARSE_PEX, d2, c2);
            free(sbuf);
        }
    }
    /* In 32..127 ranks the script must have made auto run both. */
    if (P >= 32 && P <= 127)
        CHECK(switched[0] && switched[1], "auto never switched (pex %d, rsx %d)", switched[0],
              switched[1]);

    free(dests); free(counts); free(d2); free(c2); free(displs); free(expect); free(g.count);
    MPI_Type_free(&zero_type);
    MPI_Comm_free(&comm);
    int all[2] = {nfail, npass}, sum[2];
    MPI_Allreduce(all, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_sparse_auto on %d ranks: %d checks passed, %d failed\n", P, sum[1],
               sum[0]);
    MPI_Finalize();
    return sum[0] ? 1 : 0;
}

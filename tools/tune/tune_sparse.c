/*
 * tune_sparse.c - xchg-tune --sparse MIN:MAX: the sparse exchange's rules.
 *
 * For each number of messages per rank m (powers of 4 from MIN to MAX,
 * clipped to P-1 and to the census's 63), every rank sends TUNE_SPARSE_BYTES
 * to m other ranks drawn at random, new ones each pattern; every sparse
 * algorithm of this build runs it, checked against the messages each rank
 * was sent (known here from an MPI_Alltoall of flags, not from xchg), and
 * the fastest (median of the per-iteration maximum over ranks) gets a rule
 * `sparse P P LO HI ALGO` over the census range around m. --verify checks
 * that auto, reading the table, runs each rule's algorithm once a census
 * of the pattern was seen (its second call on a new communicator).
 */
#include "tune_sparse.h"
#include "tune_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TUNE_SPARSE_BYTES = 128, CENSUS_CLIP = 63 };

typedef struct spattern {
    int n, dests[CENSUS_CLIP];   /* this rank's destinations, ascending */
    char *sb;                    /* n x TUNE_SPARSE_BYTES */
    int counts[CENSUS_CLIP], displs[CENSUS_CLIP];
    int nsrc, *srcs;             /* the ranks that send here, ascending */
} spattern;

static char byte_of(int from, int to, int i) { return (char)(from * 131 + to * 7 + i); }

static void spattern_make(spattern *p, int m, int rank, int P, unsigned seed)
{
    unsigned long long s = 0x9E3779B97F4A7C15ull ^ ((unsigned long long)(rank + 1) * 7919u) ^
                           ((unsigned long long)seed << 32);
    char *pick = calloc((size_t)P, 1);
    p->n = 0;
    while (p->n < m) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        int d = (int)(s % (unsigned long long)P);
        if (d != rank && !pick[d]) {
            pick[d] = 1;
            p->n++;
        }
    }
    p->sb = malloc((size_t)m * TUNE_SPARSE_BYTES + 1);
    for (int d = 0, k = 0; d < P; d++)
        if (pick[d]) {
            p->dests[k] = d;
            p->counts[k] = TUNE_SPARSE_BYTES;
            p->displs[k] = k * TUNE_SPARSE_BYTES;
            for (int i = 0; i < TUNE_SPARSE_BYTES; i++)
                p->sb[k * TUNE_SPARSE_BYTES + i] = byte_of(rank, d, i);
            k++;
        }
    char *from = malloc((size_t)P);
    MPI_Alltoall(pick, 1, MPI_CHAR, from, 1, MPI_CHAR, MPI_COMM_WORLD);
    p->srcs = malloc(sizeof(int) * (size_t)P);
    p->nsrc = 0;
    for (int q = 0; q < P; q++)
        if (from[q])
            p->srcs[p->nsrc++] = q;
    free(from);
    free(pick);
}

static void spattern_free(spattern *p)
{
    free(p->sb);
    free(p->srcs);
}

/* Runs algo (XCHG_SPARSE_AUTO: auto) once on comm; 1 on every rank if
 * every rank received exactly its messages, and the algorithm that ran. */
static int run_checked(xchg_sparse_algo algo, const spattern *p, MPI_Comm comm, int rank,
                       int *ran)
{
    xchg_sparse_result r;
    int rc = xchg_sparse_exchange_algo(algo, p->n, p->dests, p->sb, p->counts, p->displs,
                                       MPI_BYTE, NULL, NULL, &r, comm);
    int ok = rc == MPI_SUCCESS && r.nsources == p->nsrc;
    for (int k = 0; ok && k < p->nsrc; k++) {
        ok = r.sources[k] == p->srcs[k] && r.counts[k] == TUNE_SPARSE_BYTES;
        for (int i = 0; ok && i < TUNE_SPARSE_BYTES; i++)
            ok = ((const char *)r.recvbuf)[r.displs[k] + i] == byte_of(p->srcs[k], rank, i);
    }
    if (rc == MPI_SUCCESS)
        xchg_sparse_result_free(&r);
    xchg_stats st;
    *ran = xchg_get_stats(comm, &st) == MPI_SUCCESS ? st.sparse_algo : XCHG_SPARSE_INVALID;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

typedef struct timed_call {
    xchg_sparse_algo algo;
    const spattern *p;
    xchg_sparse_result r; /* the last call's, freed outside the time */
} timed_call;

static void sparse_once(void *ctx)
{
    timed_call *tc = ctx;
    const spattern *p = tc->p;
    xchg_sparse_exchange_algo(tc->algo, p->n, p->dests, p->sb, p->counts, p->displs, MPI_BYTE,
                              NULL, NULL, &tc->r, MPI_COMM_WORLD);
}

static void sparse_free(void *ctx)
{
    xchg_sparse_result_free(&((timed_call *)ctx)->r);
}

/* The median of the slowest rank's time over iters calls of algo; -1: a
 * wrong result, -2: another algorithm ran in its place. */
static double time_sparse(xchg_sparse_algo algo, const spattern *p, int iters, int rank)
{
    int ran;
    if (!run_checked(algo, p, MPI_COMM_WORLD, rank, &ran))
        return -1.0;
    if (ran != (int)algo)
        return -2.0;
    timed_call tc = {algo, p, {0}};
    return tune_time(sparse_once, sparse_free, &tc, iters);
}

int tune_sparse_counts(int mmin, int mmax, int P, int *m)
{
    int n = 0, top = P - 1 < CENSUS_CLIP ? P - 1 : CENSUS_CLIP;
    for (long v = mmin; v <= mmax && n < TUNE_SPARSE_MAX; v *= 4) {
        int c = v < top ? (int)v : top;
        if (n == 0 || m[n - 1] != c)
            m[n++] = c;
        if (c == top)
            break;
    }
    return n;
}

void tune_sparse_measure(int n, const int *m, int iters, int rank, int P, xchg_sparse_algo *best)
{
    if (rank == 0)
        printf("# sparse: %d B to m other ranks, random, median of %d\n%10s %-18s %12s\n",
               TUNE_SPARSE_BYTES, iters, "m", "fastest", "median_us");
    for (int i = 0; i < n; i++) {
        spattern p;
        spattern_make(&p, m[i], rank, P, (unsigned)i);
        double bt = 0;
        best[i] = XCHG_SPARSE_INVALID;
        for (int a = 0; a < xchg_sparse_algo_count(); a++) {
            xchg_sparse_algo al = xchg_sparse_algo_at(a);
            double t = time_sparse(al, &p, iters, rank);
            if (t < 0 && rank == 0)
                fprintf(stderr, "xchg-tune: sparse %s %s at m=%d: skipped\n",
                        xchg_sparse_algo_name(al),
                        t == -1.0 ? "gives a wrong result" : "runs another algorithm here",
                        m[i]);
            if (t >= 0 && (bt == 0 || t < bt)) { /* a tie keeps the earlier */
                bt = t;
                best[i] = al;
            }
        }
        if (rank == 0)
            printf("%10d %-18s %12.1f\n", m[i], xchg_sparse_algo_name(best[i]), bt * 1e6);
        spattern_free(&p);
    }
}

/* Rule i's census range: halfway between the measured counts, the first
 * from 0, the last up to the clip (so one count alone covers any census). */
static void range_of(int n, const int *m, int i, int *lo, int *hi)
{
    *lo = i == 0 ? 0 : (m[i - 1] + m[i]) / 2 + 1;
    *hi = i == n - 1 ? CENSUS_CLIP : (m[i] + m[i + 1]) / 2;
}

void tune_sparse_write(FILE *f, int n, const int *m, const xchg_sparse_algo *best, int P)
{
    for (int i = 0; i < n; i++) {
        int lo, hi;
        range_of(n, m, i, &lo, &hi);
        if (best[i] != XCHG_SPARSE_INVALID && hi >= lo)
            fprintf(f, "sparse %d %d %d %d %s\n", P, P, lo, hi, xchg_sparse_algo_name(best[i]));
    }
}

int tune_sparse_verify(int n, const int *m, const xchg_sparse_algo *best, int rank, int P)
{
    int failures = 0, checked = 0;
    for (int i = 0; i < n; i++) {
        if (best[i] == XCHG_SPARSE_INVALID)
            continue;
        spattern p;
        spattern_make(&p, m[i], rank, P, (unsigned)i);
        MPI_Comm c; /* a new one: its settings (the table) are read on first use */
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        int ran = XCHG_SPARSE_INVALID;
        int ok = run_checked(XCHG_SPARSE_AUTO, &p, c, rank, &ran); /* the census */
        ok = run_checked(XCHG_SPARSE_AUTO, &p, c, rank, &ran) && ok && ran == (int)best[i];
        MPI_Comm_free(&c);
        checked++;
        if (!ok) {
            failures++;
            if (rank == 0)
                fprintf(stderr, "xchg-tune --verify: at m=%d the table says sparse %s but "
                        "xchg_sparse_exchange ran %s\n", m[i], xchg_sparse_algo_name(best[i]),
                        xchg_sparse_algo_name((xchg_sparse_algo)ran));
        }
        spattern_free(&p);
    }
    if (rank == 0)
        printf("verify sparse: %d passed, %d failed\n", checked - failures, failures);
    return failures;
}

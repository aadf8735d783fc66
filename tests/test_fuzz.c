/*
 * test_fuzz.c - seeded property test: every algorithm (and auto) gives the
 * receive buffer MPI_Alltoallv gives, byte for byte, over the whole buffer
 * (blocks, gaps between them and holes inside derived types).
 *
 * Each case, from (seed, case number) alone, so any failure is reproducible:
 *  - the world is split at random into 1..3 sub-communicators (or not), so
 *    the exchange runs at every P from 1 to the world size;
 *  - a count matrix: uniform, sparse (many zeros), all zero, or hugely
 *    imbalanced (one pair thousands of ints, the rest a few);
 *  - datatypes per rank, built at random from MPI_INT: contiguous, vector,
 *    indexed, resized (larger extent, shifted lower bound) and struct,
 *    nested up to two levels, with holes; send and receive side differ but
 *    their type signatures match (a send element may be 1, 2 or 3 times a
 *    receive element, the counts scaled to match);
 *  - displacements in a random block order with random gaps;
 *  - sometimes MPI_IN_PLACE (symmetric counts, the receive layout).
 * The reference is MPI_Alltoallv on identical inputs and an identically
 * pre-filled receive buffer. Every call must succeed.
 *
 * Usage: test_fuzz [--seed S] [--cases N] [--first K] [--algos a,b,...]
 * Defaults: seed 1, 12 cases, all algorithms + auto; XCHG_FUZZ_SEED and
 * XCHG_FUZZ_CASES override the defaults (arguments win). A failure prints
 * the seed, the case and the command that reruns just that case; the exit
 * code is 1 on any failure.
 */
#include "xchg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, wsize;

/* splitmix64: a stream per (seed, case, purpose) */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

typedef struct { uint64_t s; } rng;
static uint64_t next(rng *r) { return mix(r->s++ * 0x2545f4914f6cdd1dULL + 0x1234567ULL); }
static int below(rng *r, int n) { return n <= 1 ? 0 : (int)(next(r) % (uint64_t)n); }
static rng stream(uint64_t seed, uint64_t kase, uint64_t a, uint64_t b)
{
    rng r = {mix(mix(mix(seed) ^ kase) ^ (a * 1000003ULL + b))};
    return r;
}

/* ---- random datatypes holding exactly m ints ---- */
static MPI_Datatype rand_type(rng *r, int m, int depth, int *nfree, MPI_Datatype *tofree);

static MPI_Datatype keep(MPI_Datatype t, int *nfree, MPI_Datatype *tofree)
{
    tofree[(*nfree)++] = t;
    return t;
}

static MPI_Datatype rand_type(rng *r, int m, int depth, int *nfree, MPI_Datatype *tofree)
{
    MPI_Datatype t;
    int kind = below(r, depth >= 2 ? 3 : 5); /* no deeper than 3 levels */
#ifdef OPEN_MPI
    /* Open MPI 4.1's MPI_Alltoallv is not reproducible with nested derived
     * types (two calls on identical inputs differ: seed 20261123 case 33 at
     * 7 ranks), so it cannot serve as the reference there: one level only. */
    if (depth >= 1)
        kind = 0;
#endif
    if (m == 1 && kind == 0)
        return MPI_INT;
    switch (kind) {
    case 0: /* contiguous */
        MPI_Type_contiguous(m, MPI_INT, &t);
        return keep(t, nfree, tofree);
    case 1: { /* vector: blocklen divides m, stride leaves holes */
        int bl = 1;
        for (int d = m; d >= 1; d--)
            if (m % d == 0 && below(r, 2)) {
                bl = d;
                break;
            }
        MPI_Type_vector(m / bl, bl, bl + below(r, 3), MPI_INT, &t);
        return keep(t, nfree, tofree);
    }
    case 2: { /* indexed: m split into blocks at increasing, gapped displacements */
        int len[8], disp[8], nb = 0, left = m, at = below(r, 2);
        while (left > 0 && nb < 8) {
            int l = nb == 7 ? left : 1 + below(r, left);
            len[nb] = l;
            disp[nb] = at;
            at += l + below(r, 3);
            left -= l;
            nb++;
        }
        MPI_Type_indexed(nb, len, disp, MPI_INT, &t);
        return keep(t, nfree, tofree);
    }
    case 3: { /* resized: the inner type, a larger extent, lower bound moved */
        MPI_Datatype in = rand_type(r, m, depth + 1, nfree, tofree);
        MPI_Aint tlb, text;
        MPI_Type_get_true_extent(in, &tlb, &text);
        /* [lb, lb + extent) still covers the data, so that arrays of this
         * type (and of structs holding it) never overlap */
        MPI_Aint lb = -4 * (MPI_Aint)below(r, 2); /* 0 or -4: below the data */

        MPI_Type_create_resized(in, lb, tlb + text - lb + 4 * below(r, 3), &t);
        return keep(t, nfree, tofree);
    }
    default: { /* struct of two random parts, the second after a gap */
        if (m == 1)
            return rand_type(r, 1, 2, nfree, tofree);
        int a = 1 + below(r, m - 1);
        MPI_Datatype p[2];
        p[0] = rand_type(r, a, depth + 1, nfree, tofree);
        p[1] = rand_type(r, m - a, depth + 1, nfree, tofree);
        MPI_Aint tlb, text;
        MPI_Type_get_true_extent(p[0], &tlb, &text);
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, tlb + text + 4 * below(r, 3)};
        MPI_Type_create_struct(2, bl, d, p, &t);
        return keep(t, nfree, tofree);
    }
    }
}

/* ---- one case on one (sub)communicator ---- */
typedef struct {
    int P, me;
    int in_place;
    int smul, rmul;              /* ints per send / receive element */
    int *sc, *sd, *rc, *rd;
    MPI_Datatype st, rt;
    MPI_Aint sext, rext;
    char *sbuf, *rinit, *rref, *rout;
    size_t sbytes, rbytes;
    int nfree;
    MPI_Datatype tofree[64];
    char desc[200];
} fcase;

/* ints from i to j, before scaling; the same on every rank */
static int count_of(uint64_t seed, int kase, int color, int pat, int P, int i, int j,
                    int in_place)
{
    if (in_place && j < i) { /* symmetric */
        int t = i;
        i = j;
        j = t;
    }
    rng r = stream(seed, (uint64_t)kase, 100 + (uint64_t)color, (uint64_t)i * 4096 + (uint64_t)j);
    switch (pat) {
    case 0: return below(&r, 9);                          /* uniform small */
    case 1: return below(&r, 4) == 0 ? 1 + below(&r, 40) : 0; /* sparse */
    case 2: return 0;                                     /* all empty */
    case 3: {                                             /* hugely imbalanced */
        rng h = stream(seed, (uint64_t)kase, 200 + (uint64_t)color, 0);
        int hi = below(&h, P), hj = below(&h, P);
        return (i == hi && j == hj) ? 2000 + below(&r, 3000) : below(&r, 3);
    }
    default: return below(&r, 60);                        /* uniform larger */
    }
}

/* Displacements (in extents) of P blocks of counts cnt, in a random order
 * with random gaps; returns the number of extent slots used. */
static long layout(rng *r, const int *cnt, int P, int *disp)
{
    int *order = malloc(sizeof(int) * (size_t)P);
    for (int i = 0; i < P; i++)
        order[i] = i;
    for (int i = P - 1; i > 0; i--) {
        int k = below(r, i + 1), t = order[i];
        order[i] = order[k];
        order[k] = t;
    }
    long at = below(r, 3);
    for (int k = 0; k < P; k++) {
        disp[order[k]] = (int)at;
        at += cnt[order[k]] + below(r, 3);
    }
    free(order);
    return at + 1;
}

static size_t span_bytes(long slots, MPI_Datatype t, MPI_Aint ext)
{
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(t, &tlb, &text);
    return (size_t)(slots * ext + tlb + text + 16);
}

static void case_build(fcase *f, MPI_Comm comm, uint64_t seed, int kase, int color)
{
    memset(f, 0, sizeof *f);
    MPI_Comm_size(comm, &f->P);
    MPI_Comm_rank(comm, &f->me);
    const int P = f->P, me = f->me;
    rng shared = stream(seed, (uint64_t)kase, 300 + (uint64_t)color, 0);
    int pat = below(&shared, 5);
    f->in_place = below(&shared, 4) == 0;
#ifdef OPEN_MPI
    /* Open MPI 4.1's in-place MPI_Alltoallv with derived types that differ
     * between ranks does not even agree with itself (two calls, seed
     * 20261123 case 33 at 7 ranks): no reference, so MPICH covers it. */
    f->in_place = 0;
#endif
    f->smul = 1 + below(&shared, 3);
    f->rmul = f->in_place ? f->smul : 1 + below(&shared, 3);
#ifdef OPEN_MPI
    /* Open MPI 4.1 disagrees with itself (typed point-to-point, MPI_Unpack,
     * its MPI_Alltoallv) when a send element spans receive elements of a
     * different nested type (seed 20261123 case 11, 5 ranks; MPICH agrees
     * everywhere): there, element sizes match on both sides. */
    f->rmul = f->smul;
#endif
    int L = f->smul * f->rmul; /* ints per count unit: a multiple of both */
    rng mine = stream(seed, (uint64_t)kase, 400 + (uint64_t)color, (uint64_t)me);
    f->rt = rand_type(&mine, f->rmul, 0, &f->nfree, f->tofree);
    f->st = f->in_place ? f->rt : rand_type(&mine, f->smul, 0, &f->nfree, f->tofree);
    for (int k = 0; k < f->nfree; k++)
        MPI_Type_commit(&f->tofree[k]);
    MPI_Aint lb;
    MPI_Type_get_extent(f->st, &lb, &f->sext);
    MPI_Type_get_extent(f->rt, &lb, &f->rext);
    f->sc = malloc(sizeof(int) * (size_t)P);
    f->sd = malloc(sizeof(int) * (size_t)P);
    f->rc = malloc(sizeof(int) * (size_t)P);
    f->rd = malloc(sizeof(int) * (size_t)P);
    for (int j = 0; j < P; j++) {
        f->sc[j] = count_of(seed, kase, color, pat, P, me, j, f->in_place) * L / f->smul;
        f->rc[j] = count_of(seed, kase, color, pat, P, j, me, f->in_place) * L / f->rmul;
    }
    long rslots = layout(&mine, f->rc, P, f->rd);
    f->rbytes = span_bytes(rslots, f->rt, f->rext);
    if (f->in_place) {
        memcpy(f->sc, f->rc, sizeof(int) * (size_t)P);
        memcpy(f->sd, f->rd, sizeof(int) * (size_t)P);
    } else {
        long sslots = layout(&mine, f->sc, P, f->sd);
        f->sbytes = span_bytes(sslots, f->st, f->sext);
        f->sbuf = malloc(f->sbytes);
        for (size_t b = 0; b < f->sbytes; b++)
            f->sbuf[b] = (char)next(&mine);
    }
    f->rinit = malloc(f->rbytes);
    f->rref = malloc(f->rbytes);
    f->rout = malloc(f->rbytes);
    for (size_t b = 0; b < f->rbytes; b++)
        f->rinit[b] = (char)next(&mine);
    static const char *pats[] = {"uniform", "sparse", "empty", "imbalanced", "uniform60"};
    snprintf(f->desc, sizeof f->desc, "P=%d pattern=%s %s send element=%d ints, receive "
             "element=%d ints, %d derived types", P, pats[pat],
             f->in_place ? "MPI_IN_PLACE" : "separate buffers", f->smul, f->rmul, f->nfree);
}

static void case_free(fcase *f)
{
    for (int k = 0; k < f->nfree; k++)
        MPI_Type_free(&f->tofree[k]);
    free(f->sc); free(f->sd); free(f->rc); free(f->rd);
    free(f->sbuf); free(f->rinit); free(f->rref); free(f->rout);
}

static int run_one(fcase *f, xchg_algo a, MPI_Comm comm, char *out, int reference)
{
    memcpy(out, f->rinit, f->rbytes);
    const void *sb = f->in_place ? MPI_IN_PLACE : (const void *)f->sbuf;
    if (reference)
        return MPI_Alltoallv(sb, f->sc, f->sd, f->st, out, f->rc, f->rd, f->rt, comm);
    return xchg_alltoallv_algo(a, sb, f->sc, f->sd, f->st, out, f->rc, f->rd, f->rt, comm);
}

static int parse_algos(const char *list, xchg_algo *algos)
{
    int n = 0;
    if (!list || strcmp(list, "all") == 0) {
        for (int i = 0; i < xchg_algo_count(); i++)
            algos[n++] = xchg_algo_at(i);
        algos[n++] = XCHG_ALGO_AUTO;
        return n;
    }
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        xchg_algo a = xchg_algo_from_name(t);
        if (a == XCHG_ALGO_INVALID) {
            if (wrank == 0)
                fprintf(stderr, "test_fuzz: unknown algorithm %s\n", t);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        algos[n++] = a;
    }
    free(copy);
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    uint64_t seed = 1;
    long cases = 12, first = 0;
    const char *algolist = NULL;
    if (getenv("XCHG_FUZZ_SEED"))
        seed = strtoull(getenv("XCHG_FUZZ_SEED"), NULL, 0);
    if (getenv("XCHG_FUZZ_CASES"))
        cases = strtol(getenv("XCHG_FUZZ_CASES"), NULL, 0);
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--cases") == 0)
            cases = strtol(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--first") == 0)
            first = strtol(argv[++i], NULL, 0);
        else if (i + 1 < argc && strcmp(argv[i], "--algos") == 0)
            algolist = argv[++i];
        else {
            if (wrank == 0)
                fprintf(stderr, "usage: test_fuzz [--seed S] [--cases N] [--first K] "
                        "[--algos a,b,...]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    xchg_algo algos[64];
    int nalgo = parse_algos(algolist, algos);
    if (wrank == 0)
        printf("test_fuzz: seed %llu, cases %ld..%ld, %d algorithms, %d ranks\n",
               (unsigned long long)seed, first, first + cases - 1, nalgo, wsize);
    long nfail = 0, nrun = 0;
    for (long kase = first; kase < first + cases; kase++) {
        /* the split: the same on every rank, from the case alone */
        rng split = stream(seed, (uint64_t)kase, 1, 0);
        int parts = below(&split, 2) ? 1 + below(&split, 3) : 1;
        int color = 0;
        for (int r = 0; r <= wrank; r++)
            color = below(&split, parts);
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        fcase f;
        case_build(&f, comm, seed, (int)kase, color);
        int rc = run_one(&f, XCHG_ALGO_VENDOR, comm, f.rref, 1);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "test_fuzz: seed %llu case %ld: the reference MPI_Alltoallv "
                    "failed (%d) on world rank %d: %s\n", (unsigned long long)seed, kase, rc,
                    wrank, f.desc);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        for (int k = 0; k < nalgo; k++) {
            rc = run_one(&f, algos[k], comm, f.rout, 0);
            const char *why = NULL;
            size_t at = 0;
            if (rc != MPI_SUCCESS) {
                why = "returned an error";
            } else {
                for (at = 0; at < f.rbytes && f.rout[at] == f.rref[at]; at++)
                    ;
                if (at < f.rbytes)
                    why = "differs from MPI_Alltoallv";
            }
            nrun++;
            if (why) {
                char msg[MPI_MAX_ERROR_STRING] = "";
                int len = 0;
                if (rc != MPI_SUCCESS)
                    xchg_error_string(rc, msg, &len);
                else
                    snprintf(msg, sizeof msg, "first at byte %zu of %zu", at, f.rbytes);
                fprintf(stderr, "FUZZ FAIL seed %llu case %ld: %s %s (%s) on rank %d of %s, "
                        "world rank %d\n  rerun: test_fuzz --seed %llu --first %ld --cases 1 "
                        "--algos %s (at %d ranks)\n", (unsigned long long)seed, kase,
                        xchg_algo_name(algos[k]), why, msg, f.me, f.desc, wrank,
                        (unsigned long long)seed, kase, xchg_algo_name(algos[k]), wsize);
                nfail++;
            }
        }
        case_free(&f);
        MPI_Comm_free(&comm);
    }
    long tot[2] = {nrun, nfail}, all[2];
    MPI_Reduce(tot, all, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("test_fuzz: seed %llu: %ld checks (rank x case x algorithm), %ld failed\n",
               (unsigned long long)seed, all[0], all[1]);
    MPI_Finalize();
    return nfail || (wrank == 0 && all[1]) ? 1 : 0;
}

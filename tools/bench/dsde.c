/*
 * dsde.c - `xchg-bench dsde`: dynamic sparse data exchange, every sparse
 * algorithm of the build (and auto) against the baseline an application
 * writes without xchg: MPI_Alltoall of the counts, then MPI_Alltoallv.
 *
 * The pattern: at iteration it, rank r sends --num-doubles doubles to each
 * of k partners, k = ceil(density (P-1)) distinct other ranks drawn
 * uniformly by a hash of (seed, r, it). So every rank has exactly k
 * partners (a fixed "10% of the others", not a coin per rank that may give
 * none), at least one whenever P > 1 and density > 0; never itself.
 * Receivers get a varying number of messages. The same seed gives the same
 * partners on every run, with any MPI, for every algorithm.
 *
 * Fairness: partners and data are made
 * before the clock starts; iteration it runs every algorithm once on the
 * same partners, in an order that gives each algorithm another
 * predecessor each iteration (bench_turn); an MPI_Barrier before each timed
 * call; the received data is consumed inside the timed region the same way
 * for all (the sparse algorithms' callback copies it to a caller buffer;
 * the baseline allocates its receive buffer and frees it); an iteration's
 * time is the slowest rank's, combined by one MPI_Reduce at the end.
 */
#include "dsde.h"

#include "bench_util.h"
#include "oversubscribed.h"
#include "xchg.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DSDE_MAX_ALGOS 32
#define DSDE_CHECK_ITERS 4 /* patterns --check compares (the first ones) */
#define DSDE_BASELINE (-100) /* algos[] entry of the baseline */

static const char usage[] =
    "usage: xchg-bench dsde [options]\n"
    "  Dynamic sparse data exchange: each rank sends --num-doubles doubles to\n"
    "  ceil(density (P-1)) other ranks drawn at random, new ones every iteration;\n"
    "  every sparse algorithm (and auto) against MPI_Alltoall of counts + MPI_Alltoallv.\n"
    "  --density F        fraction of the other ranks each rank sends to, in [0, 1];\n"
    "                     rounded up, so at least one partner when F > 0 (default 0.1)\n"
    "  --num-doubles N    doubles per message (default 16)\n"
    "  --iters N          timed iterations (default 1000)\n"
    "  --warmup N         untimed iterations before them (default 10)\n"
    "  --seed N           partner seed: same seed, same partners (default 1)\n"
    "  --algos LIST       sparse algorithms to time, comma list of pex, rsx, nbx, rma,\n"
    "                     pex_loc, nbx_loc, pex_loc_shm, auto, baseline, or all\n"
    "                     (default all; the baseline always runs, unless --alone)\n"
    "  --alone            only the columns of --algos: no baseline added (one job per\n"
    "                     algorithm, as sim/dsde-study runs them)\n"
    "  --check            compare every algorithm's received sources, counts and values\n"
    "                     with the baseline's before timing\n"
    "  --csv FILE         every figure and the run's parameters as CSV\n"
    "  --json FILE        the same as JSON\n"
    "  --quiet            no progress line on stderr\n"
    "  --list             print the sparse algorithms of this build and exit\n"
    "  --help             print this and exit\n";

typedef struct dsde_run {
    double density;
    int nd;          /* doubles per message */
    int iters, warmup;
    uint64_t seed;
    int check, quiet, alone;
    const char *csv, *json;
    const char *algos_arg; /* --algos, NULL: all */
    int P, rank, k;  /* k: partners per rank */
    int algos[DSDE_MAX_ALGOS]; /* DSDE_BASELINE, then xchg_sparse_algo ids */
    int na;
    bench_env env;
} dsde_run;

typedef struct dsde_result {
    int ok;
    char error[256];
    double *times;   /* iters, slowest rank's, seconds (rank 0) */
    double median, min, max, mean;
    uint64_t temp_bytes; /* xchg's temporary memory, most over ranks and iterations */
} dsde_result;

static const char *algo_label(int a)
{
    if (a == DSDE_BASELINE)
        return "baseline";
    const char *n = xchg_sparse_algo_name((xchg_sparse_algo)a);
    return n ? n : "?";
}

/* ---- options ---------------------------------------------------------- */

enum { ACT_RUN, ACT_HELP, ACT_LIST };

/* Same conventions and helpers as the alltoallv mode: --opt VALUE or
 * --opt=VALUE. The messages get "dsde: " in front when printed. */
static int parse_args(int argc, char **argv, dsde_run *r)
{
    static const char *const valued[] = {"--density", "--num-doubles", "--iters", "--warmup",
                                         "--seed",    "--csv",         "--json",  "--algos"};
    int act = ACT_RUN;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *val;
        if (!strcmp(argv[i], "--alone")) { /* this mode's own flag */
            r->alone = 1;
            continue;
        }
        if (bench_next_opt(argc, argv, &i, valued, sizeof valued / sizeof valued[0], name, &val))
            return -1;
        if (!val) { /* a flag */
            if (name[2] == 'c')
                r->check = 1;
            else if (name[2] == 'q')
                r->quiet = 1;
            else if (name[2] == 'l')
                act = ACT_LIST;
            else if (act == ACT_RUN)
                act = ACT_HELP;
            continue;
        }
        long lv;
        if (!strcmp(name, "--density")) {
            if (bench_parse_double(name, val, 0, 1, &r->density))
                return -1;
        } else if (!strcmp(name, "--num-doubles")) {
            if (bench_parse_long(name, val, 0, 1L << 24, &lv))
                return -1;
            r->nd = (int)lv;
        } else if (!strcmp(name, "--iters")) {
            if (bench_parse_long(name, val, 1, 1000000, &lv))
                return -1;
            r->iters = (int)lv;
        } else if (!strcmp(name, "--warmup")) {
            if (bench_parse_long(name, val, 0, 1000000, &lv))
                return -1;
            r->warmup = (int)lv;
        } else if (!strcmp(name, "--seed")) {
            unsigned long long v;
            if (bench_parse_seed(name, val, &v))
                return -1;
            r->seed = v;
        } else if (!strcmp(name, "--csv")) {
            r->csv = val;
        } else if (!strcmp(name, "--algos")) {
            r->algos_arg = val;
        } else {
            r->json = val;
        }
    }
    return act;
}

/* The timed columns: the baseline (unless --alone), then --algos in its
 * order (each name once; "baseline" there is the baseline, once), or every
 * sparse algorithm and auto. */
static int parse_algos(dsde_run *r)
{
    r->na = 0;
    if (!r->alone)
        r->algos[r->na++] = DSDE_BASELINE;
    const char *list = r->algos_arg;
    if (r->alone && (!list || !strcmp(list, "all")))
        return bench_bad("--alone needs --algos with the columns to run");
    if (!list || !strcmp(list, "all")) {
        for (int i = 0; i < xchg_sparse_algo_count() && r->na < DSDE_MAX_ALGOS - 1; i++)
            r->algos[r->na++] = xchg_sparse_algo_at(i);
        r->algos[r->na++] = XCHG_SPARSE_AUTO;
        return 0;
    }
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[32];
        if (len == 0 || len >= sizeof name)
            return bench_bad("--algos: empty or too long name in '%s'", list);
        memcpy(name, p, len);
        name[len] = 0;
        int a = !strcmp(name, "baseline") ? DSDE_BASELINE
                                          : (int)xchg_sparse_algo_from_name(name);
        if (a == XCHG_SPARSE_INVALID)
            return bench_bad("--algos: '%s' is not a sparse algorithm (pex, rsx, nbx, rma, "
                             "pex_loc, nbx_loc, pex_loc_shm, auto, baseline, all)", name);
        for (int i = 0; i < r->na; i++)
            if (r->algos[i] == a)
                return bench_bad("--algos: '%s' given twice", name);
        if (r->na >= DSDE_MAX_ALGOS)
            return bench_bad("--algos: too many names");
        r->algos[r->na++] = a;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* ---- the pattern ------------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t key(uint64_t seed, long it, int rank)
{
    return mix(mix(mix(seed) ^ (uint64_t)it) ^ (uint64_t)rank);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* dests[0..k) of rank `me` at iteration it, ascending: the first k of a
 * Fisher-Yates shuffle of the other ranks (scratch: P ints). */
static void partners(const dsde_run *r, int me, long it, int *dests, int *scratch)
{
    int n = r->P - 1;
    for (int i = 0; i < n; i++)
        scratch[i] = i < me ? i : i + 1;
    uint64_t s = key(r->seed, it, me);
    for (int i = 0; i < r->k; i++) {
        s = mix(s);
        int j = i + (int)(s % (uint64_t)(n - i));
        int t = scratch[i];
        scratch[i] = scratch[j];
        scratch[j] = t;
        dests[i] = scratch[i];
    }
    qsort(dests, (size_t)r->k, sizeof(int), cmp_int);
}

/* Data every value of which depends on (seed, it, sender, receiver,
 * position): exact integers below 2^52, so a misplaced or stale message
 * shows. */
static void fill(const dsde_run *r, long it, const int *dests, double *sb)
{
    for (int i = 0; i < r->k; i++) {
        uint64_t h = mix(key(r->seed, it, r->rank) ^ ((uint64_t)dests[i] << 32));
        for (int j = 0; j < r->nd; j++)
            sb[(size_t)i * r->nd + j] = (double)(mix(h + (uint64_t)j) >> 12);
    }
}

/* ---- one exchange ----------------------------------------------------- */

typedef struct sink {
    char *buf;
    size_t used, cap;
    int n, ncap;      /* messages */
    int *src, *cnt;   /* per message, in arrival order */
    size_t *off;
    int failed;       /* out of memory in the callback */
} sink;

/* The callback: copy the doubles to the caller's buffer, as an application
 * that keeps them does; record (source, count) for --check. */
static int sink_cb(int source, int count, const void *data, void *ctx)
{
    sink *k = ctx;
    size_t b = (size_t)count * sizeof(double);
    if (k->used + b > k->cap) {
        size_t cap = 2 * (k->used + b);
        char *nb = realloc(k->buf, cap);
        if (!nb) {
            k->failed = 1;
            return 1;
        }
        k->buf = nb;
        k->cap = cap;
    }
    if (k->n == k->ncap) {
        int ncap = k->ncap ? 2 * k->ncap : 16;
        int *s = realloc(k->src, sizeof(int) * (size_t)ncap);
        if (s)
            k->src = s;
        int *c = realloc(k->cnt, sizeof(int) * (size_t)ncap);
        if (c)
            k->cnt = c;
        size_t *o = realloc(k->off, sizeof(size_t) * (size_t)ncap);
        if (o)
            k->off = o;
        if (!s || !c || !o) {
            k->failed = 1;
            return 1;
        }
        k->ncap = ncap;
    }
    memcpy(k->buf + k->used, data, b);
    k->src[k->n] = source;
    k->cnt[k->n] = count;
    k->off[k->n] = k->used;
    k->n++;
    k->used += b;
    return 0;
}

/* Per-rank inputs of one iteration. */
typedef struct exch {
    int *dests, *counts, *displs; /* k each */
    double *sb;                   /* k * nd */
    int *v;                       /* 4 P ints for the baseline */
} exch;

/* The baseline: what an application does without xchg. Received data is
 * left in *rb (allocated here; the caller frees it), counts in x->v. */
static int baseline(const dsde_run *r, const exch *x, double **rb, MPI_Comm comm)
{
    int P = r->P, *sc = x->v, *sd = x->v + P, *rc = x->v + 2 * P, *rd = x->v + 3 * P;
    memset(x->v, 0, sizeof(int) * 4 * (size_t)P);
    for (int i = 0; i < r->k; i++) {
        sc[x->dests[i]] = x->counts[i];
        sd[x->dests[i]] = x->displs[i];
    }
    int rc0 = MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, comm);
    if (rc0 != MPI_SUCCESS)
        return rc0;
    int64_t tot = 0;
    for (int q = 0; q < P; q++) {
        if (tot > INT32_MAX)
            break;
        rd[q] = (int)tot;
        tot += rc[q];
    }
    if (tot > INT32_MAX) /* excluded by dsde_main's check of (P-1) nd */
        return MPI_ERR_COUNT;
    *rb = malloc((size_t)tot * sizeof(double) + 1);
    if (!*rb)
        return MPI_ERR_NO_MEM;
    return MPI_Alltoallv(x->sb, sc, sd, MPI_DOUBLE, *rb, rc, rd, MPI_DOUBLE, comm);
}

/* One timed call (from after the barrier to the return). */
static int timed(const dsde_run *r, int a, const exch *x, sink *s, double *dt, MPI_Comm comm)
{
    s->used = 0;
    s->n = 0;
    s->failed = 0;
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    int rc;
    if (a == DSDE_BASELINE) {
        double *rb = NULL;
        rc = baseline(r, x, &rb, comm);
        free(rb);
    } else {
        rc = xchg_sparse_exchange_algo((xchg_sparse_algo)a, r->k, x->dests, x->sb, x->counts,
                                       x->displs, MPI_DOUBLE, sink_cb, s, NULL, comm);
    }
    *dt = MPI_Wtime() - t0;
    return rc;
}

static void error_text(int rc, char *out, size_t n)
{
    char e[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (xchg_error_string(rc, e, &len) != MPI_SUCCESS)
        snprintf(e, sizeof e, "error code %d", rc);
    size_t l = strlen(e); /* truncated copy; MPICH's strings run to 512 */
    l = l < n ? l : n - 1;
    memcpy(out, e, l);
    out[l] = '\0';
}

/* Collective: whether any rank failed; if so `out` (on every rank) gets
 * the message of the lowest failing rank. */
static int agree(int failed, const char *mine, char *out, size_t n, MPI_Comm comm, int P,
                 int rank)
{
    int who = failed ? rank : P, first;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == P)
        return 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", rank == first ? mine : "");
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, comm);
    snprintf(out, n, "rank %d: %.200s", first, buf);
    return 1;
}

/* ---- --check ---------------------------------------------------------- */

/* Compares one form's messages (ascending sources) with the baseline's;
 * writes what differs first to msg. */
static int compare(const dsde_run *r, const int *rc, const int *rd, const double *ref, int n,
                   const int *src, const int *cnt, const double *const *data, char *msg,
                   size_t mlen)
{
    int P = r->P, m = 0;
    for (int q = 0; q < P; q++)
        m += rc[q] > 0;
    int i = 0;
    for (int q = 0; q < P; q++) {
        if (rc[q] == 0)
            continue;
        if (i >= n || src[i] != q) {
            snprintf(msg, mlen, "message %d: source %d, expected %d (%d messages, expected %d)",
                     i, i < n ? src[i] : -1, q, n, m);
            return 1;
        }
        if (cnt[i] != rc[q]) {
            snprintf(msg, mlen, "from rank %d: %d doubles, expected %d", q, cnt[i], rc[q]);
            return 1;
        }
        for (int j = 0; j < rc[q]; j++)
            if (data[i][j] != ref[rd[q] + j]) {
                snprintf(msg, mlen, "from rank %d, double %d: got %.17g, expected %.17g", q, j,
                         data[i][j], ref[rd[q] + j]);
                return 1;
            }
        i++;
    }
    if (n != m) {
        snprintf(msg, mlen, "%d messages, expected %d (extra source %d)", n, m, src[m]);
        return 1;
    }
    return 0;
}

/* Every algorithm, both output forms, on the first patterns; returns how
 * many algorithms failed (0 on every rank alike). */
static int check(const dsde_run *r, exch *x, sink *s, int *scratch, MPI_Comm comm)
{
    const char *corrupt = getenv("XCHG_BENCH_TEST_CORRUPT"); /* tests the checker */
    int P = r->P, rank = r->rank;
    long nc = (long)r->warmup + r->iters;
    nc = nc < DSDE_CHECK_ITERS ? nc : DSDE_CHECK_ITERS;
    int *bad_algo = calloc((size_t)r->na, sizeof(int));
    int failed = 0;
    for (long it = 0; it < nc; it++) {
        partners(r, rank, it, x->dests, scratch);
        fill(r, it, x->dests, x->sb);
        double *ref = NULL;
        int rc0 = baseline(r, x, &ref, comm);
        char msg[256] = "", all[256];
        if (rc0 != MPI_SUCCESS)
            error_text(rc0, msg, sizeof msg);
        if (agree(rc0 != MPI_SUCCESS, msg, all, sizeof all, comm, P, rank)) {
            if (rank == 0)
                fprintf(stderr, "xchg-bench: dsde --check: the baseline itself failed: %s\n",
                        all);
            free(ref);
            free(bad_algo);
            return 1;
        }
        int *rcnt = x->v + 2 * P, *rdis = x->v + 3 * P;
        int *rc = malloc(sizeof(int) * 2 * (size_t)P), *rd = rc + P;
        memcpy(rc, rcnt, sizeof(int) * (size_t)P);
        memcpy(rd, rdis, sizeof(int) * (size_t)P);
        for (int a = 0; a < r->na; a++) {
            if (bad_algo[a] || r->algos[a] == DSDE_BASELINE)
                continue;
            const char *name = algo_label(r->algos[a]);
            for (int form = 0; form < 2; form++) {
                const char *fname = form ? "packed result" : "callback";
                int err;
                msg[0] = '\0';
                xchg_sparse_result res = {0};
                s->used = 0;
                s->n = 0;
                s->failed = 0;
                if (form)
                    err = xchg_sparse_exchange_algo((xchg_sparse_algo)r->algos[a], r->k,
                                                    x->dests, x->sb, x->counts, x->displs,
                                                    MPI_DOUBLE, NULL, NULL, &res, comm);
                else
                    err = xchg_sparse_exchange_algo((xchg_sparse_algo)r->algos[a], r->k,
                                                    x->dests, x->sb, x->counts, x->displs,
                                                    MPI_DOUBLE, sink_cb, s, NULL, comm);
                int bad = err != MPI_SUCCESS || s->failed;
                if (bad) {
                    if (err != MPI_SUCCESS)
                        error_text(err, msg, sizeof msg);
                    else
                        snprintf(msg, sizeof msg, "out of memory in the callback");
                } else {
                    int n = form ? res.nsources : s->n;
                    int *src = malloc(sizeof(int) * (size_t)(n + 1));
                    int *cnt = malloc(sizeof(int) * (size_t)(n + 1));
                    const double **data = malloc(sizeof(double *) * (size_t)(n + 1));
                    int *ord = malloc(sizeof(int) * (size_t)(n + 1));
                    /* the callback sees arrival order: sort by source */
                    for (int i = 0; i < n; i++)
                        ord[i] = i;
                    for (int i = 1; i < n && !form; i++)
                        for (int j = i; j > 0 && s->src[ord[j - 1]] > s->src[ord[j]]; j--) {
                            int t = ord[j];
                            ord[j] = ord[j - 1];
                            ord[j - 1] = t;
                        }
                    for (int i = 0; i < n; i++) {
                        int o = ord[i];
                        src[i] = form ? res.sources[o] : s->src[o];
                        cnt[i] = form ? res.counts[o] : s->cnt[o];
                        data[i] = form ? (const double *)res.recvbuf + res.displs[o]
                                       : (const double *)(s->buf + s->off[o]);
                    }
                    if (corrupt && !strcmp(corrupt, name) && form && n > 0 && cnt[0] > 0)
                        ((double *)res.recvbuf)[res.displs[0]] += 1;
                    bad = compare(r, rc, rd, ref, n, src, cnt, data, msg, sizeof msg);
                    free(src);
                    free(cnt);
                    free(data);
                    free(ord);
                }
                xchg_sparse_result_free(&res);
                /* every rank's verdict, the first few shown by rank 0 */
                char line[320];
                snprintf(line, sizeof line, "%s%s%s", bad ? fname : "", bad ? ": " : "",
                         bad ? msg : "");
                char *lines = rank == 0 ? malloc(sizeof line * (size_t)P) : NULL;
                MPI_Gather(line, (int)sizeof line, MPI_CHAR, lines, (int)sizeof line, MPI_CHAR,
                           0, comm);
                int nbad = 0;
                if (rank == 0) {
                    for (int q = 0; q < P; q++)
                        nbad += lines[(size_t)q * sizeof line] != '\0';
                    if (nbad)
                        fprintf(stderr,
                                "xchg-bench: dsde --check FAILED: %s differs from the baseline "
                                "on %d of %d ranks (iteration %ld, %d partners, %d doubles, "
                                "seed %" PRIu64 ")\n",
                                name, nbad, P, it, r->k, r->nd, r->seed);
                    for (int q = 0, shown = 0; q < P && shown < 8; q++)
                        if (lines[(size_t)q * sizeof line]) {
                            fprintf(stderr, "  rank %d: %s\n", q, &lines[(size_t)q * sizeof line]);
                            shown++;
                        }
                }
                free(lines);
                MPI_Bcast(&nbad, 1, MPI_INT, 0, comm);
                if (nbad) {
                    bad_algo[a] = 1;
                    failed++;
                    break;
                }
            }
        }
        free(rc);
        free(ref);
    }
    free(bad_algo);
    return failed;
}

/* ---- output ----------------------------------------------------------- */

/* The baseline's median over a's (0 where either is missing). */
static double speedup(const dsde_run *r, const dsde_result *res, int a)
{
    int b = -1;
    for (int i = 0; i < r->na && b < 0; i++)
        if (r->algos[i] == DSDE_BASELINE)
            b = i;
    if (b < 0 || !res[b].ok || !res[a].ok || res[a].median <= 0)
        return 0;
    return res[b].median / res[a].median;
}

static void table(FILE *f, const dsde_run *r, const dsde_result *res)
{
    fprintf(f, "# xchg-bench %d.%d.%d dsde: %d doubles to %d of the %d other ranks (density %g), "
               "new partners every iteration\n",
            XCHG_VERSION_MAJOR, XCHG_VERSION_MINOR, XCHG_VERSION_PATCH, r->nd, r->k,
            r->P - 1 > 0 ? r->P - 1 : 0, r->density);
    fprintf(f, "# %d ranks, seed %" PRIu64 ", %d iterations after %d warm-up\n", r->P, r->seed,
            r->iters, r->warmup);
    bench_table_mpi_line(f, &r->env);
    fprintf(f, "# per-iteration time of the slowest rank over iterations, microseconds;\n"
               "# baseline = MPI_Alltoall of counts + MPI_Alltoallv; speedup = baseline "
               "median / median\n");
    fprintf(f, "%-12s %10s %10s %10s %10s %8s %11s\n", "# Algorithm", "median", "min", "max",
            "mean", "speedup", "temp_bytes");
    int best = -1;
    for (int a = 0; a < r->na; a++) {
        const dsde_result *x = &res[a];
        fprintf(f, "%-12s", algo_label(r->algos[a]));
        if (!x->ok) {
            fprintf(f, " %10s %10s %10s %10s %8s %11s  %s\n", "-", "-", "-", "-", "-", "-",
                    x->error);
            continue;
        }
        /* best: the fastest algorithm proper (auto runs one of them) */
        if (r->algos[a] != DSDE_BASELINE && r->algos[a] != XCHG_SPARSE_AUTO &&
            (best < 0 || x->median < res[best].median))
            best = a;
        fprintf(f, " %10.2f %10.2f %10.2f %10.2f", x->median * 1e6, x->min * 1e6, x->max * 1e6,
                x->mean * 1e6);
        double sp = speedup(r, res, a);
        if (sp > 0)
            fprintf(f, " %7.2fx", sp);
        else
            fprintf(f, " %8s", "-");
        if (r->algos[a] == DSDE_BASELINE) /* not xchg's: MPI's own memory is not seen */
            fprintf(f, " %11s\n", "-");
        else
            fprintf(f, " %11" PRIu64 "\n", x->temp_bytes);
    }
    if (best >= 0 && speedup(r, res, best) > 0)
        fprintf(f, "# best: %s, %.2fx the baseline\n", algo_label(r->algos[best]),
                speedup(r, res, best));
    fflush(f);
}

static int write_csv(const char *path, const dsde_run *r, const dsde_result *res)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    bench_csv_head(f, "dsde", r->P, &r->env);
    fprintf(f, "# type=MPI_DOUBLE\n# num_doubles=%d\n# density=%g\n# partners=%d\n"
               "# seed=%" PRIu64 "\n# iters=%d\n# warmup=%d\n# check=%d\n",
            r->nd, r->density, r->k, r->seed, r->iters, r->warmup, r->check);
    fprintf(f, "algo,status,median_us,min_us,max_us,mean_us,speedup_vs_baseline,temp_bytes,"
               "error,times_us\n");
    for (int a = 0; a < r->na; a++) {
        const dsde_result *x = &res[a];
        char err[256];
        bench_csv_clean(x->error, err, sizeof err);
        fprintf(f, "%s,%s,", algo_label(r->algos[a]), x->ok ? "ok" : "error");
        if (x->ok)
            fprintf(f, "%.3f,%.3f,%.3f,%.3f,%.4f,%" PRIu64 ",,", x->median * 1e6, x->min * 1e6,
                    x->max * 1e6, x->mean * 1e6, speedup(r, res, a), x->temp_bytes);
        else
            fprintf(f, ",,,,,,%s,", err);
        if (x->ok)
            bench_print_times(f, x->times, r->iters, " ");
        fprintf(f, "\n");
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int write_json(const char *path, const dsde_run *r, const dsde_result *res)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    bench_json_head(f, "dsde", r->P, &r->env);
    fprintf(f, "    \"algos\": [");
    for (int a = 0; a < r->na; a++)
        fprintf(f, "%s\"%s\"", a ? ", " : "", algo_label(r->algos[a]));
    fprintf(f, "],\n    \"type\": \"MPI_DOUBLE\",\n    \"num_doubles\": %d,\n"
               "    \"density\": %g,\n    \"partners\": %d,\n    \"seed\": %" PRIu64 ",\n"
               "    \"iters\": %d,\n    \"warmup\": %d,\n    \"check\": %s\n  },\n"
               "  \"results\": [\n",
            r->nd, r->density, r->k, r->seed, r->iters, r->warmup, r->check ? "true" : "false");
    for (int a = 0; a < r->na; a++) {
        const dsde_result *x = &res[a];
        fprintf(f, "    {\"algo\": \"%s\", \"status\": \"%s\"", algo_label(r->algos[a]),
                x->ok ? "ok" : "error");
        if (x->ok) {
            fprintf(f, ", \"median_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
                       "\"mean_us\": %.3f, \"speedup_vs_baseline\": %.4f, "
                       "\"temp_bytes\": %" PRIu64 ", \"times_us\": [",
                    x->median * 1e6, x->min * 1e6, x->max * 1e6, x->mean * 1e6,
                    speedup(r, res, a), x->temp_bytes);
            bench_print_times(f, x->times, r->iters, ", ");
            fprintf(f, "]");
        } else {
            fprintf(f, ", \"error\": ");
            bench_json_str(f, x->error);
        }
        fprintf(f, "}%s\n", a + 1 < r->na ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- main ------------------------------------------------------------- */

int dsde_main(int argc, char **argv, MPI_Comm comm)
{
    static dsde_run run;
    dsde_run *r = &run;
    MPI_Comm_size(comm, &r->P);
    MPI_Comm_rank(comm, &r->rank);
    int rank = r->rank, P = r->P;
    r->density = 0.1;
    r->nd = 16;
    r->iters = 1000;
    r->warmup = 10;
    r->seed = 1;

    int act = parse_args(argc, argv, r);
    if (act == ACT_RUN && parse_algos(r) < 0)
        act = -1;
    if (act < 0) {
        if (rank == 0)
            fprintf(stderr, "xchg-bench: dsde: %s (xchg-bench dsde --help for usage)\n",
                    bench_opt_error);
        return 2;
    }
    if (act == ACT_HELP) {
        if (rank == 0)
            fputs(usage, stdout);
        return 0;
    }
    if (act == ACT_LIST) {
        for (int i = 0; rank == 0 && i < xchg_sparse_algo_count(); i++)
            printf("%s\n", xchg_sparse_algo_name(xchg_sparse_algo_at(i)));
        return 0;
    }
    /* ceil, less a rounding hair: 0.1 * 30 is 3.0000000000000004 */
    double kk = ceil(r->density * (P - 1) - 1e-9);
    r->k = P > 1 ? (int)(kk < 1 ? 1 : kk > P - 1 ? P - 1 : kk) : 0;
    if (r->density == 0)
        r->k = 0; /* only density 0 means no partners */
    /* A rank may receive from all P-1 others: the baseline's int
     * displacements must hold that (decided from P, so on every rank). */
    if ((double)(P - 1) * r->nd > 2147483647.0) {
        if (rank == 0)
            fprintf(stderr, "xchg-bench: dsde: %d senders x %d doubles overflow int "
                            "displacements (xchg-bench dsde --help for usage)\n", P - 1, r->nd);
        return 2;
    }

    bench_env_fill(&r->env);
    /* Output files must be writable before the measuring. */
    if (!bench_files_writable(r->csv, r->json, comm))
        return 1;
    bench_warn_oversubscribed(comm);

    int k = r->k, na = r->na;
    exch x;
    x.dests = malloc(sizeof(int) * (size_t)(k + 1));
    x.counts = malloc(sizeof(int) * (size_t)(k + 1));
    x.displs = malloc(sizeof(int) * (size_t)(k + 1));
    x.sb = malloc(sizeof(double) * ((size_t)k * (size_t)r->nd + 1));
    x.v = malloc(sizeof(int) * 4 * (size_t)P);
    int *scratch = malloc(sizeof(int) * (size_t)P);
    sink s = {0};
    int ok = x.dests && x.counts && x.displs && x.sb && x.v && scratch, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    int code = 0;
    double *t = NULL, *tmax = NULL;
    dsde_result *res = calloc((size_t)na, sizeof *res);
    if (!all_ok || !res) {
        if (rank == 0)
            fprintf(stderr, "xchg-bench: dsde: out of memory\n");
        code = 1;
        goto out;
    }
    for (int i = 0; i < k; i++) {
        x.counts[i] = r->nd;
        x.displs[i] = i * r->nd;
    }

    if (r->check) {
        int failed = check(r, &x, &s, scratch, comm);
        if (failed) {
            if (rank == 0)
                fprintf(stderr, "xchg-bench: dsde --check failed for %d algorithm(s); no "
                                "timing done\n", failed);
            code = 1;
            goto out;
        }
    }

    /* The data does not matter for timing; every message has the same size. */
    fill(r, 0, x.dests, x.sb);
    long nit = (long)r->warmup + r->iters;
    t = malloc(sizeof(double) * (size_t)na * (size_t)r->iters);
    int *err = calloc((size_t)na, sizeof(int));
    char (*msg)[256] = calloc((size_t)na, sizeof *msg);
    uint64_t *temp = calloc((size_t)na, sizeof(uint64_t)), *tempmax = NULL;
    double start = MPI_Wtime();
    for (long it = 0; it < nit; it++) {
        partners(r, rank, it, x.dests, scratch);
        for (int j = 0; j < na; j++) {
            int a = bench_turn((int)it, j, na); /* another predecessor each time */
            double dt;
            int rc = timed(r, r->algos[a], &x, &s, &dt, comm);
            if ((rc != MPI_SUCCESS || s.failed) && !err[a]) {
                if (rc != MPI_SUCCESS)
                    error_text(rc, msg[a], sizeof msg[a]);
                else
                    snprintf(msg[a], sizeof msg[a], "out of memory in the callback");
                err[a] = 1;
            }
            xchg_stats st;
            if (r->algos[a] != DSDE_BASELINE && xchg_get_stats(comm, &st) == MPI_SUCCESS &&
                st.temp_bytes > temp[a])
                temp[a] = st.temp_bytes;
            if (it >= r->warmup)
                t[(size_t)a * r->iters + (size_t)(it - r->warmup)] = dt;
        }
    }
    double el = MPI_Wtime() - start;
    tmax = rank == 0 ? malloc(sizeof(double) * (size_t)na * (size_t)r->iters) : NULL;
    MPI_Reduce(t, tmax, na * r->iters, MPI_DOUBLE, MPI_MAX, 0, comm);
    tempmax = calloc((size_t)na, sizeof(uint64_t));
    MPI_Reduce(temp, tempmax, na, MPI_UINT64_T, MPI_MAX, 0, comm);
    for (int a = 0; a < na; a++) {
        dsde_result *y = &res[a];
        y->ok = !agree(err[a], msg[a], y->error, sizeof y->error, comm, P, rank);
        if (!y->ok) {
            code = 1;
            if (rank == 0)
                fprintf(stderr, "xchg-bench: dsde: %s failed: %s\n", algo_label(r->algos[a]),
                        y->error);
        }
        if (rank != 0)
            continue;
        y->temp_bytes = tempmax[a];
        y->times = malloc(sizeof(double) * (size_t)r->iters);
        memcpy(y->times, tmax + (size_t)a * r->iters, sizeof(double) * (size_t)r->iters);
        bench_summary(y->times, r->iters, &y->median, &y->min, &y->max, &y->mean);
    }
    free(err);
    free(msg);
    free(temp);
    free(tempmax);
    if (rank == 0) {
        table(stdout, r, res);
        if (!r->quiet && el > 2.0)
            fprintf(stderr, "xchg-bench: dsde done, %.1f s\n", el);
        if (r->csv && write_csv(r->csv, r, res)) {
            fprintf(stderr, "xchg-bench: cannot write '%s'\n", r->csv);
            code = 1;
        }
        if (r->json && write_json(r->json, r, res)) {
            fprintf(stderr, "xchg-bench: cannot write '%s'\n", r->json);
            code = 1;
        }
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, comm);
out:
    for (int a = 0; res && a < na; a++)
        free(res[a].times);
    free(res);
    free(t);
    free(tmax);
    free(x.dests);
    free(x.counts);
    free(x.displs);
    free(x.sb);
    free(x.v);
    free(scratch);
    free(s.buf);
    free(s.src);
    free(s.cnt);
    free(s.off);
    return code;
}

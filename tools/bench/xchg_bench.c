/*
 * xchg_bench.c - xchg-bench: every alltoallv algorithm of the build against
 * the MPI library's MPI_Alltoallv, on count patterns that look like real
 * applications (osu_alltoallv only ever sends uniform counts).
 *
 * Fairness: at each size every algorithm runs the same exchanges from the
 * same buffers, interleaved (iteration k runs every algorithm once, the
 * order rotating from one iteration to the next so none always goes first),
 * after a barrier. An iteration's time is the slowest rank's; the table
 * shows the median over iterations. --check compares every algorithm's
 * result with MPI_Alltoallv's before timing and exits non-zero on mismatch.
 * Speedups: on a real MPI over the library's own MPI_Alltoallv ("vendor");
 * under SMPI, whose MPI_Alltoallv is neither MPICH's nor Open MPI's, over
 * the models of their defaults (mpich_model, ompi_model, always run there).
 * --persistent adds every algorithm once more as a persistent request
 * (column NAME+p): initialised once per size, untimed, then each iteration
 * times xchg_start + xchg_wait, interleaved with the one-shot calls. Each
 * (pattern, size) runs on a communicator of its own (run_size).
 *
 * Run `xchg-bench --help` for the options.
 */
#include "bench.h"
#include "dsde.h"
#include "neighbor.h"
#include "overlap.h"
#include "oversubscribed.h"
#include "setup.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank;

static const char usage[] =
    "usage: xchg-bench [options]\n"
    "       xchg-bench dsde [options]   sparse exchange (xchg-bench dsde --help)\n"
    "       xchg-bench neighbor [options]   neighbour exchange (xchg-bench neighbor --help)\n"
    "       xchg-bench overlap [options]   nonblocking exchange beside computation\n"
    "                                      (xchg-bench overlap --help)\n"
    "       xchg-bench setup [options]   a communicator's set-up costs, and a new\n"
    "                                    communicator every K calls (xchg-bench setup --help)\n"
    "  --pattern LIST     uniform, random, sparse, zipf, hot, transpose, or a comma list\n"
    "                     (default random); file:PATH[:N] replays the N-th shape (default\n"
    "                     1, the most called) of a file XCHG_RECORD wrote, at one size:\n"
    "                     its own bytes (--sizes does not apply), scaled to this P\n"
    "  --sizes MIN:MAX    average message bytes, powers of two, K/M suffixes (default 16:64K)\n"
    "  --algos LIST       algorithms to compare, comma list; all = every one of the build\n"
    "                     and auto; auto = xchg_alltoallv's own choice (default all;\n"
    "                     vendor always runs, and under SMPI mpich_model and ompi_model)\n"
    "  --alone            only the algorithms of --algos, no baselines added\n"
    "  --iters N          timed iterations per size (default 20)\n"
    "  --warmup N         untimed iterations before them (default 3)\n"
    "  --seed N           pattern seed: same seed, same counts (default 1)\n"
    "  --density F        sparse: fraction of ranks each rank sends to (default 0.25)\n"
    "  --zipf-s S         zipf: exponent, 0 is uniform (default 1.0)\n"
    "  --hot N            hot: number of hot receivers (default 1)\n"
    "  --hot-fraction F   hot: share of every rank's data they get (default 0.8)\n"
    "  --type byte|double exchanged datatype (default byte)\n"
    "  --check            compare every result with MPI_Alltoallv before timing\n"
    "  --persistent       also time each algorithm as a persistent request (NAME+p:\n"
    "                     xchg_alltoallv_init once per size, then xchg_start + xchg_wait)\n"
    "  --show median|min|max|mem   what the table shows (default median)\n"
    "  --csv FILE         every figure and the run's parameters as CSV\n"
    "  --json FILE        the same as JSON\n"
    "  --quiet            no progress lines on stderr\n"
    "  --list             print the alltoallv algorithms of this build and exit\n"
    "                     (xchg-bench dsde --list, xchg-bench neighbor --list: the\n"
    "                     sparse and neighbour ones)\n"
    "  --help             print this and exit\n";

/* Bounded copy, truncating (error messages can be longer than our fields). */
static void copy_str(char *dst, size_t n, const char *src)
{
    size_t k = strlen(src);
    if (k >= n)
        k = n - 1;
    memcpy(dst, src, k);
    dst[k] = '\0';
}

/* ---- options ---------------------------------------------------------- */

static int add_algo(bench_run *r, xchg_algo a)
{
    for (int k = 0; k < r->nalgos; k++)
        if (r->algos[k] == a)
            return 0;
    if (r->nalgos == BENCH_MAX_ALGOS)
        return bench_bad("too many algorithms (at most %d)", BENCH_MAX_ALGOS);
    r->algos[r->nalgos++] = a;
    return 0;
}

static int parse_algos(bench_run *r, const char *s, int alone)
{
    r->nalgos = 0;
    /* --alone: only the named columns (the simulated study runs one
     * algorithm per job, so a slow column never holds the others) */
    if (!alone) {
        add_algo(r, XCHG_ALGO_VENDOR); /* the baseline, always first */
#ifdef XCHG_SMPI
        /* SMPI's MPI_Alltoallv is neither MPICH's nor Open MPI's: speedups
         * are quoted against the models of the two libraries' defaults */
        add_algo(r, XCHG_ALGO_MPICH_MODEL);
        add_algo(r, XCHG_ALGO_OMPI_MODEL);
#endif
    }
    char buf[1024];
    if (strlen(s) >= sizeof buf || !*s)
        return bench_bad("--algos: bad list '%s'", s);
    strcpy(buf, s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "all") == 0) { /* the registry: new algorithms come in alone */
            for (int i = 0; i < xchg_algo_count(); i++)
                if (add_algo(r, xchg_algo_at(i)))
                    return -1;
            if (add_algo(r, XCHG_ALGO_AUTO)) /* what users get */
                return -1;
            continue;
        }
        xchg_algo a = xchg_algo_from_name(t);
        if (a == XCHG_ALGO_INVALID)
            return bench_bad("--algos: unknown algorithm '%s' (xchg-bench --list shows them)", t);
        if (add_algo(r, a))
            return -1;
    }
    return 0;
}

static int parse_patterns(bench_run *r, const char *s)
{
    static char buf[2048]; /* r->file_spec points into it */
    r->npatterns = 0;
    if (strlen(s) >= sizeof buf || !*s)
        return bench_bad("--pattern: bad list '%s'", s);
    strcpy(buf, s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        bench_pattern_kind k = bench_pattern_from_name(t);
        if (strncmp(t, "file:", 5) == 0) {
            if (r->file_spec && strcmp(r->file_spec, t + 5))
                return bench_bad("--pattern: one file: pattern per run");
            r->file_spec = t + 5;
            k = PAT_FILE;
        } else if (k == PAT_FILE) {
            k = PAT_COUNT; /* "file" needs its path */
        }
        if (k == PAT_COUNT)
            return bench_bad("--pattern: unknown pattern '%s' (uniform, random, sparse, zipf, hot, "
                       "transpose, file:PATH[:N])", t);
        int dup = 0;
        for (int p = 0; p < r->npatterns; p++)
            dup |= r->patterns[p] == k;
        if (!dup)
            r->patterns[r->npatterns++] = k;
    }
    return 0;
}

enum { ACT_RUN, ACT_HELP, ACT_LIST };

/* Fills r from argv; returns ACT_* or -1 with opt_error set. Every rank
 * parses the same argv, so all reach the same verdict. */
static int parse_args(int argc, char **argv, bench_run *r)
{
    const char *patterns = "random", *algos = "all";
    int act = ACT_RUN, alone = 0;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *arg = argv[i], *val = NULL, *eq;
        if (bench_opt_name(arg, name, sizeof name, &eq))
            return -1;
        static const char *const flags[] = {"--check", "--quiet", "--list", "--help",
                                            "--persistent", "--alone"};
        int is_flag = 0;
        for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++)
            is_flag |= strcmp(name, flags[f]) == 0;
        if (is_flag) {
            if (eq)
                return bench_bad("%s takes no value", name);
        } else if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        }
        long lv;
        if (strcmp(name, "--check") == 0) {
            r->check = 1;
        } else if (strcmp(name, "--persistent") == 0) {
            r->persistent = 1;
        } else if (strcmp(name, "--alone") == 0) {
            alone = 1;
        } else if (strcmp(name, "--quiet") == 0) {
            r->quiet = 1;
        } else if (strcmp(name, "--list") == 0) {
            act = ACT_LIST;
        } else if (strcmp(name, "--help") == 0) {
            if (act == ACT_RUN)
                act = ACT_HELP;
        } else if (!val) {
            if (strcmp(name, "--pattern") && strcmp(name, "--sizes") && strcmp(name, "--algos") &&
                strcmp(name, "--iters") && strcmp(name, "--warmup") && strcmp(name, "--seed") &&
                strcmp(name, "--density") && strcmp(name, "--zipf-s") && strcmp(name, "--hot") &&
                strcmp(name, "--hot-fraction") && strcmp(name, "--type") &&
                strcmp(name, "--show") && strcmp(name, "--csv") && strcmp(name, "--json"))
                return bench_bad("unknown option '%s'", arg);
            return bench_bad("%s needs a value", name);
        } else if (strcmp(name, "--pattern") == 0) {
            patterns = val;
        } else if (strcmp(name, "--algos") == 0) {
            algos = val;
        } else if (strcmp(name, "--sizes") == 0) {
            if (bench_parse_sizes(val, &r->size_min, &r->size_max))
                return bench_bad("--sizes needs MIN:MAX, powers of two with MIN <= MAX (like 16:64K), "
                           "not '%s'", val);
        } else if (strcmp(name, "--iters") == 0) {
            if (bench_parse_long(name, val, 1, 1000000, &lv))
                return -1;
            r->iters = (int)lv;
        } else if (strcmp(name, "--warmup") == 0) {
            if (bench_parse_long(name, val, 0, 1000000, &lv))
                return -1;
            r->warmup = (int)lv;
        } else if (strcmp(name, "--seed") == 0) {
            unsigned long long v;
            if (bench_parse_seed(name, val, &v))
                return -1;
            r->base.seed = v;
        } else if (strcmp(name, "--density") == 0) {
            if (bench_parse_double(name, val, 0, 1, &r->base.density))
                return -1;
            if (r->base.density <= 0)
                return bench_bad("--density needs a number in (0, 1], not '%s'", val);
        } else if (strcmp(name, "--zipf-s") == 0) {
            if (bench_parse_double(name, val, 0, 100, &r->base.zipf_s))
                return -1;
        } else if (strcmp(name, "--hot") == 0) {
            if (bench_parse_long(name, val, 1, INT_MAX, &lv))
                return -1;
            r->base.hot = (int)lv;
        } else if (strcmp(name, "--hot-fraction") == 0) {
            if (bench_parse_double(name, val, 0, 1, &r->base.hot_fraction))
                return -1;
        } else if (strcmp(name, "--type") == 0) {
            if (strcmp(val, "byte") == 0)
                r->type_double = 0;
            else if (strcmp(val, "double") == 0)
                r->type_double = 1;
            else
                return bench_bad("--type needs byte or double, not '%s'", val);
        } else if (strcmp(name, "--show") == 0) {
            static const char *const s[] = {"median", "min", "max", "mem"};
            int k = 0;
            while (k < 4 && strcmp(val, s[k]))
                k++;
            if (k == 4)
                return bench_bad("--show needs median, min, max or mem, not '%s'", val);
            r->show = (bench_show)k;
        } else if (strcmp(name, "--csv") == 0) {
            r->csv = val;
        } else if (strcmp(name, "--json") == 0) {
            r->json = val;
        } else {
            return bench_bad("unknown option '%s'", arg);
        }
    }
    if (parse_patterns(r, patterns) || parse_algos(r, algos, alone))
        return -1;
    if (r->type_double && r->size_min < 8)
        return bench_bad("--type double needs sizes of at least 8 bytes");
    return act;
}

/* ---- one size ------------------------------------------------------------ */

typedef struct bufs {
    char *sb, *rb, *ref;
    size_t sb_bytes, rb_bytes; /* rb and ref have GUARD more */
    int *sc, *sd, *rc, *rd;
    int64_t *row, *col;
} bufs;

enum { GUARD = 64, POISON = 0xA5 };

/* Counts and contiguous displacements of iteration it, in elements. */
static void set_counts(const bench_layout *l, bufs *b, long it, int64_t *stot, int64_t *rtot)
{
    bench_row_col(l, rank, it, b->row, b->col);
    int64_t s = 0, t = 0;
    for (int j = 0; j < l->P; j++) {
        b->sc[j] = (int)b->row[j];
        b->sd[j] = (int)s;
        b->rc[j] = (int)b->col[j];
        b->rd[j] = (int)t;
        s += b->row[j];
        t += b->col[j];
    }
    *stot = s;
    *rtot = t;
}

static int call(const bench_run *r, xchg_algo a, bufs *b, void *recv, MPI_Comm comm)
{
    MPI_Datatype t = r->type_double ? MPI_DOUBLE : MPI_BYTE;
    if (a == XCHG_ALGO_AUTO) /* as users call it: XCHG_ALLTOALLV_ALGO applies */
        return xchg_alltoallv(b->sb, b->sc, b->sd, t, recv, b->rc, b->rd, t, comm);
    return xchg_alltoallv_algo(a, b->sb, b->sc, b->sd, t, recv, b->rc, b->rd, t, comm);
}

/* The persistent requests of one size, one per algorithm (--persistent). */
typedef struct preqs {
    xchg_request *req;  /* NULL where init failed */
    int *failed;        /* init failed on some rank (agreed) */
    int *rc;            /* this rank's init return code */
} preqs;

/* One exchange of column col into b->rb: a one-shot call, or a start and
 * wait of the column's persistent request (not called when its init failed). */
static int run_col(const bench_run *r, int col, bufs *b, const preqs *pq, MPI_Comm comm)
{
    int na = r->nalgos;
    if (col < na)
        return call(r, r->algos[col], b, b->rb, comm);
    int rc = xchg_start(pq->req[col - na]);
    return rc == MPI_SUCCESS ? xchg_wait(pq->req[col - na]) : rc;
}

/* Agrees on a failure: returns 1 on every rank if any rank failed, with
 * "rank K: its message" of the lowest failing rank K in out. */
static int agree_failure(int failed, const char *mine, char *out, size_t n, MPI_Comm comm)
{
    int me = failed ? rank : INT_MAX, lowest;
    MPI_Allreduce(&me, &lowest, 1, MPI_INT, MPI_MIN, comm);
    if (lowest == INT_MAX)
        return 0;
    char buf[MPI_MAX_ERROR_STRING] = "";
    if (rank == lowest)
        copy_str(buf, sizeof buf, mine);
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, lowest, comm);
    snprintf(out, n, "rank %d: %s", lowest, buf);
    return 1;
}

/* agree_failure for an MPI/xchg return code */
static int agree_error(int rc, char *out, size_t n, MPI_Comm comm)
{
    char e[MPI_MAX_ERROR_STRING] = "";
    int len;
    if (rc != MPI_SUCCESS)
        xchg_error_string(rc, e, &len);
    return agree_failure(rc != MPI_SUCCESS, e, out, n, comm);
}


/* What a rank found wrong in one checked result. */
typedef struct check_info {
    long bad;      /* 0 ok, 1 wrong data, 2 wrote past the end */
    long src;      /* source rank of the first wrong byte */
    long offset;   /* its byte offset in that source's block */
    long got, expected;
} check_info;

/* --check at one size, iteration 0's counts: every algorithm (and every
 * persistent request, its first start) against MPI_Alltoallv. Returns the
 * number of columns that failed (same on all ranks); prints the report on
 * rank 0. */
static int check_size(const bench_run *r, bench_pattern_kind pat, int64_t size, bufs *b,
                      int64_t rtot, const preqs *pq, MPI_Comm comm)
{
    int es = r->type_double ? 8 : 1;
    size_t rbytes = (size_t)rtot * (size_t)es;
    MPI_Datatype t = r->type_double ? MPI_DOUBLE : MPI_BYTE;
    memset(b->ref, POISON, rbytes + GUARD);
    int rc = MPI_Alltoallv(b->sb, b->sc, b->sd, t, b->ref, b->rc, b->rd, t, comm);
    char msg[MPI_MAX_ERROR_STRING + 64];
    if (agree_error(rc, msg, sizeof msg, comm)) {
        if (rank == 0)
            fprintf(stderr, "xchg-bench: --check: MPI_Alltoallv itself failed: %s\n", msg);
        return 1;
    }
    const char *corrupt = getenv("XCHG_BENCH_TEST_CORRUPT"); /* tests the checker */
    int failed = 0;
    int na = r->nalgos;
    for (int col = 0; col < bench_ncols(r); col++) {
        int pers = col >= na;
        const char *name = bench_col_label(r, col % na, pers);
        memset(b->rb, POISON, rbytes + GUARD);
        /* a failed init is reported here as the call's failure */
        if (pers && pq->failed[col - na])
            rc = pq->rc[col - na];
        else
            rc = run_col(r, col, b, pq, comm);
        if (agree_error(rc, msg, sizeof msg, comm)) {
            int cls = MPI_ERR_OTHER;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            int refused = cls == MPI_ERR_NO_MEM, all_refused;
            if (rc == MPI_SUCCESS)
                refused = 1; /* only another rank failed: its class decides */
            MPI_Allreduce(&refused, &all_refused, 1, MPI_INT, MPI_MIN, comm);
            if (rank == 0)
                fprintf(stderr, "xchg-bench: --check: %s %s %s at %" PRId64 " B: %s%s\n",
                        all_refused ? "note:" : "FAILED:", name, bench_pattern_name(pat), size,
                        all_refused ? "refused (memory limit): " : "error: ", msg);
            failed += !all_refused;
            continue;
        }
        if (corrupt && strcmp(corrupt, name) == 0 && rbytes > 0)
            b->rb[rbytes / 2] ^= 1;
        check_info ci = {0, -1, 0, 0, 0};
        for (size_t k = 0; k < rbytes + GUARD; k++) {
            if (b->rb[k] == b->ref[k])
                continue;
            ci.bad = k < rbytes ? 1 : 2;
            ci.got = (unsigned char)b->rb[k];
            ci.expected = (unsigned char)b->ref[k];
            long src = 0;
            while (src + 1 < r->P && (size_t)b->rd[src + 1] * (size_t)es <= k)
                src++;
            ci.src = ci.bad == 1 ? src : -1;
            ci.offset = ci.bad == 1 ? (long)(k - (size_t)b->rd[src] * (size_t)es)
                                    : (long)(k - rbytes);
            break;
        }
        check_info *all = rank == 0 ? malloc(sizeof(check_info) * (size_t)r->P) : NULL;
        MPI_Gather(&ci, 5, MPI_LONG, all, 5, MPI_LONG, 0, comm);
        int nbad = 0;
        if (rank == 0) {
            for (int q = 0; q < r->P; q++)
                nbad += all[q].bad != 0;
            if (nbad) {
                fprintf(stderr,
                        "xchg-bench: --check FAILED: %s differs from MPI_Alltoallv on %d of %d "
                        "ranks (pattern %s, %" PRId64 " B, %s, seed %" PRIu64 ")\n",
                        name, nbad, r->P, bench_pattern_name(pat), size, bench_type_name(r),
                        r->base.seed);
                int shown = 0;
                for (int q = 0; q < r->P && shown < 8; q++) {
                    if (!all[q].bad)
                        continue;
                    shown++;
                    if (all[q].bad == 1)
                        fprintf(stderr,
                                "  rank %d: block from rank %ld, byte %ld: got 0x%02lx, "
                                "expected 0x%02lx\n",
                                q, all[q].src, all[q].offset, all[q].got, all[q].expected);
                    else
                        fprintf(stderr, "  rank %d: wrote %ld bytes past the received data\n",
                                q, all[q].offset + 1);
                }
            }
        }
        free(all);
        MPI_Bcast(&nbad, 1, MPI_INT, 0, comm);
        failed += nbad > 0;
    }
    return failed;
}

/* --persistent: one request per algorithm on iteration 0's counts, each
 * init timed after a barrier (init[a]: this rank's seconds). A failure is
 * agreed so that no rank starts a request another rank lacks. */
static void init_requests(const bench_run *r, bufs *b, preqs *pq, double *init, MPI_Comm comm)
{
    MPI_Datatype t = r->type_double ? MPI_DOUBLE : MPI_BYTE;
    /* xchg's first call on comm sets up its state (MPI_Comm_dup, node
     * split): one untimed vendor call, so no init is charged for it. Its
     * result is not needed (the timed calls report errors). */
    (void)call(r, r->algos[0], b, b->rb, comm);
    for (int a = 0; a < r->nalgos; a++) {
        pq->req[a] = XCHG_REQUEST_NULL;
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        int rc;
        if (r->algos[a] == XCHG_ALGO_AUTO) /* as users call it: XCHG_ALLTOALLV_ALGO applies */
            rc = xchg_alltoallv_init(b->sb, b->sc, b->sd, t, b->rb, b->rc, b->rd, t, comm,
                                     MPI_INFO_NULL, &pq->req[a]);
        else
            rc = xchg_alltoallv_init_algo(r->algos[a], b->sb, b->sc, b->sd, t, b->rb, b->rc,
                                          b->rd, t, comm, MPI_INFO_NULL, &pq->req[a]);
        init[a] = MPI_Wtime() - t0;
        pq->rc[a] = rc;
        char msg[MPI_MAX_ERROR_STRING + 64];
        pq->failed[a] = agree_error(rc, msg, sizeof msg, comm);
        /* Where only some ranks failed, the others' requests are left
         * unfreed: freeing is collective and could hang. */
        if (pq->failed[a])
            pq->req[a] = XCHG_REQUEST_NULL;
    }
}

static void free_requests(const bench_run *r, preqs *pq)
{
    for (int a = 0; a < r->nalgos && pq->req; a++)
        if (pq->req[a] != XCHG_REQUEST_NULL)
            xchg_request_free(&pq->req[a]);
    free(pq->req);
    free(pq->failed);
    free(pq->rc);
}

/* Measures every algorithm at one (pattern, size): fills row[0..ncols).
 * Returns the number of failed checks (0 without --check). */
static int run_size_on(const bench_run *r, bench_pattern_kind pat, int64_t size,
                       bench_result *row, bufs *b, MPI_Comm comm)
{
    int P = r->P, es = r->type_double ? 8 : 1, na = r->nalgos, nc = bench_ncols(r);
    bench_pattern pp = r->base;
    pp.kind = pat;
    bench_layout l;
    bench_layout_init(&l, &pp, P, size / es, es);
    long nit = (long)r->warmup + r->iters;
    /* A persistent request keeps its counts: with --persistent every column
     * runs iteration 0's, so all still run the same exchanges. */
    long ncount = bench_pattern_varies(&pp) && !r->persistent ? nit : 1;

    /* What the largest iteration needs, and whether it fits int counts. */
    int64_t smax = 0, rmax = 0, sum = 0, cmax = 0;
    for (long it = 0; it < ncount; it++) {
        bench_row_col(&l, rank, it, b->row, b->col);
        int64_t s = 0, t = 0;
        for (int j = 0; j < P; j++) {
            s += b->row[j];
            t += b->col[j];
            cmax = b->row[j] > cmax ? b->row[j] : cmax;
        }
        sum += s;
        smax = s > smax ? s : smax;
        rmax = t > rmax ? t : rmax;
    }
    double dsum = (double)sum / (double)ncount, gsum;
    MPI_Allreduce(&dsum, &gsum, 1, MPI_DOUBLE, MPI_SUM, comm);
    int64_t need[2] = {smax > rmax ? smax : rmax, cmax}, gneed[2];
    MPI_Allreduce(need, gneed, 2, MPI_INT64_T, MPI_MAX, comm);
    for (int c = 0; c < nc; c++) {
        bench_result *x = &row[c];
        x->pattern = pat;
        x->size = size;
        x->algo = c % na;
        x->persistent = c >= na;
        x->init = 0;
        x->avg_bytes = gsum * es / ((double)P * P);
        x->status = ST_OK;
        x->error[0] = x->ran[0] = '\0';
        x->temp_bytes = 0;
    }
    char why[256] = "";
    if (gneed[0] > INT_MAX)
        snprintf(why, sizeof why, "a rank's %" PRId64 " elements overflow int displacements",
                 gneed[0]);
    size_t sbytes = (size_t)smax * es, rbytes = (size_t)rmax * es;
    if (!why[0]) {
        int ok = 1, all;
        if (sbytes > b->sb_bytes) {
            free(b->sb);
            b->sb = malloc(sbytes ? sbytes : 1);
            b->sb_bytes = b->sb ? sbytes : 0;
            ok &= b->sb != NULL;
        }
        if (rbytes > b->rb_bytes || !b->rb) {
            free(b->rb);
            free(b->ref);
            b->rb = malloc(rbytes + GUARD);
            b->ref = r->check ? malloc(rbytes + GUARD) : NULL;
            b->rb_bytes = b->rb ? rbytes : 0;
            ok &= b->rb != NULL && (!r->check || b->ref != NULL);
        }
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
        if (!all)
            snprintf(why, sizeof why, "out of memory: a rank needs %" PRId64 " bytes of buffers",
                     gneed[0] * es * (r->check ? 3 : 2));
    }
    if (why[0]) {
        for (int c = 0; c < nc; c++) {
            row[c].status = ST_SKIPPED;
            copy_str(row[c].error, sizeof row[c].error, why);
        }
        if (rank == 0)
            fprintf(stderr, "xchg-bench: %s %" PRId64 " B skipped: %s\n",
                    bench_pattern_name(pat), size, why);
        return 0;
    }

    /* Data: doubles that are exact small integers, or bytes; what matters
     * for --check is that every byte depends on sender and position. */
    if (r->type_double) {
        double *d = (double *)b->sb;
        for (int64_t k = 0; k < smax; k++)
            d[k] = (double)rank * 1048576.0 + (double)k;
    } else {
        for (size_t k = 0; k < sbytes; k++)
            b->sb[k] = (char)((k * 131u + (size_t)rank * 7919u + (k >> 8)) & 0xff);
    }

    int64_t stot, rtot;
    set_counts(&l, b, 0, &stot, &rtot);
    preqs pq = {0};
    double *init = calloc((size_t)na, sizeof(double));
    if (r->persistent) {
        pq.req = calloc((size_t)na, sizeof(xchg_request));
        pq.failed = calloc((size_t)na, sizeof(int));
        pq.rc = calloc((size_t)na, sizeof(int));
        init_requests(r, b, &pq, init, comm);
    }
    if (r->check) {
        int failed = check_size(r, pat, size, b, rtot, &pq, comm);
        if (failed) {
            free_requests(r, &pq);
            free(init);
            return failed;
        }
    }

    double *t = calloc((size_t)nc * (size_t)r->iters, sizeof(double));
    int *err = calloc((size_t)nc, sizeof(int));
    char (*msg)[256] = calloc((size_t)nc, sizeof *msg);
    uint64_t *temp = calloc((size_t)nc, sizeof(uint64_t));
    for (int a = 0; a < na && r->persistent; a++)
        if (pq.rc[a] != MPI_SUCCESS) { /* the init's error is the column's */
            char e[MPI_MAX_ERROR_STRING];
            int len;
            xchg_error_string(pq.rc[a], e, &len);
            copy_str(msg[na + a], sizeof msg[na + a], e);
            err[na + a] = 1;
        }
    for (long it = 0; it < nit; it++) {
        if (ncount > 1)
            set_counts(&l, b, it, &stot, &rtot);
        for (int k = 0; k < nc; k++) {
            int a = (int)((k + it) % nc); /* rotate who goes first */
            if (a >= na && pq.failed[a - na])
                continue; /* agreed on every rank */
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            int rc = run_col(r, a, b, &pq, comm);
            double dt = MPI_Wtime() - t0;
            if (rc != MPI_SUCCESS && !err[a]) {
                char e[MPI_MAX_ERROR_STRING];
                int len;
                xchg_error_string(rc, e, &len);
                copy_str(msg[a], sizeof msg[a], e);
                err[a] = 1;
            }
            xchg_stats st;
            if (xchg_get_stats(comm, &st) == MPI_SUCCESS) {
                if (st.temp_bytes > temp[a])
                    temp[a] = st.temp_bytes;
                if (rank == 0)
                    copy_str(row[a].ran, sizeof row[a].ran, bench_algo_label(st.algo));
            }
            if (it >= r->warmup)
                t[(size_t)a * r->iters + (size_t)(it - r->warmup)] = dt;
        }
    }
    /* Slowest rank per iteration, most memory over ranks, agreed errors. */
    double *tmax = rank == 0 ? malloc(sizeof(double) * (size_t)nc * (size_t)r->iters) : NULL;
    MPI_Reduce(t, tmax, nc * r->iters, MPI_DOUBLE, MPI_MAX, 0, comm);
    uint64_t *tempmax = calloc((size_t)nc, sizeof(uint64_t));
    MPI_Reduce(temp, tempmax, nc, MPI_UINT64_T, MPI_MAX, 0, comm);
    double *initmax = calloc((size_t)na, sizeof(double));
    if (r->persistent) {
        MPI_Reduce(init, initmax, na, MPI_DOUBLE, MPI_MAX, 0, comm);
        free_requests(r, &pq);
    }
    for (int a = 0; a < nc; a++) {
        bench_result *x = &row[a];
        if (agree_failure(err[a], msg[a], x->error, sizeof x->error, comm)) {
            x->status = ST_ERROR;
            if (rank == 0)
                fprintf(stderr, "xchg-bench: %s %s %" PRId64 " B: %s\n",
                        bench_col_label(r, x->algo, x->persistent), bench_pattern_name(pat),
                        size, x->error);
        }
        if (rank != 0)
            continue;
        x->temp_bytes = tempmax[a];
        if (x->persistent)
            x->init = initmax[x->algo];
        x->times = malloc(sizeof(double) * (size_t)r->iters);
        memcpy(x->times, tmax + (size_t)a * r->iters, sizeof(double) * (size_t)r->iters);
        bench_summary(x->times, r->iters, &x->median, &x->min, &x->max, &x->mean);
    }
    free(t);
    free(tmax);
    free(err);
    free(msg);
    free(temp);
    free(tempmax);
    free(init);
    free(initmax);
    return 0;
}

/* run_size_on a communicator of its own: auto's cached choice and refresh
 * schedule (docs/user-guide.md, "The automatic choice and tuning") start
 * afresh at every (pattern, size), as in a separate run, instead of
 * carrying the previous size's choice into this one's iterations. The
 * communicator is set up before (xchg_comm_prepare), so auto's column is
 * a set-up communicator's, as every other column is: without it auto's
 * first calls would be MPI's own (docs/setup.md; `xchg-bench setup`
 * measures those). Its first call (a warm-up one unless --warmup 0)
 * agrees blocking; the timed ones show the steady state, refreshes
 * included. */
static int run_size(const bench_run *r, bench_pattern_kind pat, int64_t size, bench_result *row,
                    bufs *b, MPI_Comm world)
{
    MPI_Comm comm;
    MPI_Comm_dup(world, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int ready = 0;
    xchg_comm_prepare(comm, &ready);
    int failed = run_size_on(r, pat, size, row, b, comm);
    MPI_Comm_free(&comm);
    return failed;
}

/* ---- main ------------------------------------------------------------------ */

/* The size a replayed file runs at: its mean block, rounded (at least 1). */
static int64_t file_size(const bench_run *r)
{
    double sum = 0;
    for (int i = 0; i < r->P; i++)
        for (int j = 0; j < r->P; j++)
            sum += (double)bench_record_bytes(&r->rec, r->P, i, j);
    int64_t s = llround(sum / ((double)r->P * r->P));
    return s < 1 ? 1 : s;
}

static int finish(MPI_Comm *comm, int code)
{
    MPI_Comm_free(comm);
    MPI_Finalize();
    return code;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    if (argc > 1 && strcmp(argv[1], "dsde") == 0) /* tools/bench/dsde.c */
        return finish(&comm, dsde_main(argc - 1, argv + 1, comm));
    if (argc > 1 && strcmp(argv[1], "neighbor") == 0) /* tools/bench/neighbor.c */
        return finish(&comm, neighbor_main(argc - 1, argv + 1, comm));
    if (argc > 1 && strcmp(argv[1], "overlap") == 0) /* tools/bench/overlap.c */
        return finish(&comm, overlap_main(argc - 1, argv + 1, comm));
    if (argc > 1 && strcmp(argv[1], "setup") == 0) /* tools/bench/setup.c */
        return finish(&comm, setup_main(argc - 1, argv + 1, comm));

    /* set up now: --check verifies auto's own result, not MPI's own call,
     * which auto's first calls on a new communicator are (docs/setup.md) */
    int ready = 0;
    xchg_comm_prepare(comm, &ready);
    static bench_run run;
    bench_run *r = &run;
    MPI_Comm_size(comm, &r->P);
    r->base.seed = 1;
    r->base.density = 0.25;
    r->base.zipf_s = 1.0;
    r->base.hot = 1;
    r->base.hot_fraction = 0.8;
    r->size_min = 16;
    r->size_max = 65536;
    r->iters = 20;
    r->warmup = 3;

    int act = parse_args(argc, argv, r);
    if (act < 0) {
        if (rank == 0)
            fprintf(stderr, "xchg-bench: %s (xchg-bench --help for usage)\n", bench_opt_error);
        return finish(&comm, 2);
    }
    if (act == ACT_HELP) {
        if (rank == 0)
            fputs(usage, stdout);
        return finish(&comm, 0);
    }
    if (act == ACT_LIST) {
        if (rank == 0)
            for (int i = 0; i < xchg_algo_count(); i++)
                printf("%s\n", bench_algo_label(xchg_algo_at(i)));
        return finish(&comm, 0);
    }

    bench_env_fill(&r->env);
    /* Output files must be writable before an hour of measuring. */
    if (!bench_files_writable(r->csv, r->json, comm))
        return finish(&comm, 1);
    bench_warn_oversubscribed(comm);

    /* file:PATH[:N]: the recorded shape, read on rank 0, on every rank */
    if (r->file_spec) {
        char err[1200];
        if (bench_record_load(r->file_spec, comm, &r->rec, err, sizeof err)) {
            if (rank == 0)
                fprintf(stderr, "xchg-bench: --pattern file:%s: %s (xchg-bench --help for "
                        "usage)\n", r->file_spec, err);
            return finish(&comm, 2);
        }
        r->base.rec = &r->rec;
    }
    int nsizes = 0;
    for (int64_t s = r->size_min; s <= r->size_max; s *= 2)
        nsizes++;
    int nres = 0;
    for (int p = 0; p < r->npatterns; p++)
        nres += (r->patterns[p] == PAT_FILE ? 1 : nsizes) * bench_ncols(r);
    bench_result *res = calloc((size_t)nres, sizeof *res);
    bufs b = {0};
    size_t P = (size_t)r->P;
    b.sc = malloc(sizeof(int) * P);
    b.sd = malloc(sizeof(int) * P);
    b.rc = malloc(sizeof(int) * P);
    b.rd = malloc(sizeof(int) * P);
    b.row = malloc(sizeof(int64_t) * P);
    b.col = malloc(sizeof(int64_t) * P);

    double start = MPI_Wtime();
    int progress = !r->quiet && rank == 0;
    int failed = 0, n = 0;
    for (int p = 0; p < r->npatterns && !failed; p++) {
        int first = n;
        if (rank == 0) {
            if (p > 0)
                printf("\n");
            report_table_header(stdout, r, r->patterns[p]);
        }
        int file = r->patterns[p] == PAT_FILE;
        int64_t fsize = file ? file_size(r) : 0; /* >= 1: the only size of a file */
        for (int64_t s = file ? fsize : r->size_min;
             !failed && (file ? s == fsize : s <= r->size_max); s = file ? 0 : 2 * s) {
            bench_result *row = &res[n];
            failed = run_size(r, r->patterns[p], s, row, &b, comm);
            if (failed)
                break;
            n += bench_ncols(r);
            if (rank == 0)
                report_table_row(stdout, r, row);
            double el = MPI_Wtime() - start;
            /* only long sweeps, and never on stdout */
            if (progress && (isatty(2) || el > 2.0))
                fprintf(stderr, "xchg-bench: %s %" PRId64 " B done, %.1f s\n",
                        bench_pattern_name(r->patterns[p]), s, el);
        }
        if (rank == 0 && !failed)
            report_table_footer(stdout, r, &res[first], n - first);
    }
    int code = 0;
    if (failed) {
        if (rank == 0)
            fprintf(stderr, "xchg-bench: --check failed for %d algorithm(s); no timing done\n",
                    failed);
        code = 1;
    } else if (rank == 0) {
        if (r->csv && report_csv(r->csv, r, res, n)) {
            fprintf(stderr, "xchg-bench: cannot write '%s'\n", r->csv);
            code = 1;
        }
        if (r->json && report_json(r->json, r, res, n)) {
            fprintf(stderr, "xchg-bench: cannot write '%s'\n", r->json);
            code = 1;
        }
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, comm);
    for (int k = 0; k < nres; k++)
        free(res[k].times);
    free(res);
    free(b.sb);
    free(b.rb);
    free(b.ref);
    free(b.sc);
    free(b.sd);
    free(b.rc);
    free(b.rd);
    free(b.row);
    free(b.col);
    bench_record_free(&r->rec);
    return finish(&comm, code);
}

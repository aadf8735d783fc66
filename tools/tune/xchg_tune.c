/*
 * xchg_tune.c - xchg-tune: measure this machine, write a tuning table.
 *
 *     mpiexec -n P xchg-tune --out xchg-tuning.txt [--sizes 8:64K] [--iters 20] [--verify]
 *     export XCHG_TUNING_FILE=$PWD/xchg-tuning.txt
 *
 * For each mean message size (powers of 4 between MIN and MAX) it times
 * every registered algorithm but the models of MPI libraries, vendor (MPI's
 * own MPI_Alltoallv) included, on random counts in [0, 2*mean] bytes,
 * after checking its result against MPI_Alltoallv, and writes a rule for
 * this P naming the fastest (median of the per-iteration maximum over
 * ranks): vendor where MPI's own call is, so a rule never names an
 * algorithm slower than it. Auto applies a rule at the P it names, also
 * below XCHG_AUTO_MIN_P. It also measures the model constants alpha and
 * beta with a ping-pong between rank 0 and the last rank, written only
 * where these are on different nodes (else the model keeps its link
 * constants). --verify re-reads the table under the settings of this run
 * (XCHG_AUTO_MIN_P included) and checks that xchg_alltoallv then runs each
 * rule's algorithm. The table format and how auto uses it: docs/tuning.md.
 *
 * --pattern file:PATH[:N] tunes on an application's own exchange instead:
 * the N-th shape of a file XCHG_RECORD wrote (tools/bench/record_file.h,
 * scaled to this P by the same rule as xchg-bench's), one rule for it.
 * --sparse MIN:MAX adds the sparse exchange's rules (tune_sparse.c).
 * It writes the set-up constants too (setup_round, setup_window), timed
 * here, so that auto's rule for when a communicator's set-up pays back
 * (docs/setup.md) uses this machine's costs.
 */
#include "bench_util.h"
#include "record_load.h"
#include "setup_costs.h"
#include "tune_sparse.h"
#include "tune_time.h"
#include "xchg.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, P;

/* The model's per-post overhead (src/select/model.c, xchg_model_defaults),
 * written to the table beside the alpha measured here. */
#define TUNE_OVERHEAD 0.2e-6

typedef struct {
    int *sc, *sd, *rc, *rd;
    char *sb, *rb, *ref;
    long stot, rtot;
    long long key; /* what the selector keys rules on: busiest rank's bytes / P */
} pattern;

static unsigned long long rnd(unsigned long long *s)
{
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

static void pattern_make(pattern *p, long mean)
{
    p->sc = malloc(sizeof(int) * P); p->sd = malloc(sizeof(int) * P);
    p->rc = malloc(sizeof(int) * P); p->rd = malloc(sizeof(int) * P);
    unsigned long long s = 0x9E3779B97F4A7C15ull ^ (unsigned long long)(rank + 1) * 7919u;
    for (int j = 0; j < P; j++)
        p->sc[j] = (int)(rnd(&s) % (unsigned long long)(2 * mean + 1));
    MPI_Alltoall(p->sc, 1, MPI_INT, p->rc, 1, MPI_INT, MPI_COMM_WORLD);
    p->stot = p->rtot = 0;
    for (int j = 0; j < P; j++) {
        p->sd[j] = (int)p->stot; p->stot += p->sc[j];
        p->rd[j] = (int)p->rtot; p->rtot += p->rc[j];
    }
    p->sb = malloc((size_t)p->stot + 1);
    p->rb = malloc((size_t)p->rtot + 1);
    p->ref = malloc((size_t)p->rtot + 1);
    for (long k = 0; k < p->stot; k++)
        p->sb[k] = (char)(rnd(&s) & 0xff);
    MPI_Alltoallv(p->sb, p->sc, p->sd, MPI_BYTE, p->ref, p->rc, p->rd, MPI_BYTE, MPI_COMM_WORLD);
    long long vol = p->stot > p->rtot ? p->stot : p->rtot;
    MPI_Allreduce(&vol, &p->key, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    p->key /= P;
}

/* The recorded shape rec, replayed at this P, in bytes; 0, or -1 on every
 * rank if a block or a rank's total does not fit an int count. */
static int pattern_make_file(pattern *p, const bench_record *rec)
{
    p->sc = malloc(sizeof(int) * P); p->sd = malloc(sizeof(int) * P);
    p->rc = malloc(sizeof(int) * P); p->rd = malloc(sizeof(int) * P);
    int64_t tot = 0;
    int fits = 1;
    for (int j = 0; j < P; j++) {
        int64_t b = bench_record_bytes(rec, P, rank, j);
        tot += b;
        fits &= b <= 2147483647 && tot <= 2147483647;
        p->sc[j] = fits ? (int)b : 0;
    }
    int all = 0;
    MPI_Allreduce(&fits, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        free(p->sc); free(p->sd); free(p->rc); free(p->rd);
        return -1;
    }
    MPI_Alltoall(p->sc, 1, MPI_INT, p->rc, 1, MPI_INT, MPI_COMM_WORLD);
    p->stot = p->rtot = 0;
    for (int j = 0; j < P; j++) {
        p->sd[j] = (int)p->stot; p->stot += p->sc[j];
        p->rd[j] = (int)p->rtot; p->rtot += p->rc[j];
    }
    p->sb = malloc((size_t)p->stot + 1);
    p->rb = malloc((size_t)p->rtot + 1);
    p->ref = malloc((size_t)p->rtot + 1);
    unsigned long long s = 0x9E3779B97F4A7C15ull ^ (unsigned long long)(rank + 1) * 7919u;
    for (long k = 0; k < p->stot; k++)
        p->sb[k] = (char)(rnd(&s) & 0xff);
    MPI_Alltoallv(p->sb, p->sc, p->sd, MPI_BYTE, p->ref, p->rc, p->rd, MPI_BYTE, MPI_COMM_WORLD);
    long long vol = p->stot > p->rtot ? p->stot : p->rtot;
    MPI_Allreduce(&vol, &p->key, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    p->key /= P;
    return 0;
}

/* One pattern of the run: a random one of mean size, or the recorded one. */
static int pattern_get(pattern *p, long mean, const bench_record *rec)
{
    if (rec)
        return pattern_make_file(p, rec);
    pattern_make(p, mean);
    return 0;
}

static void pattern_free(pattern *p)
{
    free(p->sc); free(p->sd); free(p->rc); free(p->rd);
    free(p->sb); free(p->rb); free(p->ref);
}

typedef struct timed_call {
    xchg_algo a;
    pattern *p;
} timed_call;

static void alltoallv_once(void *ctx)
{
    const timed_call *tc = ctx;
    pattern *p = tc->p;
    xchg_alltoallv_algo(tc->a, p->sb, p->sc, p->sd, MPI_BYTE, p->rb, p->rc, p->rd, MPI_BYTE,
                        MPI_COMM_WORLD);
}

/* Median over iters of the slowest rank's time; -1 if the result is wrong, -2 if
 * another algorithm ran in its place. */
static double time_algo(xchg_algo a, pattern *p, int iters)
{
    memset(p->rb, 0, (size_t)p->rtot + 1);
    int rc = xchg_alltoallv_algo(a, p->sb, p->sc, p->sd, MPI_BYTE, p->rb, p->rc, p->rd, MPI_BYTE,
                                 MPI_COMM_WORLD);
    int ok = rc == MPI_SUCCESS && memcmp(p->rb, p->ref, (size_t)p->rtot) == 0, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all)
        return -1.0;
    timed_call tc = {a, p};
    double med = tune_time(alltoallv_once, NULL, &tc, iters);
    /* another algorithm ran in its place (shm without its window: linear;
     * node_pairs_shm: node_pairs), the same on every rank: a rule naming
     * it would not run it, and the one that ran is timed under its name */
    xchg_stats s;
    if (xchg_get_stats(MPI_COMM_WORLD, &s) == MPI_SUCCESS && s.algo != a)
        return -2.0;
    return med;
}

/* Half round trip between rank 0 and the last rank for n bytes. */
static double pingpong(int n, int reps)
{
    char *buf = calloc((size_t)n + 1, 1);
    int peer = P - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < reps && P > 1; i++) {
        if (rank == 0) {
            MPI_Send(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == peer) {
            MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    double t = (MPI_Wtime() - t0) / (2.0 * reps);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(buf);
    return t;
}

/* Whether rank 0 and the last rank share a node (MPI's shared-memory
 * split): then the ping-pong measured the inside of a node, not the link
 * the model's alpha and beta price. */
static int peer_on_my_node(void)
{
    MPI_Comm node;
    int leader; /* my node's lowest rank; after the broadcast, the last rank's */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    MPI_Bcast(&leader, 1, MPI_INT, P - 1, MPI_COMM_WORLD);
    return leader == 0; /* rank 0 leads its own node */
}

/* The model's set-up constants (src/select/model.c, xchg_model_setup_time):
 * setup_round, one of the log2 P rounds of a communicator's duplicate, node
 * split and settings allreduce (the three timed here over this run's ranks,
 * their sum divided by its rounds), and setup_window, a node-shared window
 * of XCHG_SHM_BYTES' default (1 MiB) made and freed; 0 where MPI refused
 * one (not written: the model keeps its default). */
typedef struct setup_consts {
    double dup, split_type, allreduce, window; /* seconds, -1: refused */
    int rounds;
    double round;
} setup_consts;

static void measure_setup(setup_consts *s)
{
    enum { REPS = 20 };
    double t[REPS];
    char why[MPI_MAX_ERROR_STRING + 32];
    setup_costs_ctx c;
    memset(s, 0, sizeof *s);
    s->dup = s->split_type = s->allreduce = s->window = -1;
    s->rounds = 1;
    while ((1 << s->rounds) < P)
        s->rounds++;
    if (setup_costs_open(&c, MPI_COMM_WORLD, 1 << 20) != MPI_SUCCESS)
        return;
    s->dup = setup_op_time(&c, SETUP_OP_DUP, REPS, t, why, sizeof why);
    s->split_type = setup_op_time(&c, SETUP_OP_SPLIT_TYPE, REPS, t, why, sizeof why);
    s->allreduce = setup_op_time(&c, SETUP_OP_ALLREDUCE, REPS, t, why, sizeof why);
    s->window = setup_op_time(&c, SETUP_OP_WINDOW, REPS, t, why, sizeof why);
    setup_costs_close(&c);
    if (s->dup >= 0 && s->split_type >= 0 && s->allreduce >= 0)
        s->round = (s->dup + s->split_type + s->allreduce) / s->rounds;
}

/* " 12.3 us" or " refused" into buf. */
static const char *us_or_refused(double t, char *buf, size_t n)
{
    if (t < 0)
        snprintf(buf, n, " refused");
    else
        snprintf(buf, n, " %.1f us", t * 1e6);
    return buf;
}

/* The set-up lines of the table (and, with f stdout, of the report). */
static void write_setup(FILE *f, const setup_consts *s)
{
    char a[32], b[32], c[32], d[32];
    fprintf(f, "# set-up on %d ranks: MPI_Comm_dup%s, MPI_Comm_split_type%s, a 64 B "
            "MPI_Allreduce%s (%d round%s); a 1 MiB shared window%s\n", P,
            us_or_refused(s->dup, a, sizeof a), us_or_refused(s->split_type, b, sizeof b),
            us_or_refused(s->allreduce, c, sizeof c), s->rounds, s->rounds == 1 ? "" : "s",
            us_or_refused(s->window, d, sizeof d));
    if (s->round > 0)
        fprintf(f, "setup_round %.6g\n", s->round);
    if (s->window > 0)
        fprintf(f, "setup_window %.6g\n", s->window);
}

static const char usage_line[] =
    "usage: xchg-tune [--out FILE] [--sizes MIN:MAX] [--iters N] [--verify]\n"
    "                 [--pattern file:PATH[:N]] [--sparse MIN:MAX] [--help]\n";
static const char usage_text[] =
    "  --out FILE         the table to write (default xchg-tuning.txt)\n"
    "  --sizes MIN:MAX    mean block bytes to measure, every power of 4 from MIN up to\n"
    "                     MAX; powers of two, K/M/G suffixes, as xchg-bench's\n"
    "                     (default 8:64K); one SIZE alone measures it only\n"
    "  --iters N          timed calls per algorithm and size, the median is kept\n"
    "                     (default 20)\n"
    "  --verify           then check that auto, reading the table under this run's\n"
    "                     settings, runs each rule's algorithm (exit 1 if not)\n"
    "  --pattern file:PATH[:N]  tune on the N-th shape (default 0) of a file\n"
    "                     XCHG_RECORD wrote instead of random counts: one rule\n"
    "  --sparse MIN:MAX   also the sparse exchange's rules: 128-byte messages to m\n"
    "                     random other ranks, m every power of 4 from MIN up to MAX\n"
    "                     (clipped to ranks - 1 and 63; like 1:64)\n"
    "  --help, -h         this text\n"
    "Every rule is for this run's number of ranks: run it once per job size.\n"
    "Use the table with XCHG_TUNING_FILE=FILE (docs/tuning.md).\n";

static void usage_exit(const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "xchg-tune: %s\n%s(xchg-tune --help says more)\n", msg, usage_line);
    MPI_Finalize();
    exit(2);
}

/* --sizes MIN:MAX or SIZE; counts of up to 2 x MAX bytes to each of P ranks
 * must fit an int displacement. */
static void parse_sizes(const char *val, long *smin, long *smax)
{
    int64_t lo, hi;
    if (bench_parse_sizes(val, &lo, &hi)) {
        char msg[160];
        snprintf(msg, sizeof msg, "--sizes needs MIN:MAX, powers of two with MIN <= MAX "
                 "(like 16:64K), not '%.60s'", val);
        usage_exit(msg);
    }
    if (hi > INT_MAX / 2 / P) {
        char msg[160];
        snprintf(msg, sizeof msg, "--sizes: MAX %lld is too large for %d ranks (2 x MAX x "
                 "ranks bytes must fit an int displacement)", (long long)hi, P);
        usage_exit(msg);
    }
    *smin = (long)lo;
    *smax = (long)hi;
}

typedef struct options {
    const char *out, *file_spec;
    long smin, smax;
    int iters, verify;
    int mmin, mmax; /* --sparse; 0: not asked */
} options;

static void parse_options(int argc, char **argv, options *o)
{
    *o = (options){"xchg-tuning.txt", NULL, 8, 65536, 20, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (rank == 0)
                printf("%s%s", usage_line, usage_text);
            MPI_Finalize();
            exit(0);
        } else if (!strcmp(a, "--verify")) {
            o->verify = 1;
        } else if (strcmp(a, "--out") && strcmp(a, "--sizes") && strcmp(a, "--iters") &&
                   strcmp(a, "--pattern") && strcmp(a, "--sparse")) {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown option '%.60s'", a);
            usage_exit(msg);
        } else if (!has_value) {
            char msg[80];
            snprintf(msg, sizeof msg, "%s needs a value", a);
            usage_exit(msg);
        } else if (!strcmp(a, "--out")) {
            o->out = argv[++i];
        } else if (!strcmp(a, "--sizes")) {
            parse_sizes(argv[++i], &o->smin, &o->smax);
        } else if (!strcmp(a, "--sparse")) {
            int64_t lo, hi;
            if (bench_parse_sizes(argv[++i], &lo, &hi) || hi > 1 << 20)
                usage_exit("--sparse wants MIN:MAX messages per rank, powers of two with "
                           "MIN <= MAX (like 1:64)");
            o->mmin = (int)lo;
            o->mmax = (int)hi;
        } else if (!strcmp(a, "--iters")) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || v < 1 || v > 1000000)
                usage_exit("--iters wants a number in [1, 1000000]");
            o->iters = (int)v;
        } else {
            o->file_spec = argv[++i];
            if (strncmp(o->file_spec, "file:", 5) != 0)
                usage_exit("--pattern wants file:PATH[:N] (a file XCHG_RECORD wrote)");
            o->file_spec += 5;
        }
    }
}

/* The fastest algorithm on p, vendor (MPI's own call) included, so that
 * a rule never names one slower than it; not the models of MPI
 * libraries' algorithms, which a rule may not name. *vt: vendor's time. */
static xchg_algo fastest(pattern *p, long size, int iters, double *bt, double *vt)
{
    xchg_algo best = XCHG_ALGO_VENDOR;
    *bt = *vt = 0;
    for (int a = 0; a < xchg_algo_count(); a++) {
        xchg_algo al = xchg_algo_at(a);
        if (xchg_algo_is_baseline(al) && al != XCHG_ALGO_VENDOR)
            continue;
        double t = time_algo(al, p, iters);
        if (t == -2.0) {
            if (rank == 0)
                fprintf(stderr, "xchg-tune: %s runs another algorithm here at %ld B: "
                        "skipped\n", xchg_algo_name(al), size);
            continue;
        }
        if (t < 0) {
            if (rank == 0)
                fprintf(stderr, "xchg-tune: %s gives a wrong result at %ld B: skipped\n",
                        xchg_algo_name(al), size);
            continue;
        }
        if (al == XCHG_ALGO_VENDOR)
            *vt = t;
        if (*bt == 0 || t < *bt) { /* a tie keeps the earlier: vendor is first */
            *bt = t;
            best = al;
        }
    }
    return best;
}

/* --verify: auto, reading the table as the user's runs will (this run's
 * settings, XCHG_AUTO_MIN_P included), runs each rule's algorithm;
 * returns the failures. */
static int verify_table(const char *out, int nsizes, long *sizes, const xchg_algo *best,
                        const bench_record *recp)
{
    const char *forced = getenv("XCHG_ALLTOALLV_ALGO");
    if (forced && *forced && strcmp(forced, "auto") != 0 && rank == 0)
        fprintf(stderr, "xchg-tune --verify: XCHG_ALLTOALLV_ALGO=%s forces an algorithm, so "
                "auto and the table are not used; unset it to verify\n", forced);
    setenv("XCHG_TUNING_FILE", out, 1);
    int failures = 0;
    for (int i = 0; i < nsizes; i++) {
        pattern p;
        pattern_get(&p, sizes[i], recp); /* fitted before */
        /* A new communicator per size: xchg reads its settings once per
         * communicator, and the first call there chooses from its own
         * statistics (later ones run a cached choice, refreshed on
         * auto's schedule, docs/user-guide.md "The automatic choice
         * and tuning") */
        MPI_Comm vcomm;
        MPI_Comm_dup(MPI_COMM_WORLD, &vcomm);
        /* set up now: the choice of a set-up communicator is verified, not
         * the calls MPI's own MPI_Alltoallv runs before (docs/setup.md) */
        int ready = 0;
        xchg_comm_prepare(vcomm, &ready);
        int rc = xchg_alltoallv(p.sb, p.sc, p.sd, MPI_BYTE, p.rb, p.rc, p.rd, MPI_BYTE, vcomm);
        xchg_stats s;
        xchg_get_stats(vcomm, &s);
        MPI_Comm_free(&vcomm);
        int ok = rc == MPI_SUCCESS && s.algo == best[i] &&
                 memcmp(p.rb, p.ref, (size_t)p.rtot) == 0, all;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) {
            failures++;
            if (rank == 0)
                fprintf(stderr, "xchg-tune --verify: at %ld B the table says %s but "
                                "xchg_alltoallv ran %s\n", sizes[i], xchg_algo_name(best[i]),
                        xchg_algo_name(s.algo));
        }
        pattern_free(&p);
    }
    if (rank == 0)
        printf("verify: %d passed, %d failed\n", nsizes - failures, failures);
    return failures;
}

/* Writes the table (rank 0); *written[i]: size i has a rule. 0, or 1 on
 * every rank if it cannot be written. */
typedef struct sparse_rules {
    int n, m[TUNE_SPARSE_MAX];
    xchg_sparse_algo best[TUNE_SPARSE_MAX];
} sparse_rules;

static int write_table(const char *out, int one_node, double wire, double beta,
                       const setup_consts *su, int nsizes, const long long *keys,
                       const xchg_algo *best, int *written, const sparse_rules *sp)
{
    int werr = 0;
    for (int i = 0; i < nsizes; i++) {
        /* the selector keys rules on the busiest rank's bytes / P:
         * bucket edges halfway between the measured keys */
        long long lo = i == 0 ? 0 : (keys[i - 1] + keys[i]) / 2 + 1;
        long long hi = i == nsizes - 1 ? 1LL << 40 : (keys[i] + keys[i + 1]) / 2;
        written[i] = hi >= lo; /* else keys too close to separate */
    }
    FILE *f = rank == 0 ? fopen(out, "w") : NULL;
    if (rank == 0 && !f) {
        fprintf(stderr, "xchg-tune: cannot write %s: %s\n", out, strerror(errno));
        werr = 1;
    } else if (f) {
        fprintf(f, "# xchg tuning table: written by xchg-tune on %d ranks (docs/tuning.md)\n", P);
        /* the model's constants: they price every P, not only the rules' */
        if (one_node)
            fprintf(f, "# alpha, beta not written: rank 0 and rank %d share a node, so the\n"
                       "# ping-pong measured no link between nodes\n", P - 1);
        else
            fprintf(f, "alpha %.6g\nbeta %.6g\noverhead %.6g\n", wire, beta, TUNE_OVERHEAD);
        write_setup(f, su);
        for (int i = 0; i < nsizes; i++) {
            long long lo = i == 0 ? 0 : (keys[i - 1] + keys[i]) / 2 + 1;
            long long hi = i == nsizes - 1 ? 1LL << 40 : (keys[i] + keys[i + 1]) / 2;
            if (written[i])
                fprintf(f, "rule %d %d %lld %lld %s\n", P, P, lo, hi, xchg_algo_name(best[i]));
        }
        tune_sparse_write(f, sp->n, sp->m, sp->best, P);
        if (fclose(f) != 0) {
            fprintf(stderr, "xchg-tune: cannot write %s: %s\n", out, strerror(errno));
            werr = 1;
        } else {
            printf("# wrote %s: export XCHG_TUNING_FILE=%s\n", out, out);
        }
    }
    MPI_Bcast(&werr, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return werr;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    options o;
    parse_options(argc, argv, &o);
    bench_record rec;
    const bench_record *recp = NULL;
    if (o.file_spec) {
        char err[1200];
        if (bench_record_load(o.file_spec, MPI_COMM_WORLD, &rec, err, sizeof err)) {
            if (rank == 0)
                fprintf(stderr, "xchg-tune: --pattern file:%s: %s\n", o.file_spec, err);
            MPI_Finalize();
            return 2;
        }
        recp = &rec;
    }
    unsetenv("XCHG_TUNING_FILE"); /* measure the algorithms, not an old table */

    double alpha = pingpong(0, 200);
    double beta = P > 1 ? (pingpong(1 << 20, 20) - alpha) / (double)(1 << 20) : 0.0;
    if (beta <= 0)
        beta = 1e-10;
    /* The model (src/select/model.c) charges a message its wire latency
     * alpha plus a per-post overhead at each end; the ping-pong's half
     * round trip holds all three. xchg-tune does not measure the overhead
     * apart: it writes the model's (TUNE_OVERHEAD) and the rest as alpha,
     * so one message still costs the measured half round trip. */
    const double wire = alpha - 2.0 * TUNE_OVERHEAD > 1e-9 ? alpha - 2.0 * TUNE_OVERHEAD : 1e-9;
    /* on one node the ping-pong never left it: keep the model's link */
    const int one_node = peer_on_my_node();
    setup_consts su;
    measure_setup(&su);

    int nsizes = 0;
    long sizes[40];
    for (long s = o.smin; s <= o.smax && nsizes < 40 && !recp; s *= 4)
        sizes[nsizes++] = s;
    if (recp) /* the recorded shape, one rule */
        sizes[nsizes++] = 0;
    xchg_algo best[40];
    long long keys[40];
    int written[40];
    if (rank == 0 && recp)
        printf("# xchg-tune: %d ranks, %s shape %d (recorded at P=%d%s), median of %d\n",
               P, recp->path, recp->index, recp->P0, recp->P0 == P ? "" : ", scaled", o.iters);
    else if (rank == 0)
        printf("# xchg-tune: %d ranks, random counts in [0, 2*mean], median of %d\n", P,
               o.iters);
    if (rank == 0)
        printf("# alpha %.3g s  beta %.3g s/B\n", alpha, beta);
    if (rank == 0)
        write_setup(stdout, &su);
    if (rank == 0)
        printf("%10s %-18s %12s %12s\n", "mean_B", "fastest", "median_us", "vendor_us");
    for (int i = 0; i < nsizes; i++) {
        pattern p;
        if (pattern_get(&p, sizes[i], recp)) {
            if (rank == 0)
                fprintf(stderr, "xchg-tune: the recorded shape has blocks or totals beyond "
                        "int counts at P=%d\n", P);
            MPI_Finalize();
            return 2;
        }
        if (recp) { /* its mean block, for the table */
            long long tot = p.stot, all = 0;
            MPI_Allreduce(&tot, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            sizes[i] = (long)(all / ((long long)P * P));
        }
        keys[i] = p.key;
        double bt, vt;
        best[i] = fastest(&p, sizes[i], o.iters, &bt, &vt);
        if (rank == 0)
            printf("%10ld %-18s %12.1f %12.1f\n", sizes[i], xchg_algo_name(best[i]), bt * 1e6,
                   vt * 1e6);
        pattern_free(&p);
    }
    sparse_rules sp = {0};
    if (o.mmin > 0) {
        sp.n = tune_sparse_counts(o.mmin, o.mmax, P, sp.m);
        tune_sparse_measure(sp.n, sp.m, o.iters, rank, P, sp.best);
    }
    int failures =
        write_table(o.out, one_node, wire, beta, &su, nsizes, keys, best, written, &sp);
    if (o.verify && !failures) {
        int n = 0;
        for (int i = 0; i < nsizes; i++)
            if (written[i]) {
                sizes[n] = sizes[i];
                best[n++] = best[i];
            }
        failures = verify_table(o.out, n, sizes, best, recp);
        failures += tune_sparse_verify(sp.n, sp.m, sp.best, rank, P); /* the table is set */
    }
    if (recp)
        bench_record_free(&rec);
    MPI_Finalize();
    return failures ? 1 : 0;
}

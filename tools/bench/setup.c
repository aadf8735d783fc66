/*
 * setup.c - xchg-bench setup: what setting a communicator up costs, and
 * what a program that makes communicators pays for it.
 *
 * xchg's auto passes a new communicator's first calls to the MPI library's
 * MPI_Alltoallv and sets up (a private MPI_Comm_dup, a node split, one
 * settings allreduce, perhaps a shared window) only once the calls repay it
 * (docs/setup.md). Whether that pays depends on what those MPI calls cost
 * on the machine and on how long a program keeps its communicators, so
 * three tables, each timing over MPI_COMM_WORLD's ranks:
 *   1. set-up costs: the MPI calls a set-up is made of, one at a time,
 *      each after a barrier, with one MPI_Alltoallv for scale;
 *   2. a new communicator every K calls: MPI_Comm_split, K exchanges,
 *      MPI_Comm_free, repeated over enough communicators, with
 *      MPI_Alltoallv and with xchg_alltoallv;
 *   3. back-to-back calls on one communicator, xchg's first calls included
 *      (no warm-up: they are what a short program pays);
 *   4. the node-shared memory xchg holds (xchg_stats.shm_bytes) with one
 *      and with 16 live duplicates of MPI_COMM_WORLD, each having run
 *      blocking shm calls, and their first calls' times: the first makes
 *      the window, the others borrow it (docs/setup.md).
 * A figure is the slowest rank's median over repetitions (tables 2 and 3:
 * over --runs, MPI's and xchg's runs taking turns so that a slow spell of
 * the machine falls on both). Blocks are dense: --bytes to every rank,
 * itself included, as MPI_BYTE.
 *
 *   xchg-bench setup [--calls LIST] [--min-calls N] [--runs N] [--reps N]
 *                    [--iters N] [--bytes N] [--sizes LIST] [--window-bytes N]
 */
#include "setup.h"
#include "bench_util.h"
#include "oversubscribed.h"
#include "setup_costs.h"

#include "xchg.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SU_MAX_LIST 32

typedef struct su_run {
    int rank, P;
    int reps, runs, min_calls, iters, bytes;
    long long window_bytes;
    int calls[SU_MAX_LIST], ncalls;
    int sizes[SU_MAX_LIST], nsizes;
    char lib[160]; /* MPI_Get_library_version's first line, tabs as spaces */
} su_run;

/* One dense exchange's arguments: b bytes to and from every rank. MPI's
 * calls receive into ref, xchg's into rb, so that the two can be compared. */
typedef struct su_bufs {
    int *sc, *sd, *rc, *rd;
    char *sb, *rb, *ref;
    int bytes;
} su_bufs;

static const char usage[] =
    "usage: xchg-bench setup [options]\n"
    "What a communicator's set-up costs here, and what a program that makes a new\n"
    "communicator every K calls pays with xchg_alltoallv (auto) against MPI_Alltoallv.\n"
    "  --calls LIST         K, calls per communicator, comma list (default 1,3,10,1000)\n"
    "  --min-calls N        calls per K and run at least, over 5 communicators or more\n"
    "                       (default 2000)\n"
    "  --runs N             runs of MPI's and xchg's loops, taking turns; the median\n"
    "                       is shown (default 3)\n"
    "  --reps N             repetitions of each set-up operation (default 50)\n"
    "  --iters N            back-to-back calls per run on one communicator (default 2000)\n"
    "  --bytes N            bytes per block, set-up and K tables (default 64)\n"
    "  --sizes LIST         bytes per block of the back-to-back table, comma list\n"
    "                       (default 16,64,256)\n"
    "  --window-bytes N     shared window's size, all of it on node rank 0; K, M, G\n"
    "                       suffixes (default 1M)\n"
    "  --help               print this and exit\n";

/* ---- options ---------------------------------------------------------- */

/* A comma list of integers in [1, max] into out[0..*n). */
static int parse_list(const char *opt, const char *s, long max, int *out, int *n)
{
    char buf[512];
    if (strlen(s) >= sizeof buf || !*s)
        return bench_bad("%s needs a comma list, not '%s'", opt, s);
    strcpy(buf, s);
    *n = 0;
    for (char *t = buf, *comma; t; t = comma ? comma + 1 : NULL) {
        comma = strchr(t, ',');
        if (comma)
            *comma = '\0';
        long v;
        if (*n == SU_MAX_LIST)
            return bench_bad("%s: at most %d values", opt, SU_MAX_LIST);
        if (bench_parse_long(opt, t, 1, max, &v))
            return -1;
        out[(*n)++] = (int)v;
    }
    return 0;
}

/* A byte count with an optional K, M or G suffix, 0 allowed. */
static int parse_amount(const char *opt, const char *s, long long *out)
{
    long long v;
    int shift;
    if (bench_parse_suffixed(s, &v, &shift) || v > (1LL << 40) >> shift)
        return bench_bad("%s needs a byte count up to 1T (K, M, G suffixes), not '%s'", opt, s);
    *out = v << shift;
    return 0;
}

/* One valued option into r; 0 or -1 with bench_opt_error set. */
static int set_option(su_run *r, const char *name, const char *val)
{
    long v = 0;
    if (!strcmp(name, "--calls"))
        return parse_list(name, val, 100000000, r->calls, &r->ncalls);
    if (!strcmp(name, "--sizes"))
        return parse_list(name, val, 1L << 24, r->sizes, &r->nsizes);
    if (!strcmp(name, "--window-bytes"))
        return parse_amount(name, val, &r->window_bytes);
    /* the rest are integers from 1; --reps and --runs size arrays of times */
    static const struct { const char *name; size_t off; long max; } ints[] = {
        {"--min-calls", offsetof(su_run, min_calls), 100000000},
        {"--iters", offsetof(su_run, iters), 100000000},
        {"--reps", offsetof(su_run, reps), 1000000},
        {"--runs", offsetof(su_run, runs), 10000},
        {"--bytes", offsetof(su_run, bytes), 1L << 24},
    };
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        if (strcmp(name, ints[k].name))
            continue;
        if (bench_parse_long(name, val, 1, ints[k].max, &v))
            return -1;
        *(int *)((char *)r + ints[k].off) = (int)v;
        return 0;
    }
    return bench_bad("unknown option '%s'", name); /* parse_args knows them all */
}

/* 1: --help; 0: run; -1: a bad option (bench_opt_error). Every rank parses
 * the same argv, so every rank reaches the same verdict. */
static int parse_args(int argc, char **argv, su_run *r)
{
    static const char *const valued[] = {"--calls", "--min-calls", "--runs",  "--reps",
                                         "--iters", "--bytes",     "--sizes", "--window-bytes"};
    const size_t nv = sizeof valued / sizeof valued[0];
    int help = 0;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *val, *eq;
        if (bench_opt_name(argv[i], name, sizeof name, &eq))
            return -1;
        int known = !strcmp(name, "--help"); /* the other modes' flags are not this one's */
        for (size_t k = 0; k < nv; k++)
            known |= !strcmp(name, valued[k]);
        if (!known)
            return bench_bad("unknown option '%s'", argv[i]);
        if (bench_next_opt(argc, argv, &i, valued, nv, name, &val))
            return -1;
        if (!val)
            help = 1;
        else if (set_option(r, name, val))
            return -1;
    }
    return help;
}

/* ---- buffers and the two exchanges -------------------------------------- */

static void bufs_free(su_bufs *b)
{
    free(b->sc);
    free(b->sb);
    free(b->rb);
    free(b->ref);
    memset(b, 0, sizeof *b);
}

/* Dense blocks of `bytes` to every rank; the send buffer's bytes depend on
 * sender, receiver and position, so a block in the wrong place shows. 0, or
 * -1 when out of memory (on this rank). */
static int bufs_make(su_bufs *b, const su_run *r, int bytes)
{
    size_t P = (size_t)r->P, total = P * (size_t)bytes;
    b->bytes = bytes;
    b->sc = malloc(sizeof(int) * 4 * P);
    b->sb = malloc(total);
    b->rb = malloc(total);
    b->ref = malloc(total);
    if (!b->sc || !b->sb || !b->rb || !b->ref) {
        bufs_free(b);
        return -1;
    }
    b->sd = b->sc + P;
    b->rc = b->sc + 2 * P;
    b->rd = b->sc + 3 * P;
    for (size_t j = 0; j < P; j++) {
        b->sc[j] = b->rc[j] = bytes;
        b->sd[j] = b->rd[j] = (int)(j * (size_t)bytes);
    }
    for (size_t k = 0; k < total; k++)
        b->sb[k] = (char)((k * 131u + (size_t)r->rank * 7919u + (k >> 8)) & 0xff);
    return 0;
}

static int mpi_call(su_bufs *b, MPI_Comm comm)
{
    return MPI_Alltoallv(b->sb, b->sc, b->sd, MPI_BYTE, b->ref, b->rc, b->rd, MPI_BYTE, comm);
}

static int xchg_call(su_bufs *b, MPI_Comm comm)
{
    return xchg_alltoallv(b->sb, b->sc, b->sd, MPI_BYTE, b->rb, b->rc, b->rd, MPI_BYTE, comm);
}

/* What xchg ran on comm's last call, for the tables' last column. */
static void ran_on(MPI_Comm comm, char *out, size_t n)
{
    xchg_stats s;
    if (xchg_get_stats(comm, &s) != MPI_SUCCESS)
        snprintf(out, n, "?");
    else
        snprintf(out, n, "%s", s.passed_to_mpi ? "MPI's (passed through)" : xchg_algo_name(s.algo));
}

/* The slowest rank's median of t[0..n) (collective). */
static double slowest_median(const double *t, int n, MPI_Comm comm)
{
    double med, lo, hi, mean, out;
    bench_summary(t, n, &med, &lo, &hi, &mean);
    MPI_Allreduce(&med, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
    return out;
}

static const char *plural(int n)
{
    return n == 1 ? "" : "s";
}

/* ---- table 1: set-up costs ---------------------------------------------- */

/* MPI's call on comm, for scale. */
typedef struct su_ctx {
    MPI_Comm comm;
    su_bufs *b;
} su_ctx;

static int run_alltoallv(void *arg)
{
    const su_ctx *c = arg;
    return mpi_call(c->b, c->comm);
}

/* One row of table 1: a time, or a refusal (such as Open MPI's shared
 * window without its osc sm component), agreed, shown instead. */
static void setup_row(const su_run *r, const char *label, double s, const char *why)
{
    if (r->rank != 0)
        return;
    if (s < 0)
        printf("%-48s %10s  (%s)\n", label, "refused", why);
    else
        printf("%-48s %10.2f\n", label, s * 1e6);
}

static void setup_table(const su_run *r, su_bufs *b, MPI_Comm comm)
{
    setup_costs_ctx c;
    setup_costs_open(&c, comm, r->window_bytes);
    if (r->rank == 0) {
        printf("# set-up costs per communicator (us): %d rank%s, %s; slowest rank's median of "
               "%d repetition%s, a barrier before each\n", r->P, plural(r->P), r->lib, r->reps,
               plural(r->reps));
        printf("%-48s %10s\n", "operation", "us");
    }
    double *t = malloc(sizeof(double) * (size_t)r->reps);
    char label[96], why[MPI_MAX_ERROR_STRING + 32];
    for (int op = 0; op < SETUP_NOPS; op++) {
        if (!setup_op_available(op))
            continue;
        double s = setup_op_time(&c, op, r->reps, t, why, sizeof why);
        setup_row(r, setup_op_label(&c, op, label, sizeof label), s, why);
    }
    su_ctx a2a = {comm, b};
    snprintf(label, sizeof label, "MPI_Alltoallv of %d B blocks (for scale)", r->bytes);
    double s = setup_time_fn(run_alltoallv, &a2a, comm, r->reps, t, why, sizeof why);
    setup_row(r, label, s, why);
    free(t);
    setup_costs_close(&c);
}

/* ---- tables 2 and 3: MPI's call against xchg's -------------------------- */

/* Ranks whose xchg result differs from MPI's (collective); 0 when alike. */
static int ranks_differing(const su_bufs *b, int rc, MPI_Comm comm)
{
    int P;
    MPI_Comm_size(comm, &P);
    size_t total = (size_t)P * (size_t)b->bytes;
    int differs = rc != MPI_SUCCESS || memcmp(b->rb, b->ref, total) != 0, n;
    MPI_Allreduce(&differs, &n, 1, MPI_INT, MPI_SUM, comm);
    return n;
}

/* This rank's time per communicator of ncomm rounds of (MPI_Comm_split,
 * K calls, MPI_Comm_free); *rc: the first error; ran: what xchg ran last
 * (for xchg's calls). */
static double per_comm(su_bufs *b, int K, int ncomm, int use_xchg, int *rc, char *ran,
                       size_t rn, MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int n = 0; n < ncomm; n++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c);
        for (int k = 0; k < K; k++) {
            int e = use_xchg ? xchg_call(b, c) : mpi_call(b, c);
            if (e != MPI_SUCCESS && *rc == MPI_SUCCESS)
                *rc = e;
        }
        if (use_xchg && n == ncomm - 1)
            ran_on(c, ran, rn); /* before the free, where xchg forgets it */
        MPI_Comm_free(&c);
    }
    return (MPI_Wtime() - t0) / ncomm;
}

/* This rank's time per call of `iters` calls on a fresh duplicate of
 * MPI_COMM_WORLD: fresh, so that xchg's first calls (passed through, then
 * its set-up) are timed as a new communicator's are. */
static double per_call(su_bufs *b, int iters, int use_xchg, int *rc, char *ran, size_t rn,
                       MPI_Comm comm)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int k = 0; k < iters; k++) {
        int e = use_xchg ? xchg_call(b, c) : mpi_call(b, c);
        if (e != MPI_SUCCESS && *rc == MPI_SUCCESS)
            *rc = e;
    }
    double t = (MPI_Wtime() - t0) / iters;
    if (use_xchg)
        ran_on(c, ran, rn);
    MPI_Comm_free(&c);
    return t;
}

/* XCHG_BENCH_TEST_CORRUPT=auto: xchg's result is spoilt on the last rank,
 * so that a test sees the comparison catch it. */
static int corrupt_xchg(void)
{
    const char *c = getenv("XCHG_BENCH_TEST_CORRUPT");
    return c && !strcmp(c, "auto");
}

/* One table row's runs: MPI's loop and xchg's taking turns, xchg's result
 * checked against MPI's after each run. K > 0: table 2's loop over
 * ncomm communicators; K == 0: table 3's back-to-back calls. Fills the
 * slowest rank's medians; 0, or 1 after printing the FAIL line. */
static int row_runs(const su_run *r, su_bufs *b, int K, int ncomm, double med[2], char *ran,
                    size_t rn, MPI_Comm comm)
{
    double *t = malloc(sizeof(double) * 2 * (size_t)r->runs);
    int failed = 0;
    for (int run = 0; run < r->runs && !failed; run++) {
        int rc = MPI_SUCCESS;
        memset(b->rb, 0xa5, (size_t)r->P * (size_t)b->bytes); /* a call that writes nothing shows */
        for (int x = 0; x < 2; x++)
            t[2 * run + x] = K > 0 ? per_comm(b, K, ncomm, x, &rc, ran, rn, comm)
                                   : per_call(b, r->iters, x, &rc, ran, rn, comm);
        if (corrupt_xchg() && r->rank == r->P - 1)
            b->rb[0] ^= 1;
        int n = ranks_differing(b, rc, comm);
        if (n && r->rank == 0) {
            printf("FAIL: %s %d, run %d: xchg_alltoallv's last result differs from "
                   "MPI_Alltoallv's on %d rank(s)\n", K > 0 ? "K" : "bytes",
                   K > 0 ? K : b->bytes, run + 1, n);
            fflush(stdout);
        }
        failed = n != 0;
    }
    double *col = malloc(sizeof(double) * (size_t)r->runs);
    for (int x = 0; x < 2 && !failed; x++) {
        for (int run = 0; run < r->runs; run++)
            col[run] = t[2 * run + x];
        med[x] = slowest_median(col, r->runs, comm);
    }
    free(col);
    free(t);
    return failed;
}

static void print_row(int first, const double med[2], const char *ran)
{
    char ratio[32] = "-";
    if (med[0] > 0)
        snprintf(ratio, sizeof ratio, "%.2f", med[1] / med[0]);
    printf("%8d %14.2f %14.2f %9s  %s\n", first, med[0] * 1e6, med[1] * 1e6, ratio, ran);
}

static int per_comm_table(const su_run *r, su_bufs *b, MPI_Comm comm)
{
    if (r->rank == 0) {
        printf("# a new communicator every K calls: us per communicator (MPI_Comm_split, K "
               "calls of %d B blocks, MPI_Comm_free), %d rank%s, %s; slowest rank's median "
               "of %d run%s\n", r->bytes, r->P, plural(r->P), r->lib, r->runs, plural(r->runs));
        printf("%8s %14s %14s %9s  %s\n", "K", "MPI us/comm", "xchg us/comm", "xchg/MPI",
               "xchg ran (last call)");
    }
    for (int i = 0; i < r->ncalls; i++) {
        int K = r->calls[i];
        int ncomm = (r->min_calls + K - 1) / K;
        double med[2];
        char ran[64] = "";
        if (row_runs(r, b, K, ncomm < 5 ? 5 : ncomm, med, ran, sizeof ran, comm))
            return 1;
        if (r->rank == 0)
            print_row(K, med, ran);
    }
    return 0;
}

static int per_call_table(const su_run *r, MPI_Comm comm)
{
    if (r->rank == 0) {
        printf("# back-to-back calls on one communicator: us per call of %d calls, no barrier "
               "between them, xchg's first calls included, %d rank%s, %s; slowest rank's "
               "median of %d run%s\n", r->iters, r->P, plural(r->P), r->lib, r->runs,
               plural(r->runs));
        printf("%8s %14s %14s %9s  %s\n", "bytes", "MPI us/call", "xchg us/call", "xchg/MPI",
               "xchg ran (last call)");
    }
    for (int i = 0; i < r->nsizes; i++) {
        su_bufs b = {0};
        int ok = bufs_make(&b, r, r->sizes[i]) == 0, all, failed = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
        if (!all) {
            if (r->rank == 0)
                fprintf(stderr, "xchg-bench: setup: out of memory at %d B blocks\n", r->sizes[i]);
            bufs_free(&b);
            return 1;
        }
        double med[2];
        char ran[64] = "";
        failed = row_runs(r, &b, 0, 0, med, ran, sizeof ran, comm);
        if (!failed && r->rank == 0)
            print_row(r->sizes[i], med, ran);
        bufs_free(&b);
        if (failed)
            return 1;
    }
    return 0;
}

/* ---- table 4: shared memory with many communicators --------------------- */

enum { SHARE_COMMS = 16 };

static int shm_call(su_bufs *b, MPI_Comm comm)
{
    return xchg_alltoallv_algo(XCHG_ALGO_SHM, b->sb, b->sc, b->sd, MPI_BYTE, b->rb, b->rc,
                               b->rd, MPI_BYTE, comm);
}

static size_t shm_held(MPI_Comm comm)
{
    xchg_stats s;
    return xchg_get_stats(comm, &s) == MPI_SUCCESS ? s.shm_bytes : 0;
}

static int share_table(const su_run *r, su_bufs *b, MPI_Comm comm)
{
    MPI_Comm c[SHARE_COMMS];
    double first[SHARE_COMMS];
    size_t held[SHARE_COMMS];
    int rc = MPI_SUCCESS;
    for (int i = 0; i < SHARE_COMMS; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c[i]);
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        int e = shm_call(b, c[i]);
        first[i] = MPI_Wtime() - t0;
        for (int k = 0; k < 3 && e == MPI_SUCCESS; k++)
            e = shm_call(b, c[i]);
        rc = rc == MPI_SUCCESS ? e : rc;
        held[i] = shm_held(c[i]);
    }
    int n = ranks_differing(b, rc, comm);
    double mine[2] = {first[0], 0}, most[2];
    for (int i = 1; i < SHARE_COMMS; i++)
        mine[1] += first[i] / (SHARE_COMMS - 1);
    MPI_Allreduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, comm);
    char ran[64];
    ran_on(c[0], ran, sizeof ran);
    if (r->rank == 0) {
        printf("# node-shared memory xchg holds: live duplicates of MPI_COMM_WORLD, each "
               "after 4 blocking shm calls of %d B blocks, %d rank%s, %s; first call: the "
               "slowest rank's\n", r->bytes, r->P, plural(r->P), r->lib);
        printf("%12s %16s %18s  %s\n", "live comms", "shared bytes", "first call us",
               "xchg ran (last call)");
        printf("%12d %16zu %18.2f  %s\n", 1, held[0], most[0] * 1e6, ran);
        printf("%12d %16zu %18.2f  (the mean first call of communicators 2-%d)\n",
               SHARE_COMMS, held[SHARE_COMMS - 1], most[1] * 1e6, SHARE_COMMS);
        if (n)
            printf("FAIL: xchg_alltoallv's result differs from MPI_Alltoallv's on %d "
                   "rank(s)\n", n);
    }
    for (int i = 0; i < SHARE_COMMS; i++)
        MPI_Comm_free(&c[i]);
    return n != 0;
}

/* ---- main --------------------------------------------------------------- */

static void su_defaults(su_run *r, MPI_Comm comm)
{
    static const int calls[] = {1, 3, 10, 1000}, sizes[] = {16, 64, 256};
    memset(r, 0, sizeof *r);
    MPI_Comm_rank(comm, &r->rank);
    MPI_Comm_size(comm, &r->P);
    r->reps = 50;
    r->runs = 3;
    r->min_calls = 2000;
    r->iters = 2000;
    r->bytes = 64;
    r->window_bytes = 1LL << 20;
    r->ncalls = 4;
    memcpy(r->calls, calls, sizeof calls);
    r->nsizes = 3;
    memcpy(r->sizes, sizes, sizeof sizes);
}

/* The library's first line for the headers, its tabs as spaces (MPICH's
 * "MPICH Version:\t4.0.2"). */
static void library_line(su_run *r)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    bench_first_line(lib, r->lib, sizeof r->lib);
    for (char *p = r->lib; *p; p++)
        if (*p == '\t')
            *p = ' ';
}

/* P blocks of the largest size must fit MPI_Alltoallv's int displacements. */
static int sizes_fit(const su_run *r)
{
    int most = r->bytes;
    for (int i = 0; i < r->nsizes; i++)
        most = r->sizes[i] > most ? r->sizes[i] : most;
    if ((long long)most * r->P <= INT_MAX)
        return 1;
    bench_bad("%d ranks x %d B blocks overflow MPI_Alltoallv's int displacements", r->P, most);
    return 0;
}

int setup_main(int argc, char **argv, MPI_Comm comm)
{
    su_run r;
    su_defaults(&r, comm);
    int act = parse_args(argc, argv, &r);
    if (act < 0 || (act == 0 && !sizes_fit(&r))) {
        if (r.rank == 0)
            fprintf(stderr, "xchg-bench: setup: %s (xchg-bench setup --help for usage)\n",
                    bench_opt_error);
        return 2;
    }
    if (act == 1) {
        if (r.rank == 0)
            fputs(usage, stdout);
        return 0;
    }
    library_line(&r);
    bench_warn_oversubscribed(comm); /* on stderr, before the first table's line */
    su_bufs b = {0};
    int ok = bufs_make(&b, &r, r.bytes) == 0, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) {
        if (r.rank == 0)
            fprintf(stderr, "xchg-bench: setup: out of memory\n");
        bufs_free(&b);
        return 1;
    }
    setup_table(&r, &b, comm);
    if (r.rank == 0)
        printf("\n"), fflush(stdout); /* each table as it is done: the run takes a while */
    int failed = per_comm_table(&r, &b, comm);
    if (!failed && r.rank == 0)
        printf("\n"), fflush(stdout);
    if (!failed)
        failed = per_call_table(&r, comm);
    if (!failed && r.rank == 0)
        printf("\n"), fflush(stdout);
    if (!failed) { /* the reference for table 4's check */
        MPI_Alltoallv(b.sb, b.sc, b.sd, MPI_BYTE, b.ref, b.rc, b.rd, MPI_BYTE, comm);
        failed = share_table(&r, &b, comm);
    }
    bufs_free(&b);
    if (r.rank == 0)
        fflush(stdout);
    return failed ? 1 : 0;
}

/*
 * overlap.c - xchg-bench overlap: how much of a nonblocking exchange hides
 * behind computation.
 *
 * For each algorithm and average block size, on one count pattern, the
 * median over iterations (slowest rank) of three timings:
 *   exchange  xchg_ialltoallv_algo + xchg_wait, nothing between;
 *   compute   a busy loop of the same length as the exchange's median (or
 *             --compute US), in --chunks pieces;
 *   both      xchg_ialltoallv_algo, the compute pieces with an xchg_test
 *             after each, then xchg_wait.
 * overlap = (exchange + compute - both) / min(exchange, compute): 100% if
 * the exchange hid entirely, 0% if nothing overlapped (negative: the
 * tests cost more than they saved). Progress happens in the tests (the
 * exchange is a coroutine, docs/user-guide.md "Nonblocking use"), so more chunks give
 * the Bruck family's rounds more chances to move on.
 *
 *   xchg-bench overlap [--pattern P] [--sizes MIN:MAX] [--algos a,b]
 *                      [--iters N] [--chunks K] [--compute US]
 */
#include "overlap.h"
#include "oversubscribed.h"

#include "patterns.h"
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OV_MAX_ALGOS 64

typedef struct ov_run {
    bench_pattern pat;
    int64_t smin, smax;
    xchg_algo algos[OV_MAX_ALGOS];
    int na;
    int iters, chunks;
    double compute_us; /* <= 0: as long as the exchange */
} ov_run;

static int rank, P;

static int ov_usage(const char *why)
{
    if (rank == 0) {
        if (why)
            fprintf(stderr, "xchg-bench overlap: %s\n", why);
        fprintf(stderr,
                "usage: xchg-bench overlap [--pattern uniform|random|sparse|zipf|hot|transpose]\n"
                "         [--sizes MIN:MAX] [--algos a,b,...] [--iters N] [--chunks K]\n"
                "         [--compute US]\n"
                "Times xchg_ialltoallv + wait (exchange), a busy loop (compute) and both\n"
                "overlapped (xchg_test between compute chunks); overlap = (exchange +\n"
                "compute - both) / min(exchange, compute).\n");
    }
    return why ? 2 : 0;
}

static long parse_bytes(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v *= 1024, end++;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024, end++;
    return *end ? -1 : v;
}

#ifdef XCHG_SMPI
#include <simgrid/host.h>
#include <smpi/smpi.h>
/* In simulation: us microseconds of simulated computation on this rank. */
static void spin(double us)
{
    if (us > 0)
        smpi_execute_flops(us * 1e-6 * sg_host_get_speed(sg_host_self()));
}
#else
/* Spins for us microseconds (the "application's" computation). */
static void spin(double us)
{
    double t0 = MPI_Wtime();
    volatile double x = 0;
    while ((MPI_Wtime() - t0) * 1e6 < us)
        for (int i = 0; i < 64; i++)
            x += i * 0.5;
}
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median over iterations of the slowest rank's times t[0..n). */
static double slowest_median(double *t, int n, MPI_Comm comm)
{
    double *m = malloc(sizeof(double) * (size_t)n);
    MPI_Allreduce(t, m, n, MPI_DOUBLE, MPI_MAX, comm);
    qsort(m, (size_t)n, sizeof(double), cmp_double);
    double med = n % 2 ? m[n / 2] : 0.5 * (m[n / 2 - 1] + m[n / 2]);
    free(m);
    return med;
}

typedef struct ov_bufs {
    int *sc, *sd, *rc, *rd;
    char *sb, *rb;
} ov_bufs;

static int exchange(xchg_algo a, ov_bufs *b, MPI_Comm comm, int chunks, double chunk_us)
{
    xchg_request req = XCHG_REQUEST_NULL;
    int rc = xchg_ialltoallv_algo(a, b->sb, b->sc, b->sd, MPI_BYTE, b->rb, b->rc, b->rd,
                                  MPI_BYTE, comm, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    int flag = 0;
    for (int k = 0; k < chunks; k++) {
        spin(chunk_us);
        if (!flag && (rc = xchg_test(req, &flag)) != MPI_SUCCESS)
            break;
    }
    if (rc == MPI_SUCCESS && !flag)
        rc = xchg_wait(req);
    int frc = xchg_request_free(&req);
    return rc != MPI_SUCCESS ? rc : frc;
}

static void one(const ov_run *r, xchg_algo a, int64_t size, ov_bufs *b, MPI_Comm comm)
{
    const int n = r->iters;
    double *tx = calloc((size_t)n, sizeof(double)), *tc = calloc((size_t)n, sizeof(double)),
           *tb = calloc((size_t)n, sizeof(double));
    int err = MPI_SUCCESS;
    /* warm-up, then the exchange alone */
    err |= exchange(a, b, comm, 0, 0);
    for (int i = 0; i < n; i++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        err |= exchange(a, b, comm, 0, 0);
        tx[i] = MPI_Wtime() - t0;
    }
    double mx = slowest_median(tx, n, comm);
    double cus = r->compute_us > 0 ? r->compute_us : mx * 1e6;
    double chunk = cus / r->chunks;
    for (int i = 0; i < n; i++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int k = 0; k < r->chunks; k++)
            spin(chunk);
        tc[i] = MPI_Wtime() - t0;
        MPI_Barrier(comm);
        t0 = MPI_Wtime();
        err |= exchange(a, b, comm, r->chunks, chunk);
        tb[i] = MPI_Wtime() - t0;
    }
    double mc = slowest_median(tc, n, comm), mb = slowest_median(tb, n, comm);
    int anyerr = 0;
    MPI_Allreduce(&err, &anyerr, 1, MPI_INT, MPI_BOR, comm);
    if (rank == 0) {
        double lo = mx < mc ? mx : mc;
        if (anyerr)
            printf("%-16s %10lld  error\n", xchg_algo_name(a), (long long)size);
        else
            printf("%-16s %10lld %12.1f %12.1f %12.1f %9.0f%%\n", xchg_algo_name(a),
                   (long long)size, mx * 1e6, mc * 1e6, mb * 1e6,
                   lo > 0 ? 100.0 * (mx + mc - mb) / lo : 0.0);
    }
    free(tx);
    free(tc);
    free(tb);
}

int overlap_main(int argc, char **argv, MPI_Comm comm)
{
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    ov_run r;
    memset(&r, 0, sizeof r);
    r.pat.kind = PAT_RANDOM;
    r.pat.seed = 1;
    r.pat.density = 0.25;
    r.pat.zipf_s = 1.0;
    r.pat.hot = 1;
    r.pat.hot_fraction = 0.8;
    r.smin = 1024;
    r.smax = 65536;
    r.iters = 10;
    r.chunks = 20;
    const char *algos = "linear,scattered,pairwise,bruck_twophase,bruck_radix,hybrid,auto";
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help"))
            return ov_usage(NULL);
        if (!v)
            return ov_usage("every option takes a value");
        i++;
        if (!strcmp(o, "--pattern")) {
            r.pat.kind = bench_pattern_from_name(v);
            if (r.pat.kind == PAT_COUNT || r.pat.kind == PAT_FILE)
                return ov_usage("unknown --pattern");
        } else if (!strcmp(o, "--sizes")) {
            const char *c = strchr(v, ':');
            char lo[32];
            if (!c || (size_t)(c - v) >= sizeof lo)
                return ov_usage("--sizes needs MIN:MAX");
            memcpy(lo, v, (size_t)(c - v));
            lo[c - v] = '\0';
            r.smin = parse_bytes(lo);
            r.smax = parse_bytes(c + 1);
            if (r.smin < 1 || r.smax < r.smin)
                return ov_usage("--sizes needs 1 <= MIN <= MAX");
        } else if (!strcmp(o, "--algos")) {
            algos = v;
        } else if (!strcmp(o, "--iters")) {
            r.iters = atoi(v);
            if (r.iters < 1)
                return ov_usage("--iters needs a positive number");
        } else if (!strcmp(o, "--chunks")) {
            r.chunks = atoi(v);
            if (r.chunks < 1)
                return ov_usage("--chunks needs a positive number");
        } else if (!strcmp(o, "--compute")) {
            r.compute_us = atof(v);
        } else {
            return ov_usage("unknown option");
        }
    }
    char list[1024];
    snprintf(list, sizeof list, "%s", algos);
    for (char *t = strtok(list, ","); t && r.na < OV_MAX_ALGOS; t = strtok(NULL, ",")) {
        xchg_algo a = xchg_algo_from_name(t);
        if (a == XCHG_ALGO_INVALID)
            return ov_usage("unknown algorithm in --algos");
        r.algos[r.na++] = a;
    }
    bench_warn_oversubscribed(comm);
    if (rank == 0) {
        printf("# xchg-bench overlap, pattern %s, %d ranks, %d iterations (+1 warm-up), "
               "%d compute chunks with an xchg_test after each\n",
               bench_pattern_name(r.pat.kind), P, r.iters, r.chunks);
        printf("# median of the slowest rank, microseconds; overlap = (exchange + compute - "
               "both) / min(exchange, compute)\n");
        printf("%-16s %10s %12s %12s %12s %10s\n", "algo", "avg bytes", "exchange", "compute",
               "both", "overlap");
    }
    ov_bufs b;
    int64_t *row = malloc(sizeof(int64_t) * 2 * (size_t)P), *col = row + P;
    b.sc = malloc(sizeof(int) * 4 * (size_t)P);
    b.sd = b.sc + P;
    b.rc = b.sc + 2 * P;
    b.rd = b.sc + 3 * P;
    for (int64_t size = r.smin; size <= r.smax; size *= 2) {
        bench_layout l;
        bench_layout_init(&l, &r.pat, P, size, 1);
        bench_row_col(&l, rank, 0, row, col);
        int64_t s = 0, t = 0;
        for (int j = 0; j < P; j++) {
            b.sc[j] = (int)row[j];
            b.sd[j] = (int)s;
            b.rc[j] = (int)col[j];
            b.rd[j] = (int)t;
            s += row[j];
            t += col[j];
        }
        b.sb = malloc((size_t)s + 1);
        b.rb = malloc((size_t)t + 1);
        memset(b.sb, rank & 0xff, (size_t)s + 1);
        for (int k = 0; k < r.na; k++)
            one(&r, r.algos[k], size, &b, comm);
        free(b.sb);
        free(b.rb);
    }
    free(row);
    free(b.sc);
    return 0;
}

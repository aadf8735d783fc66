/*
 * neighbor.c - `xchg-bench neighbor`: the neighbour exchange on the graphs
 * applications have, every neighbour algorithm (and auto), blocking and
 * persistent, against MPI_Neighbor_alltoallv on the same communicator.
 *
 * Graphs (distributed graph communicators, MPI_Dist_graph_create*):
 *   stencil7, stencil27  3-D halo exchange on a periodic process grid
 *                        (MPI_Dims_create): the 6 face or the 26 face, edge
 *                        and corner neighbours (a small grid repeats some)
 *   spmv                 the x-vector exchange of a sparse matrix-vector
 *                        product: each rank owns --rows rows with --nnz
 *                        nonzeros each in uniformly random columns (rows
 *                        distributed in equal blocks); a rank receives from
 *                        the owners of the columns it references
 *   blocks               dense coupling of groups of --group consecutive
 *                        ranks (a node's, when it matches the ranks per
 *                        node): every rank sends to every rank of the
 *                        --span groups after its own, cyclically
 *   file                 a graph from a file (--file): one edge "s d" per
 *                        line, s sending a block to d ('#' starts a
 *                        comment); a rank's destinations and sources in file
 *                        order. --save FILE writes any pattern's graph so.
 * Every block carries --bytes bytes (MPI_BYTE), whatever the pattern.
 *
 * Fairness: graph and data are made before the clock starts; each
 * iteration runs every column once, in an order that gives each column
 * another predecessor each iteration (bench_turn), an MPI_Barrier
 * before each timed call; an iteration's time is the slowest rank's. The
 * persistent columns (+p) are made once before timing (init not timed)
 * and time start + wait.
 *
 * The graph is MPI's (MPI_Dist_graph_create_adjacent; the baseline column
 * "MPI" is MPI_Neighbor_alltoallv) or xchg's own
 * (xchg_dist_graph_create_adjacent, --graph xchg: no MPI column; the
 * baseline is mpich_model, the model of MPICH's MPI_Neighbor_alltoallv).
 * SimGrid SMPI (3.32 and 4.1) aborts in MPI_Dist_graph_create_adjacent
 * (sim/neighbor_check.c), so a simulation build uses xchg's graph: the
 * same algorithms on the same graph, given as arrays.
 */
#include "neighbor.h"

#include "bench_util.h"
#include "oversubscribed.h"
#include "xchg.h"

#include <stdint.h>
#include <stdio.h>

/* Open MPI's MPI_UNWEIGHTED is the address of a zero-size object, which
 * GCC's access attributes on mpi.h take for a read overflow. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
#include <stdlib.h>
#include <string.h>

#define NB_MAX_COLS 16
#define NB_BASELINE (-100)

static const char usage[] =
    "usage: xchg-bench neighbor [options]\n"
    "  The neighbour exchange (MPI_Neighbor_alltoallv) on a distributed graph:\n"
    "  every neighbour algorithm and auto, blocking and persistent (+p), against\n"
    "  MPI_Neighbor_alltoallv itself (the baseline; mpich_model with --graph xchg).\n"
    "  --pattern P        stencil7, stencil27, spmv, blocks or file (default stencil7)\n"
    "  --group N          blocks: ranks per group (default 16)\n"
    "  --span N           blocks: groups each rank sends to (default 2)\n"
    "  --file F           file: the graph, one edge \"s d\" per line (s sends to d)\n"
    "  --save F           write the pattern's graph to F in that format (rank 0)\n"
    "  --graph mpi|xchg   who makes the graph: MPI_Dist_graph_create_adjacent or\n"
    "                     xchg_dist_graph_create_adjacent (default mpi; xchg in a\n"
    "                     simulation build: SMPI cannot make MPI's)\n"
    "  --bytes N          bytes per neighbour block (default 1024)\n"
    "  --rows N           spmv: rows per rank (default 32)\n"
    "  --nnz N            spmv: nonzeros per row (default 8)\n"
    "  --iters N          timed iterations (default 100)\n"
    "  --warmup N         untimed iterations before them (default 5)\n"
    "  --seed N           spmv's matrix seed (default 1)\n"
    "  --check            compare every column's result with the baseline's first\n"
    "  --quiet            no progress line on stderr\n"
    "  --list             print the neighbour algorithms of this build and exit\n"
    "  --help             print this and exit\n";

typedef struct nb_col {
    int algo;        /* NB_BASELINE or an xchg_neighbor_algo */
    int persistent;
    xchg_request req;
    double *t;       /* iters local times */
    char label[32];
} nb_col;

typedef struct nb_run {
    const char *pattern;
    const char *file, *save;
    int *dsts;       /* this rank's destinations, in order (--save) */
    long bytes, rows, nnz, group, span;
    int iters, warmup, check, quiet;
    int xchg_graph;  /* the graph is xchg's (no MPI column) */
    unsigned long long seed;
    int P, rank;
    MPI_Comm g;      /* the graph */
    int in, out;
    int *rc, *rd, *sc, *sd;
    char *sbuf, *rbuf, *ref;
    size_t sbytes, rbytes;
    nb_col cols[NB_MAX_COLS];
    int ncols;
} nb_run;

enum { ACT_RUN, ACT_HELP, ACT_LIST };

static int parse_args(int argc, char **argv, nb_run *r)
{
    static const char *const valued[] = {"--pattern", "--bytes",  "--rows", "--nnz",
                                         "--iters",   "--warmup", "--seed", "--graph",
                                         "--file",    "--save",   "--group", "--span"};
    int act = ACT_RUN;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *val;
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
        if (!strcmp(name, "--pattern")) {
            if (strcmp(val, "stencil7") && strcmp(val, "stencil27") && strcmp(val, "spmv") &&
                strcmp(val, "blocks") && strcmp(val, "file"))
                return bench_bad("--pattern: '%s' is not stencil7, stencil27, spmv, blocks or "
                                 "file", val);
            r->pattern = val;
        } else if (!strcmp(name, "--group")) {
            if (bench_parse_long(name, val, 1, 1L << 20, &r->group))
                return -1;
        } else if (!strcmp(name, "--span")) {
            if (bench_parse_long(name, val, 1, 1L << 20, &r->span))
                return -1;
        } else if (!strcmp(name, "--file")) {
            r->file = val;
        } else if (!strcmp(name, "--save")) {
            r->save = val;
        } else if (!strcmp(name, "--graph")) {
            if (strcmp(val, "mpi") && strcmp(val, "xchg"))
                return bench_bad("--graph: '%s' is not mpi or xchg", val);
            r->xchg_graph = !strcmp(val, "xchg");
        } else if (!strcmp(name, "--bytes")) {
            if (bench_parse_long(name, val, 0, 1L << 26, &r->bytes))
                return -1;
        } else if (!strcmp(name, "--rows")) {
            if (bench_parse_long(name, val, 1, 1L << 20, &r->rows))
                return -1;
        } else if (!strcmp(name, "--nnz")) {
            if (bench_parse_long(name, val, 1, 1L << 16, &r->nnz))
                return -1;
        } else if (!strcmp(name, "--iters")) {
            if (bench_parse_long(name, val, 1, 1000000, &lv))
                return -1;
            r->iters = (int)lv;
        } else if (!strcmp(name, "--warmup")) {
            if (bench_parse_long(name, val, 0, 1000000, &lv))
                return -1;
            r->warmup = (int)lv;
        } else if (bench_parse_seed(name, val, &r->seed)) {
            return -1;
        }
    }
    return act;
}

/* ---- the graphs -------------------------------------------------------- */

/* The graph of the adjacency lists, by MPI or by xchg (--graph). */
static int make_graph(nb_run *r, MPI_Comm comm, int in, const int *src, int out,
                      const int *dst)
{
    r->in = in;
    r->out = out;
    r->dsts = malloc(sizeof(int) * (size_t)(out + 1)); /* for --save */
    if (!r->dsts)
        return MPI_ERR_NO_MEM;
    if (out)
        memcpy(r->dsts, dst, sizeof(int) * (size_t)out);
    if (r->xchg_graph)
        return xchg_dist_graph_create_adjacent(comm, in, src, MPI_UNWEIGHTED, out, dst,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &r->g);
    return MPI_Dist_graph_create_adjacent(comm, in, src, MPI_UNWEIGHTED, out, dst,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &r->g);
}

/* 3-D periodic grid neighbours: the offsets with |o| = 1 in one dimension
 * (7-point) or in any (27-point), the same list as sources and as
 * destinations (a symmetric graph). */
static int make_stencil(nb_run *r, int full, MPI_Comm comm)
{
    int dims[3] = {0, 0, 0}, c[3], nbr[26], n = 0;
    MPI_Dims_create(r->P, 3, dims);
    c[0] = r->rank / (dims[1] * dims[2]);
    c[1] = r->rank / dims[2] % dims[1];
    c[2] = r->rank % dims[2];
    for (int dx = -1; dx <= 1; dx++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dz = -1; dz <= 1; dz++) {
                int nz = (dx != 0) + (dy != 0) + (dz != 0);
                if (nz == 0 || (!full && nz != 1))
                    continue;
                int x = (c[0] + dx + dims[0]) % dims[0], y = (c[1] + dy + dims[1]) % dims[1],
                    z = (c[2] + dz + dims[2]) % dims[2];
                nbr[n++] = (x * dims[1] + y) * dims[2] + z;
            }
    /* sources in the opposite order, so that the k-th message from a
     * neighbour pairs with the block of the opposite offset */
    int src[26];
    for (int k = 0; k < n; k++)
        src[k] = nbr[n - 1 - k];
    return make_graph(r, comm, n, src, n, nbr);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* The owners of the columns this rank's rows reference (other ranks) are
 * its sources; who references its columns (its destinations) comes from
 * one MPI_Alltoall of flags. */
static int make_spmv(nb_run *r, MPI_Comm comm)
{
    const long N = (long)r->P * r->rows;
    int *flag = calloc(2 * (size_t)r->P, sizeof(int)), *told = flag ? flag + r->P : NULL;
    int *owners = malloc(sizeof(int) * (size_t)r->P), *dst = malloc(sizeof(int) * (size_t)r->P);
    int n = 0, m = 0, rc = flag && owners && dst ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (long row = 0; rc == MPI_SUCCESS && row < r->rows; row++)
        for (long k = 0; k < r->nnz; k++) {
            uint64_t h = mix(r->seed * 0x9e3779b97f4a7c15ull ^ mix((uint64_t)r->rank << 32 ^
                                                                   (uint64_t)(row * r->nnz + k)));
            int o = (int)((long)(h % (uint64_t)N) / r->rows);
            if (o != r->rank && !flag[o]) {
                flag[o] = 1;
                owners[n++] = o;
            }
        }
    if (rc == MPI_SUCCESS)
        rc = MPI_Alltoall(flag, 1, MPI_INT, told, 1, MPI_INT, comm);
    for (int p = 0; rc == MPI_SUCCESS && p < r->P; p++)
        if (told[p])
            dst[m++] = p;
    if (rc == MPI_SUCCESS)
        rc = make_graph(r, comm, n, owners, m, dst);
    free(flag);
    free(owners);
    free(dst);
    return rc;
}

/* Groups of r->group consecutive ranks (the last may be short), each
 * rank sending to every rank of the r->span groups after its own,
 * cyclically (not its own group, none twice), receiving from those
 * before it: many blocks to the ranks of few nodes when a group is a
 * node. */
static int make_blocks(nb_run *r, MPI_Comm comm)
{
    const long G = r->group, NG = (r->P + G - 1) / G, g = r->rank / G;
    const long span = r->span < NG - 1 ? r->span : NG - 1;
    int *src = malloc(sizeof(int) * (size_t)(span * G + 1));
    int *dst = malloc(sizeof(int) * (size_t)(span * G + 1));
    int in = 0, out = 0;
    for (long k = 1; src && dst && k <= span; k++) {
        long to = (g + k) % NG, from = (g - k + NG) % NG;
        for (long j = to * G; j < (to + 1) * G && j < r->P; j++)
            dst[out++] = (int)j;
        for (long j = from * G; j < (from + 1) * G && j < r->P; j++)
            src[in++] = (int)j;
    }
    int rc = src && dst ? make_graph(r, comm, in, src, out, dst) : MPI_ERR_NO_MEM;
    free(src);
    free(dst);
    return rc;
}

/* A graph from r->file: every rank reads the whole file and keeps its
 * own edges, in file order. A line that is not "s d" with both ranks of
 * the communicator fails on every rank (each reads the same file). */
static int make_from_file(nb_run *r, MPI_Comm comm)
{
    FILE *f = r->file ? fopen(r->file, "r") : NULL;
    if (!f) {
        if (r->rank == 0)
            fprintf(stderr, "xchg-bench: neighbor: %s\n",
                    r->file ? "cannot open --file" : "--pattern file needs --file");
        return MPI_ERR_ARG;
    }
    int cap = 64, in = 0, out = 0, rc = MPI_SUCCESS;
    int *src = malloc(sizeof(int) * (size_t)cap), *dst = malloc(sizeof(int) * (size_t)cap);
    char line[256];
    long lineno = 0;
    while (rc == MPI_SUCCESS && src && dst && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        int s, d, n = sscanf(line, "%d %d", &s, &d);
        if (n <= 0)
            continue; /* blank or comment */
        if (n != 2 || s < 0 || d < 0 || s >= r->P || d >= r->P) {
            if (r->rank == 0)
                fprintf(stderr, "xchg-bench: neighbor: %s line %ld is not an edge \"s d\" "
                        "between ranks 0..%d\n", r->file, lineno, r->P - 1);
            rc = MPI_ERR_ARG;
            break;
        }
        if (in == cap || out == cap) {
            cap *= 2;
            int *s2 = realloc(src, sizeof(int) * (size_t)cap);
            src = s2 ? s2 : src; /* kept for the free below */
            int *d2 = s2 ? realloc(dst, sizeof(int) * (size_t)cap) : NULL;
            dst = d2 ? d2 : dst;
            if (!s2 || !d2) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
        }
        if (d == r->rank)
            src[in++] = s;
        if (s == r->rank)
            dst[out++] = d;
    }
    fclose(f);
    if (rc == MPI_SUCCESS && (!src || !dst))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = make_graph(r, comm, in, src, out, dst);
    free(src);
    free(dst);
    return rc;
}

/* --save: every rank's destinations, gathered to rank 0, one edge a line. */
static int save_graph(nb_run *r, MPI_Comm comm)
{
    const int *dst = r->dsts;
    int *n = r->rank == 0 ? malloc(sizeof(int) * 2 * (size_t)r->P) : NULL, *at = NULL;
    int rc = dst && (r->rank != 0 || n) ? MPI_SUCCESS : MPI_ERR_NO_MEM, total = 0;
    if (rc == MPI_SUCCESS)
        rc = MPI_Gather(&r->out, 1, MPI_INT, n, 1, MPI_INT, 0, comm);
    int *all = NULL;
    if (rc == MPI_SUCCESS && r->rank == 0) {
        at = n + r->P;
        for (int p = 0; p < r->P; p++)
            at[p] = total, total += n[p];
        all = malloc(sizeof(int) * (size_t)(total + 1));
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Gatherv(dst, r->out, MPI_INT, all, n, at, MPI_INT, 0, comm);
    if (rc == MPI_SUCCESS && r->rank == 0) {
        FILE *f = fopen(r->save, "w");
        if (f) {
            fprintf(f, "# xchg-bench neighbor --pattern %s, P=%d: one edge \"s d\" per line\n",
                    r->pattern, r->P);
            for (int p = 0; p < r->P; p++)
                for (int k = 0; k < n[p]; k++)
                    fprintf(f, "%d %d\n", p, all[at[p] + k]);
            rc = fclose(f) == 0 ? MPI_SUCCESS : MPI_ERR_FILE;
        } else {
            rc = MPI_ERR_FILE;
        }
        if (rc != MPI_SUCCESS)
            fprintf(stderr, "xchg-bench: neighbor: cannot write --save %s\n", r->save);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    free(all);
    free(n);
    return rc;
}

static int make_buffers(nb_run *r)
{
    int n = r->in + r->out + 1;
    r->rc = malloc(sizeof(int) * 4 * (size_t)n);
    if (!r->rc)
        return MPI_ERR_NO_MEM;
    r->rd = r->rc + n, r->sc = r->rd + n, r->sd = r->sc + n;
    for (int i = 0; i < r->in; i++)
        r->rc[i] = (int)r->bytes, r->rd[i] = (int)(i * r->bytes);
    for (int j = 0; j < r->out; j++)
        r->sc[j] = (int)r->bytes, r->sd[j] = (int)(j * r->bytes);
    r->sbytes = (size_t)r->out * (size_t)r->bytes + 1;
    r->rbytes = (size_t)r->in * (size_t)r->bytes + 1;
    r->sbuf = malloc(r->sbytes);
    r->rbuf = malloc(r->rbytes);
    r->ref = malloc(r->rbytes);
    if (!r->sbuf || !r->rbuf || !r->ref)
        return MPI_ERR_NO_MEM;
    for (size_t b = 0; b < r->sbytes; b++)
        r->sbuf[b] = (char)(r->rank * 31 + b * 7);
    return MPI_SUCCESS;
}

/* ---- the columns ------------------------------------------------------- */

static void add_col(nb_run *r, int algo, int persistent)
{
    nb_col *c = &r->cols[r->ncols++];
    c->algo = algo;
    c->persistent = persistent;
    c->req = XCHG_REQUEST_NULL;
    snprintf(c->label, sizeof c->label, "%s%s",
             algo == NB_BASELINE ? "MPI" : xchg_neighbor_algo_name((xchg_neighbor_algo)algo),
             persistent ? "+p" : "");
}

static int call_once(nb_run *r, nb_col *c)
{
    if (c->algo == NB_BASELINE)
        return MPI_Neighbor_alltoallv(r->sbuf, r->sc, r->sd, MPI_BYTE, r->rbuf, r->rc, r->rd,
                                      MPI_BYTE, r->g);
    if (!c->persistent)
        return xchg_neighbor_alltoallv_algo((xchg_neighbor_algo)c->algo, r->sbuf, r->sc, r->sd,
                                            MPI_BYTE, r->rbuf, r->rc, r->rd, MPI_BYTE, r->g);
    int rc = xchg_start(c->req);
    return rc == MPI_SUCCESS ? xchg_wait(c->req) : rc;
}

/* Column 0 is the baseline: MPI_Neighbor_alltoallv on MPI's graph, the
 * model of MPICH's (blocking) on xchg's. */
static int setup_cols(nb_run *r)
{
    if (r->xchg_graph)
        add_col(r, XCHG_NEIGHBOR_MPICH_MODEL, 0);
    else
        add_col(r, NB_BASELINE, 0);
    for (int p = 0; p < 2; p++) {
        for (int i = 0; i < xchg_neighbor_algo_count() && r->ncols < NB_MAX_COLS - 1; i++)
            if (p || !r->xchg_graph || xchg_neighbor_algo_at(i) != XCHG_NEIGHBOR_MPICH_MODEL)
                add_col(r, xchg_neighbor_algo_at(i), p);
        add_col(r, XCHG_NEIGHBOR_AUTO, p);
    }
    for (int k = 0; k < r->ncols; k++) {
        nb_col *c = &r->cols[k];
        c->t = calloc((size_t)r->iters, sizeof(double));
        if (!c->t)
            return MPI_ERR_NO_MEM;
        if (c->persistent) {
            int rc = xchg_neighbor_alltoallv_init_algo((xchg_neighbor_algo)c->algo, r->sbuf,
                                                       r->sc, r->sd, MPI_BYTE, r->rbuf, r->rc,
                                                       r->rd, MPI_BYTE, r->g, MPI_INFO_NULL,
                                                       &c->req);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
    return MPI_SUCCESS;
}

/* Every column's result against the baseline's (1 on every rank if all equal). */
static int check_cols(nb_run *r, MPI_Comm comm)
{
    int bad = 0;
    memset(r->ref, 0x55, r->rbytes);
    memset(r->rbuf, 0x55, r->rbytes);
    int rc = call_once(r, &r->cols[0]);
    memcpy(r->ref, r->rbuf, r->rbytes);
    for (int k = 1; k < r->ncols && rc == MPI_SUCCESS; k++) {
        memset(r->rbuf, 0x55, r->rbytes);
        rc = call_once(r, &r->cols[k]);
        int differs = rc != MPI_SUCCESS || memcmp(r->ref, r->rbuf, r->rbytes) != 0, any = 0;
        MPI_Allreduce(&differs, &any, 1, MPI_INT, MPI_MAX, comm);
        if (any && r->rank == 0)
            fprintf(stderr, "xchg-bench: neighbor --check FAILED: %s differs from %s\n",
                    r->cols[k].label, r->cols[0].label);
        bad |= any;
    }
    return rc == MPI_SUCCESS && !bad;
}

static int timed(nb_run *r, MPI_Comm comm)
{
    for (int it = -r->warmup; it < r->iters; it++)
        for (int k0 = 0; k0 < r->ncols; k0++) {
            nb_col *c = &r->cols[it < 0 ? k0 : bench_turn(it, k0, r->ncols)];
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            int rc = call_once(r, c);
            double t = MPI_Wtime() - t0;
            if (rc != MPI_SUCCESS)
                return rc;
            if (it >= 0)
                c->t[it] = t;
        }
    return MPI_SUCCESS;
}

static void report(nb_run *r, MPI_Comm comm)
{
    double *mx = malloc(sizeof(double) * (size_t)r->iters);
    double med[NB_MAX_COLS];
    for (int k = 0; k < r->ncols; k++) {
        MPI_Reduce(r->cols[k].t, mx, r->iters, MPI_DOUBLE, MPI_MAX, 0, comm);
        double mn, mxx, mean;
        if (r->rank == 0)
            bench_summary(mx, r->iters, &med[k], &mn, &mxx, &mean);
    }
    free(mx);
    int deg[2] = {r->in, r->out}, maxdeg[2] = {0, 0};
    MPI_Reduce(deg, maxdeg, 2, MPI_INT, MPI_MAX, 0, comm);
    if (r->rank != 0)
        return;
    printf("# xchg-bench neighbor: pattern %s, P=%d, %ld bytes per block, most neighbours "
           "%d in / %d out, %s graph; median of %d iterations, slowest rank, us\n", r->pattern,
           r->P, r->bytes, maxdeg[0], maxdeg[1], r->xchg_graph ? "xchg's" : "MPI's", r->iters);
    int best = 1;
    for (int k = 0; k < r->ncols; k++) {
        printf("%-14s %10.2f\n", r->cols[k].label, med[k] * 1e6);
        if (k > 0 && med[k] < med[best])
            best = k;
    }
    printf("# best: %s, %.2fx %s\n", r->cols[best].label,
           med[best] > 0 ? med[0] / med[best] : 0.0, r->cols[0].label);
}

int neighbor_main(int argc, char **argv, MPI_Comm comm)
{
    static nb_run run;
    nb_run *r = &run;
    r->pattern = "stencil7";
    r->bytes = 1024;
    r->rows = 32;
    r->nnz = 8;
    r->group = 16;
    r->span = 2;
    r->iters = 100;
    r->warmup = 5;
    r->seed = 1;
    r->g = MPI_COMM_NULL;
#ifdef XCHG_SMPI
    r->xchg_graph = 1; /* SMPI cannot make MPI's graph */
#endif
    MPI_Comm_size(comm, &r->P);
    MPI_Comm_rank(comm, &r->rank);
    int act = parse_args(argc, argv, r);
    if (act < 0) {
        if (r->rank == 0)
            fprintf(stderr, "xchg-bench: neighbor: %s (xchg-bench neighbor --help for usage)\n",
                    bench_opt_error);
        return 2;
    }
    if (act == ACT_HELP) {
        if (r->rank == 0)
            fputs(usage, stdout);
        return 0;
    }
    if (act == ACT_LIST) {
        for (int i = 0; r->rank == 0 && i < xchg_neighbor_algo_count(); i++)
            printf("%s\n", xchg_neighbor_algo_name(xchg_neighbor_algo_at(i)));
        return 0;
    }
    bench_warn_oversubscribed(comm);
    int rc = !strcmp(r->pattern, "spmv")   ? make_spmv(r, comm)
             : !strcmp(r->pattern, "file") ? make_from_file(r, comm)
             : !strcmp(r->pattern, "blocks") ? make_blocks(r, comm)
                                           : make_stencil(r, !strcmp(r->pattern, "stencil27"),
                                                          comm);
    if (rc == MPI_SUCCESS && r->save)
        rc = save_graph(r, comm);
    if (rc == MPI_SUCCESS)
        MPI_Comm_set_errhandler(r->g, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = make_buffers(r);
    if (rc == MPI_SUCCESS)
        rc = setup_cols(r);
    int ok = rc == MPI_SUCCESS;
    if (ok && r->check)
        ok = check_cols(r, comm);
    if (ok && r->rank == 0 && !r->quiet)
        fprintf(stderr, "xchg-bench neighbor: timing %d columns\n", r->ncols);
    if (ok)
        ok = timed(r, comm) == MPI_SUCCESS;
    if (ok)
        report(r, comm);
    else if (r->rank == 0)
        fprintf(stderr, "xchg-bench: neighbor: failed (rc %d)\n", rc);
    for (int k = 0; k < r->ncols; k++) {
        if (r->cols[k].req)
            xchg_request_free(&r->cols[k].req);
        free(r->cols[k].t);
    }
    if (r->g != MPI_COMM_NULL)
        MPI_Comm_free(&r->g);
    free(r->rc);
    free(r->dsts);
    free(r->sbuf);
    free(r->rbuf);
    free(r->ref);
    return ok ? 0 : 1;
}

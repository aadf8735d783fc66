/*
 * test_neighbor.c - the neighbour exchange (xchg_neighbor_alltoallv, _algo,
 * _init, ineighbor) against MPI_Neighbor_alltoallv, byte for byte.
 *
 * Topologies: random distributed graphs made with
 * MPI_Dist_graph_create_adjacent from one global edge list (asymmetric,
 * self-loops, repeated edges with different counts, ranks without
 * neighbours, weights given or MPI_UNWEIGHTED), the same through
 * MPI_Dist_graph_create, Cartesian grids of 1 to 3 dimensions periodic and
 * not (a dimension of size 1 or 2 makes a rank its own or a double
 * neighbour), and a graph (MPI_Graph_create). Types: MPI_INT on both
 * sides, MPI_INT against a non-contiguous vector of the same signature
 * each way; counts random, all zero, with gaps between blocks. Each case
 * runs every algorithm of the registry and auto: blocking, twice
 * (repeated calls), nonblocking (two outstanding, completed in reverse
 * order), and persistent, started three times with new send contents;
 * the receive buffer is compared whole, so bytes outside the blocks must
 * survive. Then the errors: a communicator without topology, a negative
 * count, a NULL or uncommitted type, MPI_IN_PLACE, an unknown algorithm,
 * one rank's bad count at a communicator's first call and at init (agreed:
 * every rank the same class), each message naming the argument.
 *
 * Usage: test_neighbor [algo ...] (default: every algorithm and auto).
 */
#include "xchg.h"

#include <stdlib.h>
#include <string.h>
#define CHECK_RANK world_rank
#include "check.h"

/* Open MPI's MPI_UNWEIGHTED is the address of a zero-size object, which
 * GCC's access attributes on mpi.h take for a read overflow. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif

static int npass, nfail, world_rank, world_size;

/* A case: the communicator, its neighbours (read back from MPI), counts in
 * ints per block, and the type mode. */
typedef struct tcase {
    const char *name;
    MPI_Comm comm;
    int indeg, outdeg;
    int *sources, *dests;
    int *sunits, *runits;   /* ints per block */
    int mode;               /* 0 int/int, 1 int/vector, 2 vector/int */
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype stype, rtype;
    size_t sbytes, rbytes;
    int degenerate;         /* Cartesian with a periodic dimension of size 1 or 2 */
    int twin;               /* xchg runs on xcomm, the same graph made by
                               xchg_dist_graph_create_adjacent; MPI on comm */
    MPI_Comm xcomm;
} tcase;

/* The communicator the xchg calls of case c run on. */
static MPI_Comm xc(const tcase *c)
{
    return c->twin ? c->xcomm : c->comm;
}

static MPI_Datatype vec2; /* 2 ints, stride 2, extent 4 ints: non-contiguous */

/* Deterministic pseudo-random numbers, the same sequence on every rank. */
static unsigned long long rng_state;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)((rng_state >> 33) % (n ? n : 1));
}

/* Counts and displacements of one side from units (ints per block). */
static size_t layout(int n, const int units[], int vector_side, int counts[], int displs[])
{
    MPI_Aint lb, extent;
    MPI_Datatype t = vector_side ? vec2 : MPI_INT;
    MPI_Type_get_extent(t, &lb, &extent);
    int d = 0;
    for (int i = 0; i < n; i++) {
        counts[i] = vector_side ? units[i] / 2 : units[i];
        d += (int)rnd(3); /* a gap */
        displs[i] = d;
        d += counts[i];
    }
    return (size_t)(d + 1) * (size_t)extent + 16;
}

static void case_layout(tcase *c)
{
    /* vector modes need even units: doubled */
    if (c->mode)
        for (int i = 0; i < c->outdeg; i++)
            c->sunits[i] *= 2;
    if (c->mode)
        for (int i = 0; i < c->indeg; i++)
            c->runits[i] *= 2;
    c->stype = c->mode == 2 ? vec2 : MPI_INT;
    c->rtype = c->mode == 1 ? vec2 : MPI_INT;
    c->sbytes = layout(c->outdeg, c->sunits, c->mode == 2, c->scounts, c->sdispls);
    c->rbytes = layout(c->indeg, c->runits, c->mode == 1, c->rcounts, c->rdispls);
}

static void case_alloc(tcase *c, int indeg, int outdeg)
{
    c->indeg = indeg;
    c->outdeg = outdeg;
    int n = indeg + outdeg + 1;
    c->sources = calloc((size_t)n, sizeof(int));
    c->dests = c->sources + indeg;
    c->runits = calloc((size_t)n, sizeof(int));
    c->sunits = c->runits + indeg;
    c->rcounts = calloc((size_t)n, sizeof(int));
    c->scounts = c->rcounts + indeg;
    c->rdispls = calloc((size_t)n, sizeof(int));
    c->sdispls = c->rdispls + indeg;
}

static void case_free(tcase *c)
{
    free(c->sources);
    free(c->runits);
    free(c->rcounts);
    free(c->rdispls);
    if (c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
    if (c->twin && c->xcomm != MPI_COMM_NULL)
        MPI_Comm_free(&c->xcomm);
}

/* Units of a block as a function of its sender and a key (Cartesian: the
 * dimension), so that both sides agree whatever the pairing of a double
 * neighbour. zero: all counts 0. */
static int units_of(int sender, int key, unsigned salt, int zero)
{
    return zero ? 0 : (int)((sender * 7u + key * 3u + salt) % 5u);
}

/* Neighbours read from MPI (the test's own reading). */
static void read_neighbours(tcase *c, unsigned salt, int zero)
{
    int topo = MPI_UNDEFINED, me;
    MPI_Comm_rank(c->comm, &me);
    MPI_Topo_test(c->comm, &topo);
    if (topo == MPI_DIST_GRAPH) {
        int in, out, w;
        MPI_Dist_graph_neighbors_count(c->comm, &in, &out, &w);
        case_alloc(c, in, out);
        int *wts = malloc(sizeof(int) * (size_t)(in + out + 1));
        MPI_Dist_graph_neighbors(c->comm, in, c->sources, w ? wts : MPI_UNWEIGHTED, out,
                                 c->dests, w ? wts + in : MPI_UNWEIGHTED);
        free(wts);
        for (int i = 0; i < in; i++)
            c->runits[i] = units_of(c->sources[i], me, salt, zero);
        for (int j = 0; j < out; j++)
            c->sunits[j] = units_of(me, c->dests[j], salt, zero);
    } else if (topo == MPI_CART) {
        int nd;
        MPI_Cartdim_get(c->comm, &nd);
        case_alloc(c, 2 * nd, 2 * nd);
        for (int d = 0; d < nd; d++) {
            MPI_Cart_shift(c->comm, d, 1, &c->sources[2 * d], &c->sources[2 * d + 1]);
            for (int k = 0; k < 2; k++) {
                c->dests[2 * d + k] = c->sources[2 * d + k];
                int s = c->sources[2 * d + k];
                c->runits[2 * d + k] = units_of(s == MPI_PROC_NULL ? 0 : s, d, salt, zero);
                c->sunits[2 * d + k] = units_of(me, d, salt, zero);
            }
        }
    } else { /* MPI_GRAPH */
        int n;
        MPI_Graph_neighbors_count(c->comm, me, &n);
        case_alloc(c, n, n);
        MPI_Graph_neighbors(c->comm, me, n, c->sources);
        for (int i = 0; i < n; i++) {
            c->dests[i] = c->sources[i];
            c->runits[i] = units_of(c->sources[i], 0, salt, zero);
            c->sunits[i] = units_of(me, 0, salt, zero);
        }
    }
}

/* A random graph as one global edge list (the same on every rank), made
 * with MPI_Dist_graph_create_adjacent: each rank's sources and
 * destinations in edge order, so the k-th edge s->r pairs with the k-th. */
static void make_adjacent(tcase *c, int nedges, int weighted, int zero)
{
    int P = world_size, me = world_rank;
    int *es = malloc(sizeof(int) * 3 * (size_t)(nedges + 1)), *ed = es + nedges + 1,
        *eu = ed + nedges + 1;
    int quiet = (int)rnd((unsigned)P); /* a rank with no neighbours at all (P > 2) */
    int in = 0, out = 0;
    for (int e = 0; e < nedges; e++) {
        es[e] = (int)rnd((unsigned)P);
        ed[e] = rnd(5) == 0 ? es[e] : (int)rnd((unsigned)P); /* self-loops */
        if (P > 2 && (es[e] == quiet || ed[e] == quiet))
            es[e] = ed[e] = (quiet + 1) % P;
        if (e > 0 && rnd(4) == 0) { /* a repeated edge */
            es[e] = es[e - 1];
            ed[e] = ed[e - 1];
        }
        eu[e] = zero ? 0 : (int)rnd(6);
        in += ed[e] == me;
        out += es[e] == me;
    }
    case_alloc(c, in, out);
    int *sw = malloc(sizeof(int) * (size_t)(in + out + 2)), *dw = sw + in + 1;
    in = out = 0;
    for (int e = 0; e < nedges; e++) {
        if (ed[e] == me) {
            sw[in] = (int)rnd(9) + 1;
            c->runits[in] = eu[e];
            c->sources[in++] = es[e];
        }
        if (es[e] == me) {
            dw[out] = 1;
            c->sunits[out] = eu[e];
            c->dests[out++] = ed[e];
        }
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, c->sources,
                                   weighted ? sw : MPI_UNWEIGHTED, out, c->dests,
                                   weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c->comm);
    free(sw);
    free(es);
}

/* Every rank to every rank twice (the self-loop too), as adjacent lists:
 * many blocks to the ranks of each other node, where locality aggregates
 * and auto's model prefers it (XCHG_RANKS_PER_NODE > 1). */
static void make_complete(tcase *c)
{
    int P = world_size, n = 2 * P;
    case_alloc(c, n, n);
    for (int k = 0; k < n; k++) {
        c->sources[k] = c->dests[k] = k % P;
        c->runits[k] = (int)((c->sources[k] * 3u + world_rank * 5u + (unsigned)k / P) % 4u);
        c->sunits[k] = (int)((world_rank * 3u + c->dests[k] * 5u + (unsigned)k / P) % 4u);
    }
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, c->sources, MPI_UNWEIGHTED, n, c->dests,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c->comm);
}

/* The same kind of graph through MPI_Dist_graph_create: each rank gives
 * its own out-edges; MPI orders the neighbours, read back. */
static void make_dist_create(tcase *c, unsigned salt)
{
    int P = world_size, me = world_rank;
    int n = (int)((me * 5u + salt) % 4u), dest[4];
    for (int i = 0; i < n; i++)
        dest[i] = (int)((me + 1u + i * 3u + salt) % (unsigned)P);
    MPI_Dist_graph_create(MPI_COMM_WORLD, n ? 1 : 0, &me, &n, dest, MPI_UNWEIGHTED,
                          MPI_INFO_NULL, 0, &c->comm);
    read_neighbours(c, salt, 0);
}

static void make_cart(tcase *c, int ndims, int periodic_mask, unsigned salt, int zero)
{
    int dims[3] = {0, 0, 0}, periods[3];
    MPI_Dims_create(world_size, ndims, dims);
    for (int d = 0; d < ndims; d++)
        periods[d] = (periodic_mask >> d) & 1;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &c->comm);
    static char names[64][80];
    static int nnames;
    char *name = names[nnames++ % 64];
    snprintf(name, 80, "cart %d x %d x %d periodic %d%d%d%s", dims[0], ndims > 1 ? dims[1] : 1,
             ndims > 2 ? dims[2] : 1, periods[0], ndims > 1 && periods[1],
             ndims > 2 && periods[2], zero ? " all-zero counts" : "");
    c->name = name;
    for (int d = 0; d < ndims; d++)
        c->degenerate |= periods[d] && dims[d] <= 2;
    read_neighbours(c, salt, zero);
}

static void make_graph(tcase *c, unsigned salt)
{
    /* a symmetric ring with a chord, neighbours listed per rank */
    int P = world_size;
    int *index = malloc(sizeof(int) * (size_t)P), *edges = malloc(sizeof(int) * 4 * (size_t)P);
    int ne = 0;
    for (int r = 0; r < P; r++) {
        if (P > 1) {
            edges[ne++] = (r + 1) % P;
            edges[ne++] = (r + P - 1) % P;
        }
        index[r] = ne;
    }
    MPI_Graph_create(MPI_COMM_WORLD, P, index, edges, 0, &c->comm);
    free(index);
    free(edges);
    read_neighbours(c, salt, 0);
}

static void fill_send(void *buf, size_t bytes, int iter)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < bytes; i++)
        b[i] = (unsigned char)(world_rank * 131 + i * 7 + iter * 29 + 1);
}

/* The standard's rule for Cartesian communicators (MPI-4.1 section 8.6,
 * the MPI-3.1 errata of mpi-forum/mpi-issues#153): the sender's block j
 * lands in the receiver's block j ^ 1, in every dimension, also where both
 * neighbours of a dimension are one rank. By point-to-point, one tag per
 * direction. */
static void reference_cart(const tcase *c, const void *sbuf, void *rbuf)
{
    MPI_Aint lb, sext, rext;
    MPI_Type_get_extent(c->stype, &lb, &sext);
    MPI_Type_get_extent(c->rtype, &lb, &rext);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(c->indeg + c->outdeg + 1));
    int n = 0;
    for (int i = 0; i < c->indeg; i++)
        MPI_Irecv((char *)rbuf + c->rdispls[i] * rext, c->rcounts[i], c->rtype, c->sources[i],
                  1000 + ((i & 1) ^ 1), c->comm, &req[n++]);
    for (int j = 0; j < c->outdeg; j++)
        MPI_Isend((const char *)sbuf + c->sdispls[j] * sext, c->scounts[j], c->stype,
                  c->dests[j], 1000 + (j & 1), c->comm, &req[n++]);
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    free(req);
}

/* MPI_Neighbor_alltoallv's result, or on a degenerate Cartesian grid the
 * standard's (which Open MPI 4.1's blocking call gives, checked here, and
 * MPICH 4.0's does not: it pairs a double neighbour's blocks by order). */
static int reference(const tcase *c, const void *sbuf, void *rbuf)
{
    memset(rbuf, 0xEE, c->rbytes);
    int rc = MPI_Neighbor_alltoallv(sbuf, c->scounts, c->sdispls, c->stype, rbuf, c->rcounts,
                                    c->rdispls, c->rtype, c->comm);
    if (!c->degenerate)
        return rc;
    char *std = malloc(c->rbytes);
    memset(std, 0xEE, c->rbytes);
    reference_cart(c, sbuf, std);
#ifndef MPICH_VERSION
    CHECK_ALL(memcmp(std, rbuf, c->rbytes) == 0, "%s: the test's reference of the standard's "
              "rule differs from Open MPI's MPI_Neighbor_alltoallv", c->name);
#endif
    memcpy(rbuf, std, c->rbytes);
    free(std);
    return rc;
}

static void compare(const tcase *c, const char *what, xchg_neighbor_algo a, int rc,
                    const void *got, const void *want)
{
    int same = rc == MPI_SUCCESS && memcmp(got, want, c->rbytes) == 0;
    CHECK_ALL(same, "%s %s %s: rc %d, result %s MPI_Neighbor_alltoallv's", c->name,
              xchg_neighbor_algo_name(a), what, rc, same ? "equals" : "differs from");
}

/* Every form of one algorithm on case c. */
static void run_algo(const tcase *c, xchg_neighbor_algo a, int plain)
{
    char *sbuf = malloc(c->sbytes), *ref = malloc(c->rbytes), *got = malloc(c->rbytes),
         *got2 = malloc(c->rbytes);
    fill_send(sbuf, c->sbytes, 0);
    reference(c, sbuf, ref);
    for (int rep = 0; rep < 2; rep++) { /* repeated calls */
        memset(got, 0xEE, c->rbytes);
        int rc = plain ? xchg_neighbor_alltoallv(sbuf, c->scounts, c->sdispls, c->stype, got,
                                                 c->rcounts, c->rdispls, c->rtype, xc(c))
                       : xchg_neighbor_alltoallv_algo(a, sbuf, c->scounts, c->sdispls,
                                                      c->stype, got, c->rcounts, c->rdispls,
                                                      c->rtype, xc(c));
        compare(c, rep ? "blocking again" : "blocking", a, rc, got, ref);
    }
#if XCHG_HAVE_LARGE_COUNT
    { /* the large-count form, values that fit: exactly the int call */
        int n = c->indeg + c->outdeg + 1;
        MPI_Count *cc = malloc(sizeof(MPI_Count) * (size_t)n);
        MPI_Aint *dd = malloc(sizeof(MPI_Aint) * (size_t)n);
        for (int j = 0; j < c->outdeg; j++)
            cc[c->indeg + j] = c->scounts[j], dd[c->indeg + j] = c->sdispls[j];
        for (int i = 0; i < c->indeg; i++)
            cc[i] = c->rcounts[i], dd[i] = c->rdispls[i];
        memset(got, 0xEE, c->rbytes);
        int rc = plain ? xchg_neighbor_alltoallv_c(sbuf, cc + c->indeg, dd + c->indeg, c->stype,
                                                   got, cc, dd, c->rtype, xc(c))
                       : xchg_neighbor_alltoallv_algo_c(a, sbuf, cc + c->indeg, dd + c->indeg,
                                                        c->stype, got, cc, dd, c->rtype,
                                                        xc(c));
        compare(c, "large-count", a, rc, got, ref);
        /* nonblocking and persistent large-count forms, values that fit */
        xchg_request lr;
        memset(got, 0xEE, c->rbytes);
        rc = plain ? xchg_ineighbor_alltoallv_c(sbuf, cc + c->indeg, dd + c->indeg, c->stype,
                                                got, cc, dd, c->rtype, xc(c), &lr)
                   : xchg_ineighbor_alltoallv_algo_c(a, sbuf, cc + c->indeg, dd + c->indeg,
                                                     c->stype, got, cc, dd, c->rtype, xc(c),
                                                     &lr);
        if (rc == MPI_SUCCESS)
            rc = xchg_wait(lr);
        compare(c, "large-count nonblocking", a, rc, got, ref);
        if (lr)
            xchg_request_free(&lr);
        rc = plain ? xchg_neighbor_alltoallv_init_c(sbuf, cc + c->indeg, dd + c->indeg, c->stype,
                                                    got, cc, dd, c->rtype, xc(c), MPI_INFO_NULL,
                                                    &lr)
                   : xchg_neighbor_alltoallv_init_algo_c(a, sbuf, cc + c->indeg,
                                                         dd + c->indeg, c->stype, got, cc, dd,
                                                         c->rtype, xc(c), MPI_INFO_NULL, &lr);
        for (int it = 0; it < 2 && rc == MPI_SUCCESS; it++) {
            memset(got, 0xEE, c->rbytes);
            rc = xchg_start(lr);
            if (rc == MPI_SUCCESS)
                rc = xchg_wait(lr);
            compare(c, "large-count persistent", a, rc, got, ref);
        }
        CHECK_ALL(rc == MPI_SUCCESS, "%s %s large-count init: rc %d", c->name,
                  xchg_neighbor_algo_name(a), rc);
        if (lr)
            xchg_request_free(&lr);
        free(cc);
        free(dd);
    }
#endif
    xchg_stats st;
    xchg_get_stats(xc(c), &st);
    int csize;
    MPI_Comm_size(xc(c), &csize);
    /* locality_shm runs locality where no window is made: one rank, or
     * Open MPI told to leave out its shared-memory windows */
    const char *osc = getenv("OMPI_MCA_osc");
    if (a == XCHG_NEIGHBOR_LOCALITY_SHM && st.neighbor_algo == XCHG_NEIGHBOR_LOCALITY &&
        (csize == 1 || (osc && !strstr(osc, "sm"))))
        st.neighbor_algo = XCHG_NEIGHBOR_LOCALITY_SHM;
    CHECK(st.neighbor_algo > 0 && (a == XCHG_NEIGHBOR_AUTO || st.neighbor_algo == (int)a),
          "%s %s: stats say neighbor_algo %d", c->name, xchg_neighbor_algo_name(a),
          st.neighbor_algo);
    const char *forced = getenv("XCHG_NEIGHBOR_ALGO");
    if (plain && forced && *forced && strcmp(forced, "auto") != 0)
        CHECK(st.neighbor_algo == (int)xchg_neighbor_algo_from_name(forced),
              "%s: XCHG_NEIGHBOR_ALGO=%s, but %d ran", c->name, forced, st.neighbor_algo);

    /* nonblocking: two outstanding, completed in reverse order */
    xchg_request r1, r2;
    memset(got, 0xEE, c->rbytes);
    memset(got2, 0xEE, c->rbytes);
    int rc1 = xchg_ineighbor_alltoallv_algo(a, sbuf, c->scounts, c->sdispls, c->stype, got,
                                            c->rcounts, c->rdispls, c->rtype, xc(c), &r1);
    int rc2 = xchg_ineighbor_alltoallv_algo(a, sbuf, c->scounts, c->sdispls, c->stype, got2,
                                            c->rcounts, c->rdispls, c->rtype, xc(c), &r2);
    if (rc2 == MPI_SUCCESS)
        rc2 = xchg_wait(r2);
    if (rc1 == MPI_SUCCESS)
        rc1 = xchg_wait(r1);
    compare(c, "nonblocking (first)", a, rc1, got, ref);
    compare(c, "nonblocking (second)", a, rc2, got2, ref);
    if (r1)
        xchg_request_free(&r1);
    if (r2)
        xchg_request_free(&r2);

    /* persistent: three starts with new contents (the arrays given to init
     * are scribbled over after it: the request keeps its own) */
    xchg_request p;
    int *arrays = malloc(sizeof(int) * 2 * (size_t)(c->indeg + c->outdeg + 1));
    int *sc = arrays, *sd = sc + c->outdeg, *rcn = sd + c->outdeg, *rd = rcn + c->indeg;
    memcpy(sc, c->scounts, sizeof(int) * (size_t)c->outdeg);
    memcpy(sd, c->sdispls, sizeof(int) * (size_t)c->outdeg);
    memcpy(rcn, c->rcounts, sizeof(int) * (size_t)c->indeg);
    memcpy(rd, c->rdispls, sizeof(int) * (size_t)c->indeg);
    memset(got, 0xEE, c->rbytes);
    int rc = plain ? xchg_neighbor_alltoallv_init(sbuf, sc, sd, c->stype, got, rcn, rd,
                                                  c->rtype, xc(c), MPI_INFO_NULL, &p)
                   : xchg_neighbor_alltoallv_init_algo(a, sbuf, sc, sd, c->stype, got, rcn, rd,
                                                       c->rtype, xc(c), MPI_INFO_NULL, &p);
    memset(arrays, 0x7f, sizeof(int) * 2 * (size_t)(c->indeg + c->outdeg + 1));
    CHECK_ALL(rc == MPI_SUCCESS, "%s %s init: rc %d", c->name, xchg_neighbor_algo_name(a), rc);
    if (rc == MPI_SUCCESS) {
        CHECK(xchg_request_neighbor_algo(p) > 0 &&
                  (a == XCHG_NEIGHBOR_AUTO || xchg_request_neighbor_algo(p) == a),
              "%s: the request runs %d", c->name, (int)xchg_request_neighbor_algo(p));
        for (int it = 1; it <= 3; it++) {
            fill_send(sbuf, c->sbytes, it);
            reference(c, sbuf, ref);
            memset(got, 0xEE, c->rbytes);
            rc = xchg_start(p);
            if (rc == MPI_SUCCESS && it == 2) { /* poll once with xchg_test */
                int flag = 0;
                rc = xchg_test(p, &flag);
                if (rc == MPI_SUCCESS && !flag)
                    rc = xchg_wait(p);
            } else if (rc == MPI_SUCCESS) {
                rc = xchg_wait(p);
            }
            compare(c, "persistent start", a, rc, got, ref);
        }
        xchg_request_free(&p);
        CHECK(p == XCHG_REQUEST_NULL, "request_free leaves the request NULL");
    }
    free(arrays);
    free(sbuf);
    free(ref);
    free(got);
    free(got2);
}

static int nalgos;
static xchg_neighbor_algo algos[16];
static int plain_auto = 1;

static void run_case(tcase *c)
{
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    if (c->twin) { /* MPI's neighbours as xchg's own graph */
        int rc = xchg_dist_graph_create_adjacent(MPI_COMM_WORLD, c->indeg, c->sources,
                                                 MPI_UNWEIGHTED, c->outdeg, c->dests,
                                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c->xcomm);
        CHECK_ALL(rc == MPI_SUCCESS, "%s: xchg_dist_graph_create_adjacent rc %d", c->name, rc);
        int topo = 0;
        MPI_Topo_test(c->xcomm, &topo);
        CHECK(topo == MPI_UNDEFINED, "%s: xchg's graph communicator has MPI topology %d",
              c->name, topo);
        MPI_Comm_set_errhandler(c->xcomm, MPI_ERRORS_RETURN);
    }
    case_layout(c);
    for (int i = 0; i < nalgos; i++)
        run_algo(c, algos[i], 0);
    if (plain_auto)
        run_algo(c, XCHG_NEIGHBOR_AUTO, 1);
    case_free(c);
}

static void all_cases(void)
{
    for (int mode = 0; mode < 3; mode++) {
        for (int k = 0; k < 3; k++) {
            tcase c = {.name = "dist_graph_adjacent", .mode = mode};
            rng_state = 1000u + (unsigned)(mode * 10 + k);
            make_adjacent(&c, 2 * world_size + k * 3, k == 1, 0);
            run_case(&c);
        }
        tcase z = {.name = "dist_graph_adjacent all-zero counts", .mode = mode};
        rng_state = 77u + (unsigned)mode;
        make_adjacent(&z, 2 * world_size, 0, 1);
        run_case(&z);
        tcase e = {.name = "dist_graph_adjacent no edges", .mode = mode};
        make_adjacent(&e, 0, 0, 0);
        run_case(&e);
        tcase all = {.name = "dist_graph complete, every edge twice", .mode = mode};
        rng_state = 11u + (unsigned)mode;
        make_complete(&all);
        run_case(&all);
        tcase d = {.name = "dist_graph_create", .mode = mode};
        rng_state = 5u + (unsigned)mode;
        make_dist_create(&d, (unsigned)mode);
        run_case(&d);
        for (int nd = 1; nd <= 3; nd++)
            for (int per = 0; per < (1 << nd); per += (nd == 3 ? 3 : 1)) {
                tcase t = {.name = "cart", .mode = mode};
                rng_state = 300u + (unsigned)(nd * 10 + per);
                make_cart(&t, nd, per, (unsigned)(nd + per), 0);
                run_case(&t);
            }
        tcase cz = {.name = "cart all-zero counts", .mode = mode};
        make_cart(&cz, 2, 1, 0, 1);
        run_case(&cz);
        /* the same graphs as xchg's own (xchg_dist_graph_create_adjacent) */
        tcase xa = {.name = "xchg graph, random", .mode = mode, .twin = 1};
        rng_state = 2000u + (unsigned)mode;
        make_adjacent(&xa, 2 * world_size + 4, mode == 1, 0);
        run_case(&xa);
        if (mode == 1) {
            tcase xz = {.name = "xchg graph, all-zero counts", .mode = mode, .twin = 1};
            rng_state = 78u;
            make_adjacent(&xz, 2 * world_size, 0, 1);
            run_case(&xz);
            tcase xall = {.name = "xchg graph, complete twice", .mode = mode, .twin = 1};
            rng_state = 12u;
            make_complete(&xall);
            run_case(&xall);
            tcase xd = {.name = "xchg graph, from dist_graph_create", .mode = mode, .twin = 1};
            make_dist_create(&xd, 7u);
            run_case(&xd);
        }
        tcase g = {.name = "graph", .mode = mode};
        rng_state = 9u;
        make_graph(&g, (unsigned)mode);
        run_case(&g);
    }
}

/* ---- errors ---- */

static void expect_error(int rc, int cls, const char *what, const char *needle)
{
    int got = MPI_SUCCESS, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &got);
        xchg_error_string(rc, msg, &len);
    }
    CHECK_ALL(got == cls, "%s: error class %d, expected %d (%s)", what, got, cls, msg);
    if (needle)
        CHECK(strstr(msg, needle) != NULL, "%s: message \"%s\" does not name \"%s\"", what, msg,
              needle);
}

/* A ring (each rank sends 1 int to the next) as a distributed graph. */
static MPI_Comm ring(void)
{
    int P = world_size, src = (world_rank + P - 1) % P, dst = (world_rank + 1) % P;
    MPI_Comm c;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

/* A block larger than its receive on every rank of a ring (2 ints sent,
 * 1 expected), each algorithm on its own communicator after a first good
 * call: every rank returns MPI_ERR_TRUNCATE and none hangs (ctest's
 * timeout); the node's blocks, forwards through a partner, or the node
 * window, as XCHG_RANKS_PER_NODE puts the ring's neighbours. From 2 ranks:
 * on one, the ring is a self-message, which Open MPI 4.1 (ob1, btl self)
 * truncates into a pre-posted receive without an error. */
static void truncation(void)
{
    if (world_size < 2)
        return;
    int sbuf[2] = {world_rank, world_rank}, rbuf[2] = {-1, -1}, one = 1, two = 2, zero = 0;
    for (int k = 0; k < nalgos; k++) {
        const char *name = xchg_neighbor_algo_name(algos[k]);
        MPI_Comm r = ring();
        int rc = xchg_neighbor_alltoallv_algo(algos[k], sbuf, &one, &zero, MPI_INT, rbuf, &one,
                                              &zero, MPI_INT, r);
        CHECK_ALL(rc == MPI_SUCCESS, "%s on a new ring: rc %d", name, rc);
        rc = xchg_neighbor_alltoallv_algo(algos[k], sbuf, &two, &zero, MPI_INT, rbuf, &one,
                                          &zero, MPI_INT, r);
        char what[96];
        snprintf(what, sizeof what, "%s: 2 ints into a receive of 1", name);
        expect_error(rc, MPI_ERR_TRUNCATE, what, NULL);
        MPI_Comm_free(&r);
    }
}

/* xchg_dist_graph_create_adjacent's checks: every rank fails alike. */
static void graph_errors(void)
{
    MPI_Comm w, g = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    const int P = world_size, me = world_rank, last = world_size - 1;
    int next = (me + 1) % P, prev = (me + P - 1) % P;
    /* a ring every rank sends along but none receives from */
    int rc = xchg_dist_graph_create_adjacent(w, 0, NULL, MPI_UNWEIGHTED, 1, &next,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    expect_error(rc, MPI_ERR_TOPOLOGY, "graph: edges without their receives", "inconsistent");
    CHECK(g == MPI_COMM_NULL, "graph: a failed create leaves MPI_COMM_NULL");
    /* one rank lists its source twice */
    int two[2] = {prev, prev};
    rc = xchg_dist_graph_create_adjacent(w, me == last ? 2 : 1, me == last ? two : &prev,
                                         MPI_UNWEIGHTED, 1, &next, MPI_UNWEIGHTED,
                                         MPI_INFO_NULL, 0, &g);
    expect_error(rc, MPI_ERR_TOPOLOGY, "graph: one rank's extra source",
                 me == last ? "inconsistent" : NULL);
    /* one rank names a rank outside the communicator */
    int out = me == last ? P : next;
    rc = xchg_dist_graph_create_adjacent(w, 1, &prev, MPI_UNWEIGHTED, 1, &out, MPI_UNWEIGHTED,
                                         MPI_INFO_NULL, 0, &g);
    expect_error(rc, MPI_ERR_RANK, "graph: a destination outside comm_old",
                 me == last ? "destinations[0]" : NULL);
    rc = xchg_dist_graph_create_adjacent(w, me == last ? -1 : 1, &prev, MPI_UNWEIGHTED, 1,
                                         &next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    expect_error(rc, MPI_ERR_ARG, "graph: a negative indegree",
                 me == last ? "indegree" : NULL);
    rc = xchg_dist_graph_create_adjacent(w, 1, &prev, MPI_UNWEIGHTED, 1, &next, MPI_UNWEIGHTED,
                                         MPI_INFO_NULL, 0, me == last ? NULL : &g);
    expect_error(rc, MPI_ERR_ARG, "graph: comm_dist_graph NULL on one rank",
                 me == last ? "comm_dist_graph" : NULL);
    if (g != MPI_COMM_NULL) /* made on no rank: the error is agreed */
        MPI_Comm_free(&g);
    /* a good ring works; a duplicate of it carries no graph */
    rc = xchg_dist_graph_create_adjacent(w, 1, &prev, MPI_UNWEIGHTED, 1, &next, MPI_UNWEIGHTED,
                                         MPI_INFO_NULL, 0, &g);
    CHECK_ALL(rc == MPI_SUCCESS, "graph: a ring, rc %d", rc);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
        int one = 1, zero = 0, sb = me, rb = -1;
        rc = xchg_neighbor_alltoallv(&sb, &one, &zero, MPI_INT, &rb, &one, &zero, MPI_INT, g);
        CHECK_ALL(rc == MPI_SUCCESS && rb == prev, "graph: ring exchange rc %d got %d", rc, rb);
        MPI_Comm d;
        MPI_Comm_dup(g, &d);
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        rc = xchg_neighbor_alltoallv(&sb, &one, &zero, MPI_INT, &rb, &one, &zero, MPI_INT, d);
        expect_error(rc, MPI_ERR_TOPOLOGY, "graph: a duplicate of xchg's graph", "topology");
        MPI_Comm_free(&d);
        MPI_Comm_free(&g);
    }
    MPI_Comm_free(&w);
}

/* Counts that change between calls on one communicator: every rank to
 * every rank (itself too), n ints per block where n goes 1, 1, 64 (odd
 * ranks' blocks only) twice, each algorithm on its own communicator, so
 * that its first call sizes what it keeps (locality_shm's window: with
 * XCHG_SHM_BYTES small, the later calls' blocks from odd ranks no longer
 * fit and go as messages while the others' stay in the window),
 * blocking then nonblocking; then a persistent request at the largest
 * counts (locality_shm's init grows the window for them). Checked value by
 * value. */
static void growing(void)
{
    const int P = world_size, grow[3] = {1, 1, 64};
    int *peers = malloc(sizeof(int) * (size_t)P);
    for (int r = 0; r < P; r++)
        peers[r] = r;
    int *sc = malloc(sizeof(int) * 4 * (size_t)P), *sd = sc + P, *rcnt = sd + P, *rd = rcnt + P;
    int *sbuf = malloc(sizeof(int) * 64 * (size_t)P), *rbuf = malloc(sizeof(int) * 64 * (size_t)P);
    for (int k = 0; k < nalgos; k++) {
        MPI_Comm g;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, P, peers, MPI_UNWEIGHTED, P, peers,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
        MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
        for (int call = 0; call < 6; call++) {
            int step = grow[call % 3], at = 0, rat = 0;
            for (int r = 0; r < P; r++) {
                sc[r] = world_rank % 2 ? step : 1;
                rcnt[r] = r % 2 ? step : 1;
                sd[r] = at, rd[r] = rat;
                for (int i = 0; i < sc[r]; i++)
                    sbuf[at + i] = world_rank * 100000 + r * 1000 + i + call;
                at += sc[r], rat += rcnt[r];
            }
            memset(rbuf, 0xff, sizeof(int) * 64 * (size_t)P);
            int rc;
            if (call < 3) {
                rc = xchg_neighbor_alltoallv_algo(algos[k], sbuf, sc, sd, MPI_INT, rbuf, rcnt,
                                                  rd, MPI_INT, g);
            } else {
                xchg_request q = NULL;
                rc = xchg_ineighbor_alltoallv_algo(algos[k], sbuf, sc, sd, MPI_INT, rbuf, rcnt,
                                                   rd, MPI_INT, g, &q);
                if (rc == MPI_SUCCESS)
                    rc = xchg_wait(q);
                if (q)
                    xchg_request_free(&q);
            }
            int bad = 0;
            for (int r = 0; r < P; r++)
                for (int i = 0; i < rcnt[r]; i++)
                    bad += rbuf[rd[r] + i] != r * 100000 + world_rank * 1000 + i + call;
            CHECK_ALL(rc == MPI_SUCCESS && bad == 0, "growing counts, %s, call %d (%d ints "
                      "from odd ranks): rc %d, %d wrong", xchg_neighbor_algo_name(algos[k]),
                      call, step, rc, bad);
        }
        /* persistent at the largest counts (its init may size what it
         * keeps for them), started twice */
        xchg_request q = NULL;
        int rc = xchg_neighbor_alltoallv_init_algo(algos[k], sbuf, sc, sd, MPI_INT, rbuf, rcnt,
                                                   rd, MPI_INT, g, MPI_INFO_NULL, &q);
        for (int start = 0; start < 2 && rc == MPI_SUCCESS; start++) {
            int at = 0;
            for (int r = 0; r < P; r++)
                for (int i = 0; i < sc[r]; i++)
                    sbuf[at++] = world_rank * 100000 + r * 1000 + i + 7 * start;
            memset(rbuf, 0xff, sizeof(int) * 64 * (size_t)P);
            rc = xchg_start(q);
            if (rc == MPI_SUCCESS)
                rc = xchg_wait(q);
            int bad = 0;
            for (int r = 0; r < P; r++)
                for (int i = 0; i < rcnt[r]; i++)
                    bad += rbuf[rd[r] + i] != r * 100000 + world_rank * 1000 + i + 7 * start;
            CHECK_ALL(rc == MPI_SUCCESS && bad == 0, "growing counts, %s, persistent start %d: "
                      "rc %d, %d wrong", xchg_neighbor_algo_name(algos[k]), start, rc, bad);
        }
        if (q)
            xchg_request_free(&q);
        MPI_Comm_free(&g);
    }
    free(peers);
    free(sc);
    free(sbuf);
    free(rbuf);
}

static void errors(void)
{
    int one = 1, zero = 0, neg = -1, sbuf[4] = {1, 2, 3, 4}, rbuf[4];
    MPI_Comm w;
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    int rc = xchg_neighbor_alltoallv(sbuf, &one, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, w);
    expect_error(rc, MPI_ERR_TOPOLOGY, "no topology", "topology");
    xchg_request req;
    rc = xchg_neighbor_alltoallv_init(sbuf, &one, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, w,
                                      MPI_INFO_NULL, &req);
    expect_error(rc, MPI_ERR_TOPOLOGY, "init without topology", "topology");
    rc = xchg_ineighbor_alltoallv(sbuf, &one, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, w,
                                  &req);
    expect_error(rc, MPI_ERR_TOPOLOGY, "ineighbor without topology", "topology");
    MPI_Comm_free(&w);

    /* one rank's bad count at a communicator's first call: agreed */
    MPI_Comm r = ring();
    int *bad = world_rank == world_size - 1 ? &neg : &one;
    rc = xchg_neighbor_alltoallv(sbuf, bad, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, r);
    expect_error(rc, MPI_ERR_COUNT, "one rank's negative count, first call",
                 world_rank == world_size - 1 ? "sendcounts[0]" : "argument error");
    /* the state was not kept: the next call agrees again, and works */
    rc = xchg_neighbor_alltoallv(sbuf, &one, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, r);
    CHECK_ALL(rc == MPI_SUCCESS && rbuf[0] == 1, "a good call after the failed first: rc %d",
              rc);
    /* every rank's errors on later calls (local, but on every rank) */
    rc = xchg_neighbor_alltoallv(sbuf, &one, &zero, MPI_INT, rbuf, &neg, &zero, MPI_INT, r);
    expect_error(rc, MPI_ERR_COUNT, "negative recvcount", "recvcounts[0]");
    rc = xchg_neighbor_alltoallv(sbuf, &one, &zero, MPI_DATATYPE_NULL, rbuf, &one, &zero,
                                 MPI_INT, r);
    expect_error(rc, MPI_ERR_TYPE, "NULL sendtype", "sendtype");
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    rc = xchg_neighbor_alltoallv(sbuf, &one, &zero, MPI_INT, rbuf, &one, &zero, unc, r);
    expect_error(rc, MPI_ERR_TYPE, "uncommitted recvtype", "recvtype");
    MPI_Type_free(&unc);
    rc = xchg_neighbor_alltoallv(MPI_IN_PLACE, &one, &zero, MPI_INT, rbuf, &one, &zero,
                                 MPI_INT, r);
    expect_error(rc, MPI_ERR_BUFFER, "MPI_IN_PLACE", "MPI_IN_PLACE");
    rc = xchg_neighbor_alltoallv(sbuf, NULL, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, r);
    expect_error(rc, MPI_ERR_ARG, "NULL sendcounts", "sendcounts");
    rc = xchg_neighbor_alltoallv_algo((xchg_neighbor_algo)99, sbuf, &one, &zero, MPI_INT, rbuf,
                                      &one, &zero, MPI_INT, r);
    expect_error(rc, MPI_ERR_ARG, "unknown algo", "algo");
    rc = xchg_ineighbor_alltoallv(sbuf, &neg, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, r,
                                  &req);
    expect_error(rc, MPI_ERR_COUNT, "ineighbor negative count", "sendcounts[0]");
    rc = xchg_neighbor_alltoallv_init(sbuf, &one, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, r,
                                      MPI_INFO_NULL, NULL);
    expect_error(rc, MPI_ERR_ARG, "init with req NULL", "req");
    /* one rank's bad count at init: agreed */
    rc = xchg_neighbor_alltoallv_init(sbuf, bad, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, r,
                                      MPI_INFO_NULL, &req);
    expect_error(rc, MPI_ERR_COUNT, "one rank's negative count at init",
                 world_rank == world_size - 1 ? "sendcounts[0]" : "argument error");
    CHECK(req == XCHG_REQUEST_NULL, "a failed init leaves req NULL");
    /* the communicator still works */
    rbuf[0] = 0;
    rc = xchg_neighbor_alltoallv(sbuf, &one, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, r);
    CHECK_ALL(rc == MPI_SUCCESS && rbuf[0] == 1, "a good call after the errors: rc %d", rc);
    MPI_Comm_free(&r);

#if XCHG_HAVE_LARGE_COUNT
    { /* a count above INT_MAX (of a zero-size type) on the last rank: auto
       * passes the call to MPI_Neighbor_alltoallv_c, a forced algorithm
       * fails with MPI_ERR_COUNT on every rank */
        MPI_Datatype empty;
        MPI_Type_contiguous(0, MPI_INT, &empty);
        MPI_Type_commit(&empty);
        MPI_Count big = world_rank == world_size - 1 ? 3000000000LL : 1, onec = 1;
        MPI_Aint z = 0;
        r = ring();
        rc = xchg_neighbor_alltoallv_c(sbuf, &big, &z, empty, rbuf, &onec, &z, empty, r);
        xchg_stats st;
        xchg_get_stats(r, &st);
        const char *forced = getenv("XCHG_NEIGHBOR_ALGO");
        if (forced && *forced && strcmp(forced, "auto") != 0) /* the plain call is forced */
            expect_error(rc, MPI_ERR_COUNT, "large-count beyond int, XCHG_NEIGHBOR_ALGO set",
                         world_rank == world_size - 1 ? "sendcounts[0]"
                                                      : "MPI_Neighbor_alltoallv_c");
        else
            CHECK_ALL(rc == MPI_SUCCESS && st.passed_to_mpi == 1, "large-count beyond int, "
                      "auto: rc %d, passed_to_mpi %d", rc, st.passed_to_mpi);
        rc = xchg_neighbor_alltoallv_algo_c(XCHG_NEIGHBOR_DIRECT, sbuf, &big, &z, empty, rbuf,
                                            &onec, &z, empty, r);
        expect_error(rc, MPI_ERR_COUNT, "large-count beyond int, direct",
                     world_rank == world_size - 1 ? "sendcounts[0]" : "MPI_Neighbor_alltoallv_c");
        /* nonblocking and persistent: auto's request is MPI's own */
        xchg_request lr;
        rc = xchg_ineighbor_alltoallv_algo_c(XCHG_NEIGHBOR_AUTO, sbuf, &big, &z, empty, rbuf,
                                             &onec, &z, empty, r, &lr);
        if (rc == MPI_SUCCESS)
            rc = xchg_wait(lr);
        xchg_get_stats(r, &st);
        CHECK_ALL(rc == MPI_SUCCESS && st.passed_to_mpi == 1 &&
                      xchg_request_neighbor_algo(lr) == XCHG_NEIGHBOR_INVALID,
                  "large-count beyond int, nonblocking auto: rc %d, passed_to_mpi %d", rc,
                  st.passed_to_mpi);
        if (lr)
            xchg_request_free(&lr);
        rc = xchg_neighbor_alltoallv_init_algo_c(XCHG_NEIGHBOR_AUTO, sbuf, &big, &z, empty, rbuf,
                                                 &onec, &z, empty, r, MPI_INFO_NULL, &lr);
        for (int it = 0; it < 2 && rc == MPI_SUCCESS; it++) {
            rc = xchg_start(lr);
            if (rc == MPI_SUCCESS)
                rc = xchg_wait(lr);
        }
        CHECK_ALL(rc == MPI_SUCCESS, "large-count beyond int, persistent auto: rc %d", rc);
        if (lr)
            xchg_request_free(&lr);
        rc = xchg_neighbor_alltoallv_init_algo_c(XCHG_NEIGHBOR_LOCALITY, sbuf, &big, &z, empty,
                                                 rbuf, &onec, &z, empty, r, MPI_INFO_NULL, &lr);
        expect_error(rc, MPI_ERR_COUNT, "large-count beyond int, persistent locality",
                     world_rank == world_size - 1 ? "sendcounts[0]"
                                                  : "MPI_Neighbor_alltoallv_c");
        MPI_Comm_free(&r);
        /* xchg's own graph: MPI cannot take the call, auto fails too */
        int P = world_size, prev = (world_rank + P - 1) % P, next = (world_rank + 1) % P;
        MPI_Comm x;
        xchg_dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, MPI_UNWEIGHTED, 1, &next,
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &x);
        MPI_Comm_set_errhandler(x, MPI_ERRORS_RETURN);
        rc = xchg_neighbor_alltoallv_c(sbuf, &big, &z, empty, rbuf, &onec, &z, empty, x);
        expect_error(rc, MPI_ERR_COUNT, "large-count beyond int on xchg's graph",
                     world_rank == world_size - 1 ? "sendcounts[0]" : "the graph is xchg's");
        MPI_Comm_free(&x);
        MPI_Type_free(&empty);
    }
#endif
    /* one rank's bad count at auto's first call on a communicator that has
     * its state already (a collective follows: agreed), then auto works */
    r = ring();
    rc = xchg_neighbor_alltoallv_algo(XCHG_NEIGHBOR_DIRECT, sbuf, &one, &zero, MPI_INT, rbuf,
                                      &one, &zero, MPI_INT, r);
    CHECK_ALL(rc == MPI_SUCCESS, "direct on a new ring: rc %d", rc);
    rc = xchg_neighbor_alltoallv(sbuf, bad, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, r);
    expect_error(rc, MPI_ERR_COUNT, "one rank's negative count at auto's first choice",
                 world_rank == world_size - 1 ? "sendcounts[0]" : "argument error");
    rbuf[0] = 0;
    rc = xchg_neighbor_alltoallv(sbuf, &one, &zero, MPI_INT, rbuf, &one, &zero, MPI_INT, r);
    CHECK_ALL(rc == MPI_SUCCESS && rbuf[0] == 1, "auto after the agreed error: rc %d", rc);
    MPI_Comm_free(&r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Datatype v;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 4 * (MPI_Aint)sizeof(int), &vec2);
    MPI_Type_commit(&vec2);
    MPI_Type_free(&v);
    if (argc > 1) {
        plain_auto = 0;
        for (int i = 1; i < argc && nalgos < 16; i++) {
            xchg_neighbor_algo a = xchg_neighbor_algo_from_name(argv[i]);
            if (a == XCHG_NEIGHBOR_INVALID) {
                if (world_rank == 0)
                    fprintf(stderr, "test_neighbor: no neighbour algorithm %s\n", argv[i]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            algos[nalgos++] = a;
        }
    } else {
        for (int i = 0; i < xchg_neighbor_algo_count(); i++)
            algos[nalgos++] = xchg_neighbor_algo_at(i);
        algos[nalgos++] = XCHG_NEIGHBOR_AUTO;
    }
    all_cases();
    growing();
    truncation();
    errors();
    graph_errors();
    MPI_Type_free(&vec2);
    int fails = 0;
    MPI_Allreduce(&nfail, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (world_rank == 0)
        printf("test_neighbor: %d checks passed on rank 0, %d failed in all\n", npass, fails);
    MPI_Finalize();
    return fails != 0;
}

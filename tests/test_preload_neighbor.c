/*
 * test_preload_neighbor.c - an "unmodified application" of the neighbour
 * exchange, run under libxchg-preload.so with XCHG_VERBOSE=1; CTest checks
 * the preload's report with tests/expect_lines.sh.
 *
 * On each rank:
 *   MPI_Neighbor_alltoallv       2 calls on a random distributed graph
 *                                (self-loops, a repeated edge), 1 on a
 *                                2-D periodic Cartesian grid, 1 on a
 *                                communicator without topology (MPI's
 *                                error, MPI_ERRORS_RETURN: falls through)
 *   MPI_Ineighbor_alltoallv      1 call + MPI_Wait, 1 call + MPI_Test loop
 *   MPI_Neighbor_alltoallv_init  (MPI-4 libraries) 1 request, 3 starts with
 *                                new data, MPI_Wait each, MPI_Request_free
 *   MPI_Neighbor_alltoallv_c     (MPI-4 libraries) 1 call on the graph, 1 on
 *                                a ring whose last rank sends 3e9 elements
 *                                of a zero-size type (passed to MPI)
 *   MPI_Ineighbor_alltoallv_c    (MPI-4 libraries) 1 call + MPI_Wait
 *   MPI_Neighbor_alltoallv_init_c (MPI-4 libraries) 1 request, 2 starts
 * Every result is checked against point-to-point messages that carry the
 * blocks as the standard pairs them (graphs: the k-th message to a
 * neighbour with the k-th receive from it; Cartesian: block j lands in
 * block j ^ 1, one tag per direction): MPI's own neighbour collective is
 * under test here, so it cannot be the reference. Knows nothing of xchg.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overread" /* Open MPI's MPI_UNWEIGHTED */
#endif

static int rank, P, bad;

typedef struct graph {
    MPI_Comm comm;
    int in, out, cart;
    int *src, *dst, *rc, *rd, *sc, *sd;
    int rtotal, stotal;
} graph;

static void layout(graph *g)
{
    g->rc = malloc(sizeof(int) * 2 * (size_t)(g->in + 1));
    g->rd = g->rc + g->in + 1;
    g->sc = malloc(sizeof(int) * 2 * (size_t)(g->out + 1));
    g->sd = g->sc + g->out + 1;
    /* count of a block: 1 + (sender + 2 * receiver) % 3, both sides know it */
    g->rtotal = g->stotal = 0;
    for (int i = 0; i < g->in; i++) {
        int s = g->src[i];
        g->rc[i] = s == MPI_PROC_NULL ? 2 : 1 + (s + 2 * rank) % 3;
        g->rd[i] = g->rtotal;
        g->rtotal += g->rc[i] + 1; /* a gap of one */
    }
    for (int j = 0; j < g->out; j++) {
        int d = g->dst[j];
        g->sc[j] = d == MPI_PROC_NULL ? 2 : 1 + (rank + 2 * d) % 3;
        g->sd[j] = g->stotal;
        g->stotal += g->sc[j];
    }
}

static void dist_graph(graph *g)
{
    /* edges r -> r+1, r -> r (self), r -> r+2 twice (repeated) */
    int dst[4] = {(rank + 1) % P, rank, (rank + 2) % P, (rank + 2) % P};
    int src[4] = {(rank + P - 1) % P, rank, (rank + P - 2) % P, (rank + P - 2) % P};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 4, src, MPI_UNWEIGHTED, 4, dst,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g->comm);
    g->in = g->out = 4;
    g->cart = 0;
    g->src = malloc(sizeof src);
    g->dst = malloc(sizeof dst);
    memcpy(g->src, src, sizeof src);
    memcpy(g->dst, dst, sizeof dst);
    layout(g);
}

static void cart(graph *g)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(P, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &g->comm);
    g->in = g->out = 4;
    g->cart = 1;
    g->src = malloc(4 * sizeof(int));
    g->dst = malloc(4 * sizeof(int));
    for (int d = 0; d < 2; d++) {
        MPI_Cart_shift(g->comm, d, 1, &g->src[2 * d], &g->src[2 * d + 1]);
        g->dst[2 * d] = g->src[2 * d];
        g->dst[2 * d + 1] = g->src[2 * d + 1];
    }
    layout(g);
}

static void graph_free(graph *g)
{
    MPI_Comm_free(&g->comm);
    free(g->src);
    free(g->dst);
    free(g->rc);
    free(g->sc);
}

static void fill(const graph *g, int *sbuf, int round)
{
    for (int j = 0; j < g->out; j++)
        for (int k = 0; k < g->sc[j]; k++)
            sbuf[g->sd[j] + k] = round * 1000000 + rank * 1000 + j * 10 + k;
}

/* The standard's result by point-to-point on a duplicate of comm. */
static void expected(const graph *g, const int *sbuf, int *want)
{
    MPI_Comm dup;
    MPI_Comm_dup(g->comm, &dup);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(g->in + g->out));
    int n = 0;
    for (int i = 0; i < g->in; i++)
        MPI_Irecv(want + g->rd[i], g->rc[i], MPI_INT, g->src[i], g->cart ? 1 - (i & 1) : 0, dup,
                  &req[n++]);
    for (int j = 0; j < g->out; j++)
        MPI_Isend(sbuf + g->sd[j], g->sc[j], MPI_INT, g->dst[j], g->cart ? (j & 1) : 0, dup,
                  &req[n++]);
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    free(req);
    MPI_Comm_free(&dup);
}

static void check(const graph *g, const char *what, int rc, const int *got, const int *want)
{
    if (rc != MPI_SUCCESS || memcmp(got, want, sizeof(int) * (size_t)(g->rtotal + 1)) != 0) {
        fprintf(stderr, "rank %d: %s: rc %d or wrong result\n", rank, what, rc);
        bad++;
    }
}

#if MPI_VERSION >= 4
/* A persistent request made with rc (a failed init is reported): started
 * once per round first..last with that round's data, each result checked,
 * then freed; the send data of round 1 (and its expected result) restored
 * afterwards. */
static void starts(const graph *g, const char *what, int rc, MPI_Request *req, int first,
                   int last, int *sbuf, int *got, int *want)
{
    if (rc != MPI_SUCCESS) { /* the init failed */
        check(g, what, rc, got, want);
        return;
    }
    for (int round = first; round <= last && rc == MPI_SUCCESS; round++) {
        fill(g, sbuf, round);
        memset(want, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
        expected(g, sbuf, want);
        memset(got, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
        rc = MPI_Start(req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(req, MPI_STATUS_IGNORE);
        check(g, what, rc, got, want);
    }
    if (rc == MPI_SUCCESS)
        MPI_Request_free(req);
    fill(g, sbuf, 1);
    memset(want, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
    expected(g, sbuf, want);
}
#endif

static void run(const graph *g)
{
    int *sbuf = malloc(sizeof(int) * (size_t)(g->stotal + 1));
    int *got = malloc(sizeof(int) * (size_t)(g->rtotal + 1));
    int *want = malloc(sizeof(int) * (size_t)(g->rtotal + 1));
    fill(g, sbuf, 1);
    memset(want, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
    expected(g, sbuf, want);
    memset(got, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
    int rc = MPI_Neighbor_alltoallv(sbuf, g->sc, g->sd, MPI_INT, got, g->rc, g->rd, MPI_INT,
                                    g->comm);
    check(g, "MPI_Neighbor_alltoallv", rc, got, want);
    if (g->cart)
        return free(sbuf), free(got), free(want);
    memset(got, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
    rc = MPI_Neighbor_alltoallv(sbuf, g->sc, g->sd, MPI_INT, got, g->rc, g->rd, MPI_INT,
                                g->comm);
    check(g, "MPI_Neighbor_alltoallv again", rc, got, want);

    MPI_Request req;
    memset(got, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
    rc = MPI_Ineighbor_alltoallv(sbuf, g->sc, g->sd, MPI_INT, got, g->rc, g->rd, MPI_INT,
                                 g->comm, &req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(g, "MPI_Ineighbor_alltoallv + MPI_Wait", rc, got, want);
    memset(got, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
    rc = MPI_Ineighbor_alltoallv(sbuf, g->sc, g->sd, MPI_INT, got, g->rc, g->rd, MPI_INT,
                                 g->comm, &req);
    for (int flag = 0; rc == MPI_SUCCESS && !flag;)
        rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    check(g, "MPI_Ineighbor_alltoallv + MPI_Test", rc, got, want);

#if MPI_VERSION >= 4
    {
        MPI_Count *cc = malloc(sizeof(MPI_Count) * (size_t)(g->in + g->out));
        MPI_Aint *dd = malloc(sizeof(MPI_Aint) * (size_t)(g->in + g->out));
        for (int j = 0; j < g->out; j++)
            cc[g->in + j] = g->sc[j], dd[g->in + j] = g->sd[j];
        for (int i = 0; i < g->in; i++)
            cc[i] = g->rc[i], dd[i] = g->rd[i];
        memset(got, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
        rc = MPI_Neighbor_alltoallv_c(sbuf, cc + g->in, dd + g->in, MPI_INT, got, cc, dd,
                                      MPI_INT, g->comm);
        check(g, "MPI_Neighbor_alltoallv_c", rc, got, want);
        memset(got, 0xEE, sizeof(int) * (size_t)(g->rtotal + 1));
        rc = MPI_Ineighbor_alltoallv_c(sbuf, cc + g->in, dd + g->in, MPI_INT, got, cc, dd,
                                       MPI_INT, g->comm, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        check(g, "MPI_Ineighbor_alltoallv_c + MPI_Wait", rc, got, want);
        /* the persistent large-count form: 2 starts with new data */
        rc = MPI_Neighbor_alltoallv_init_c(sbuf, cc + g->in, dd + g->in, MPI_INT, got, cc, dd,
                                           MPI_INT, g->comm, MPI_INFO_NULL, &req);
        starts(g, "MPI_Neighbor_alltoallv_init_c + MPI_Start", rc, &req, 5, 6, sbuf, got, want);
        free(cc);
        free(dd);
    }
    rc = MPI_Neighbor_alltoallv_init(sbuf, g->sc, g->sd, MPI_INT, got, g->rc, g->rd, MPI_INT,
                                     g->comm, MPI_INFO_NULL, &req);
    starts(g, "MPI_Neighbor_alltoallv_init + MPI_Start", rc, &req, 2, 4, sbuf, got, want);
#endif
    free(sbuf);
    free(got);
    free(want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    graph g;
    dist_graph(&g);
    run(&g);
    graph_free(&g);
    cart(&g);
    run(&g);
    graph_free(&g);

#if MPI_VERSION >= 4
    { /* a count beyond int (of a zero-size type) on the last rank's block */
        MPI_Datatype empty;
        MPI_Type_contiguous(0, MPI_INT, &empty);
        MPI_Type_commit(&empty);
        int src = (rank + P - 1) % P, dst = (rank + 1) % P, sv = 0, rv = 0;
        MPI_Comm ring;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring);
        MPI_Count big = rank == P - 1 ? 3000000000LL : 1, one_c = 1;
        MPI_Aint z = 0;
        if (MPI_Neighbor_alltoallv_c(&sv, &big, &z, empty, &rv, &one_c, &z, empty, ring) !=
            MPI_SUCCESS) {
            fprintf(stderr, "rank %d: MPI_Neighbor_alltoallv_c beyond int failed\n", rank);
            bad++;
        }
        MPI_Comm_free(&ring);
        MPI_Type_free(&empty);
    }
#endif
    /* no topology: MPI's own error (xchg does not take the call), whatever
     * its class (MPICH 4.0: MPI_ERR_COUNT; Open MPI 4.1: MPI_ERR_COMM, on
     * MPI_COMM_WORLD, whose handler therefore returns too) */
    MPI_Comm w;
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int one = 1, zero = 0, s = 1, r = 0, cls = MPI_SUCCESS;
    int rc = MPI_Neighbor_alltoallv(&s, &one, &zero, MPI_INT, &r, &one, &zero, MPI_INT, w);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (cls == MPI_SUCCESS) {
        fprintf(stderr, "rank %d: no topology: no error\n", rank);
        bad++;
    }
    MPI_Comm_free(&w);

    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_preload_neighbor on %d ranks: %s\n", P, all ? "FAILED" : "results correct");
    MPI_Finalize();
    return all != 0;
}

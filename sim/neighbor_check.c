/*
 * neighbor_check.c - what SMPI does with topology communicators and the
 * neighbour collectives (issue 27: its library exports the functions;
 * whether they work is to be seen).
 *
 *   smpicc -O1 sim/neighbor_check.c -o neighbor_check
 *   sim/run -np 8 --rpn 4 ./neighbor_check [cart]
 *
 * Plain MPI (no libxchg): for a distributed graph made with
 * MPI_Dist_graph_create_adjacent (edges r -> r+1, r -> r, r -> r+2 twice)
 * and a 2-D periodic Cartesian grid, each step prints its return code and
 * whether what it gave is right: MPI_Topo_test, the neighbour queries,
 * MPI_Comm_dup keeping the topology, MPI_Neighbor_alltoallv and
 * MPI_Ineighbor_alltoallv against point-to-point messages paired as the
 * standard pairs them. Rank 0 prints one line per step (flushed, so a
 * crash shows where); a step that crashes ends the program there: "cart"
 * skips the distributed graph and MPI_Topo_test.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, P;

static void say(const char *step, int rc, int ok)
{
    int all = 0, rcs = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &rcs, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("neighbor_check P=%d: %-58s rc %d, %s\n", P, step, rcs,
               all ? "right on every rank" : "WRONG on some rank");
        fflush(stdout);
    }
}

typedef struct nb {
    MPI_Comm comm;
    int cart, n;    /* n blocks each side, one int each */
    int src[4], dst[4];
} nb;

/* The standard's result by point-to-point: graphs pair by order, a
 * Cartesian grid per direction (block j lands in block j ^ 1). */
static void expected(const nb *g, const int *sbuf, int *want)
{
    MPI_Request req[8];
    int k = 0;
    for (int i = 0; i < g->n; i++)
        MPI_Irecv(&want[i], 1, MPI_INT, g->src[i], g->cart ? 1 - (i & 1) : 0, MPI_COMM_WORLD,
                  &req[k++]);
    for (int j = 0; j < g->n; j++)
        MPI_Isend(&sbuf[j], 1, MPI_INT, g->dst[j], g->cart ? (j & 1) : 0, MPI_COMM_WORLD,
                  &req[k++]);
    MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
}

static void exchanges(const char *what, const nb *g)
{
    int sbuf[4], got[4], want[4], cnt[4] = {1, 1, 1, 1}, dsp[4] = {0, 1, 2, 3};
    char step[96];
    for (int j = 0; j < 4; j++)
        sbuf[j] = rank * 10 + j;
    memset(want, -1, sizeof want);
    expected(g, sbuf, want);
    memset(got, -1, sizeof got);
    int rc = MPI_Neighbor_alltoallv(sbuf, cnt, dsp, MPI_INT, got, cnt, dsp, MPI_INT, g->comm);
    snprintf(step, sizeof step, "%s: MPI_Neighbor_alltoallv", what);
    say(step, rc, rc == MPI_SUCCESS && memcmp(got, want, sizeof(int) * (size_t)g->n) == 0);
    MPI_Request r;
    memset(got, -1, sizeof got);
    rc = MPI_Ineighbor_alltoallv(sbuf, cnt, dsp, MPI_INT, got, cnt, dsp, MPI_INT, g->comm, &r);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    snprintf(step, sizeof step, "%s: MPI_Ineighbor_alltoallv + MPI_Wait", what);
    say(step, rc, rc == MPI_SUCCESS && memcmp(got, want, sizeof(int) * (size_t)g->n) == 0);
}

static void dist_graph(void)
{
    nb g = {.cart = 0, .n = 4};
    int d[4] = {(rank + 1) % P, rank, (rank + 2) % P, (rank + 2) % P};
    int s[4] = {(rank + P - 1) % P, rank, (rank + P - 2) % P, (rank + P - 2) % P};
    memcpy(g.dst, d, sizeof d);
    memcpy(g.src, s, sizeof s);
    int rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 4, s, MPI_UNWEIGHTED, 4, d,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g.comm);
    say("MPI_Dist_graph_create_adjacent", rc, rc == MPI_SUCCESS);
    if (rc != MPI_SUCCESS)
        return;
    int topo = -1;
    rc = MPI_Topo_test(g.comm, &topo);
    say("MPI_Topo_test on it is MPI_DIST_GRAPH", rc, topo == MPI_DIST_GRAPH);
    int in = -1, out = -1, w = -1, rs[4], rd[4];
    rc = MPI_Dist_graph_neighbors_count(g.comm, &in, &out, &w);
    say("MPI_Dist_graph_neighbors_count", rc, in == 4 && out == 4 && w == 0);
    rc = MPI_Dist_graph_neighbors(g.comm, 4, rs, MPI_UNWEIGHTED, 4, rd, MPI_UNWEIGHTED);
    say("MPI_Dist_graph_neighbors, in the order given", rc,
        memcmp(rs, s, sizeof s) == 0 && memcmp(rd, d, sizeof d) == 0);
    MPI_Comm dup;
    rc = MPI_Comm_dup(g.comm, &dup);
    topo = -1;
    if (rc == MPI_SUCCESS)
        rc = MPI_Topo_test(dup, &topo);
    say("MPI_Comm_dup keeps the topology", rc, topo == MPI_DIST_GRAPH);
    exchanges("dist graph", &g);
}

static void cart(int topo_test)
{
    nb g = {.cart = 1, .n = 4};
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(P, 2, dims);
    int rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &g.comm);
    say("MPI_Cart_create (2-D, periodic)", rc, rc == MPI_SUCCESS);
    if (rc != MPI_SUCCESS)
        return;
    if (topo_test) {
        int topo = -1;
        rc = MPI_Topo_test(g.comm, &topo);
        say("MPI_Topo_test on it is MPI_CART", rc, topo == MPI_CART);
    }
    for (int d = 0; d < 2 && rc == MPI_SUCCESS; d++)
        rc = MPI_Cart_shift(g.comm, d, 1, &g.src[2 * d], &g.src[2 * d + 1]);
    memcpy(g.dst, g.src, sizeof g.src);
    say("MPI_Cart_shift", rc, rc == MPI_SUCCESS);
    exchanges("Cartesian", &g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* SMPI 3.32 aborts in MPI_Dist_graph_create_adjacent and MPI_Topo_test
     * (sim/README.md): "cart" skips both */
    int all = argc < 2 || strcmp(argv[1], "cart") != 0;
    if (all)
        dist_graph();
    cart(all);
    MPI_Finalize();
    return 0;
}

/*
 * graph.c - the neighbours of a topology communicator, in the order MPI's
 * neighbour collectives give its blocks (MPI-4.0, 8.6: distributed graph:
 * MPI_Dist_graph_neighbors; Cartesian: per dimension the -1 then the +1
 * neighbour of MPI_Cart_shift; graph: MPI_Graph_neighbors on both sides).
 */
#include "neighbor_internal.h"

#include <stdlib.h>

static int graph_alloc(xchg_nbr_graph *g, int in, int out)
{
    g->indegree = in;
    g->outdegree = out;
    g->sources = malloc(sizeof(int) * (size_t)(in + out > 0 ? in + out : 1));
    g->dests = g->sources ? g->sources + in : NULL;
    if (!g->sources)
        return xchg_error_code(MPI_ERR_NO_MEM, "no memory for the %d neighbours of this rank",
                               in + out);
    return MPI_SUCCESS;
}

static int read_dist_graph(MPI_Comm comm, xchg_nbr_graph *g)
{
    int in = 0, out = 0, weighted = 0;
    int rc = MPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    if (rc == MPI_SUCCESS)
        rc = graph_alloc(g, in, out);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Weights are read (MPI wants arrays where there are weights) and dropped. */
    int *w = weighted ? malloc(sizeof(int) * (size_t)(in + out + 1)) : NULL;
    if (weighted && !w)
        return xchg_error_code(MPI_ERR_NO_MEM, "no memory for the graph's weights");
    rc = MPI_Dist_graph_neighbors(comm, in, g->sources, weighted ? w : MPI_UNWEIGHTED, out,
                                  g->dests, weighted ? w + in : MPI_UNWEIGHTED);
    free(w);
    return rc;
}

static int read_cart(MPI_Comm comm, xchg_nbr_graph *g)
{
    int ndims = 0;
    int rc = MPI_Cartdim_get(comm, &ndims);
    if (rc == MPI_SUCCESS)
        rc = graph_alloc(g, 2 * ndims, 2 * ndims);
    for (int d = 0; d < ndims && rc == MPI_SUCCESS; d++) {
        rc = MPI_Cart_shift(comm, d, 1, &g->sources[2 * d], &g->sources[2 * d + 1]);
        g->dests[2 * d] = g->sources[2 * d];
        g->dests[2 * d + 1] = g->sources[2 * d + 1];
    }
    return rc;
}

static int read_graph(MPI_Comm comm, xchg_nbr_graph *g)
{
    int me = 0, n = 0;
    MPI_Comm_rank(comm, &me);
    int rc = MPI_Graph_neighbors_count(comm, me, &n);
    if (rc == MPI_SUCCESS)
        rc = graph_alloc(g, n, n);
    if (rc == MPI_SUCCESS)
        rc = MPI_Graph_neighbors(comm, me, n, g->sources);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        g->dests[i] = g->sources[i];
    return rc;
}

int xchg_nbr_graph_read(MPI_Comm comm, xchg_nbr_graph *g)
{
    g->sources = g->dests = NULL;
    g->indegree = g->outdegree = 0;
    int rc = MPI_Topo_test(comm, &g->topo);
    if (rc != MPI_SUCCESS)
        return rc;
    if (g->topo == MPI_DIST_GRAPH)
        rc = read_dist_graph(comm, g);
    else if (g->topo == MPI_CART)
        rc = read_cart(comm, g);
    else if (g->topo == MPI_GRAPH)
        rc = read_graph(comm, g);
    else
        return xchg_error_code(MPI_ERR_TOPOLOGY, "comm has no topology: a neighbour exchange "
                               "needs a distributed graph (MPI_Dist_graph_create_adjacent), "
                               "Cartesian or graph communicator");
    if (rc != MPI_SUCCESS)
        xchg_nbr_graph_free(g);
    return rc;
}

void xchg_nbr_graph_free(xchg_nbr_graph *g)
{
    free(g->sources);
    g->sources = g->dests = NULL;
}

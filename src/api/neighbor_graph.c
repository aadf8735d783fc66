/*
 * neighbor_graph.c - xchg_dist_graph_create_adjacent: a distributed graph
 * that xchg holds itself, on a duplicate of the caller's communicator.
 *
 * Why: an MPI that cannot make topology communicators (SimGrid SMPI 3.32
 * and 4.1 abort in MPI_Dist_graph_create_adjacent, sim/neighbor_check.c)
 * still runs every xchg neighbour algorithm, and the simulated study
 * measures the same code the library runs; and a caller gets a graph
 * checked for consistency, which MPI does not do (an edge listed by its
 * source but not by its destination leaves a receive waiting for ever).
 *
 * The graph goes on xchg's state of the new communicator as an agreed
 * neighbour state (neighbor_state.h) with own_graph set: the entry points
 * of neighbor.c take it where MPI_Topo_test finds no topology.
 */
#include "neighbor_state.h"

#include <stdlib.h>
#include <string.h>

static const char who[] = "xchg_dist_graph_create_adjacent";

/* This rank's arguments, checked without communication. */
static int check_args(int P, int indegree, const int sources[], int outdegree,
                      const int destinations[], const MPI_Comm *out)
{
    if (!out)
        return xchg_error_code(MPI_ERR_ARG, "%s: comm_dist_graph is NULL", who);
    if (indegree < 0 || outdegree < 0)
        return xchg_error_code(MPI_ERR_ARG, "%s: %s is negative (%d)", who,
                               indegree < 0 ? "indegree" : "outdegree",
                               indegree < 0 ? indegree : outdegree);
    if ((indegree > 0 && !sources) || (outdegree > 0 && !destinations))
        return xchg_error_code(MPI_ERR_ARG, "%s: %s is NULL with %d neighbours to list", who,
                               indegree > 0 && !sources ? "sources" : "destinations",
                               indegree > 0 && !sources ? indegree : outdegree);
    for (int i = 0; i < indegree; i++)
        if (sources[i] < 0 || sources[i] >= P)
            return xchg_error_code(MPI_ERR_RANK, "%s: sources[%d] = %d is not a rank of "
                                   "comm_old (size %d)", who, i, sources[i], P);
    for (int j = 0; j < outdegree; j++)
        if (destinations[j] < 0 || destinations[j] >= P)
            return xchg_error_code(MPI_ERR_RANK, "%s: destinations[%d] = %d is not a rank of "
                                   "comm_old (size %d)", who, j, destinations[j], P);
    return MPI_SUCCESS;
}

/* Every edge as often among its source's destinations as among its
 * destination's sources: one MPI_Alltoall of this rank's edge counts
 * per destination. */
static int check_consistent(xchg_comm_state *cs, const xchg_nbr_graph *g)
{
    const int P = cs->size;
    int *out = calloc(3 * (size_t)P, sizeof(int));
    if (!out)
        return xchg_error_code(MPI_ERR_NO_MEM, "%s: no memory for the graph's check", who);
    int *told = out + P, *in = out + 2 * P;
    for (int j = 0; j < g->outdegree; j++)
        out[g->dests[j]]++;
    for (int i = 0; i < g->indegree; i++)
        in[g->sources[i]]++;
    int rc = xchg_mpi_alltoall(out, 1, MPI_INT, told, 1, MPI_INT, cs->pcomm);
    for (int s = 0; rc == MPI_SUCCESS && s < P; s++)
        if (told[s] != in[s])
            rc = xchg_error_code(MPI_ERR_TOPOLOGY, "%s: the graph is inconsistent: rank %d "
                                 "lists rank %d %d times among its destinations, rank %d "
                                 "lists rank %d %d times among its sources", who, s, cs->rank,
                                 told[s], cs->rank, s, in[s]);
    free(out);
    return rc;
}

/* The state holding a copy of the graph. */
static int state_of(int indegree, const int sources[], int outdegree, const int destinations[],
                    xchg_nbr_state **out)
{
    xchg_nbr_state *st = xchg_nbr_state_new();
    int *mem = st ? malloc(sizeof(int) * (size_t)(indegree + outdegree + 1)) : NULL;
    if (!mem) {
        free(st);
        return xchg_error_code(MPI_ERR_NO_MEM, "%s: no memory for the %d neighbours of this "
                               "rank", who, indegree + outdegree);
    }
    st->own_graph = 1;
    st->g.topo = MPI_DIST_GRAPH;
    st->g.indegree = indegree;
    st->g.outdegree = outdegree;
    st->g.sources = mem;
    st->g.dests = mem + indegree;
    if (indegree)
        memcpy(st->g.sources, sources, sizeof(int) * (size_t)indegree);
    if (outdegree)
        memcpy(st->g.dests, destinations, sizeof(int) * (size_t)outdegree);
    *out = st;
    return MPI_SUCCESS;
}

int xchg_dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    (void)sourceweights, (void)destweights, (void)info, (void)reorder; /* hints: ignored */
    int rc = xchg_mpi_check(comm_old);
    if (rc != MPI_SUCCESS)
        return rc;
    int P = 0;
    if ((rc = xchg_check_comm(comm_old, &P)) != MPI_SUCCESS)
        return xchg_raise(comm_old, rc); /* the same on every rank */
    if (comm_dist_graph)
        *comm_dist_graph = MPI_COMM_NULL;
    /* the collective steps run on every rank whatever its arguments, so
     * that an error is agreed rather than left to hang the others */
    int local = check_args(P, indegree, sources, outdegree, destinations, comm_dist_graph);
    MPI_Comm nc = MPI_COMM_NULL;
    xchg_comm_state *cs = NULL;
    rc = MPI_Comm_dup(comm_old, &nc);
    if (rc == MPI_SUCCESS)
        rc = xchg_api_state(nc, &cs); /* agreed inside: all ranks have one or none does */
    if (rc != MPI_SUCCESS) {
        if (nc != MPI_COMM_NULL)
            MPI_Comm_free(&nc);
        return xchg_raise(comm_old, rc);
    }
    xchg_nbr_state *st = NULL;
    if (local == MPI_SUCCESS)
        local = state_of(indegree, sources, outdegree, destinations, &st);
    rc = xchg_agree_errors(cs->pcomm, cs->rank, cs->size, local, who);
    if (rc == MPI_SUCCESS)
        rc = xchg_agree_errors(cs->pcomm, cs->rank, cs->size, check_consistent(cs, &st->g), who);
    if (rc != MPI_SUCCESS) {
        if (st)
            xchg_nbr_state_free(st);
        MPI_Comm_free(&nc);
        return xchg_raise(comm_old, rc);
    }
    xchg_nbr_state_keep(cs, st);
    *comm_dist_graph = nc;
    return MPI_SUCCESS;
}

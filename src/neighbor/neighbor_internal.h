/*
 * neighbor_internal.h - what the neighbour exchange algorithms (src/neighbor/)
 * share and offer the entry points: the graph of a topology communicator,
 * one call's arguments, the one signature of an algorithm with its
 * persistent hooks, and the registry that holds every fact about each.
 */
#ifndef XCHG_NEIGHBOR_INTERNAL_H
#define XCHG_NEIGHBOR_INTERNAL_H

#include "progress/progress.h"

/* Tags inside XCHG_TAG_NEIGHBOR's range (160..169). */
enum {
    XCHG_NEIGHBOR_TAG_DIRECT = XCHG_TAG_NEIGHBOR, /* direct: the blocks themselves */
};

/* The neighbours of this rank as MPI's neighbour collectives see them:
 * receive block i comes from sources[i], send block j goes to dests[j].
 * MPI_PROC_NULL entries (Cartesian, non-periodic) are blocks that move
 * nothing. Read once per communicator (graph.c): a topology never changes. */
typedef struct xchg_nbr_graph {
    int topo;                /* MPI_DIST_GRAPH, MPI_CART or MPI_GRAPH */
    int indegree, outdegree;
    int *sources, *dests;    /* one allocation: indegree + outdegree ints */
} xchg_nbr_graph;

/* Reads the graph of comm (no communication). A communicator without a
 * topology gives MPI_ERR_TOPOLOGY naming it. */
int xchg_nbr_graph_read(MPI_Comm comm, xchg_nbr_graph *g);
void xchg_nbr_graph_free(xchg_nbr_graph *g);

/* One neighbour exchange: arguments checked, types known; comm is the
 * private duplicate (which keeps the caller's topology, but the algorithms
 * only use g and point-to-point calls on it). */
typedef struct xchg_nbr_call {
    const void *sendbuf;
    const int *sendcounts, *sdispls; /* outdegree entries */
    void *recvbuf;
    const int *recvcounts, *rdispls; /* indegree entries */
    xchg_typeinfo st, rt;
    const xchg_nbr_graph *g;
    MPI_Comm comm;
    xchg_comm_state *cs;
    int rank, size;
    xchg_call mem;                   /* temporary memory accounting (temp_* fields) */
} xchg_nbr_call;

/* The one signature of every neighbour algorithm: the whole exchange,
 * blocking outside a coroutine, yielding inside one (progress.h). */
typedef int (*xchg_nbr_fn)(xchg_nbr_call *c);

/* Persistent hooks, as the alltoallv algorithms' (algo.h): init is
 * collective and does all one-time work; start only starts data moving;
 * test sets *flag once complete; wait completes; free is called idle.
 * The call lives as long as the plan. */
typedef struct xchg_nbr_persist_ops {
    int (*init)(xchg_nbr_call *c, void **plan);
    int (*start)(xchg_nbr_call *c, void *plan);
    int (*test)(xchg_nbr_call *c, void *plan, int *flag);
    int (*wait)(xchg_nbr_call *c, void *plan);
    int (*free)(xchg_nbr_call *c, void *plan);
} xchg_nbr_persist_ops;

/* Everything the library knows of a neighbour algorithm (registry.c). */
typedef struct xchg_neighbor_info {
    xchg_neighbor_algo id;
    const char *name;
    const char *desc;                 /* one line: when it wins */
    xchg_nbr_fn run;
    const xchg_nbr_persist_ops *persist;
} xchg_neighbor_info;

const xchg_neighbor_info *xchg_neighbor_registry_find(xchg_neighbor_algo id);
const xchg_neighbor_info *xchg_neighbor_registry_find_name(const char *name);
int xchg_neighbor_registry_count(void);
const xchg_neighbor_info *xchg_neighbor_registry_at(int i);

int xchg_neighbor_direct(xchg_nbr_call *c);
extern const xchg_nbr_persist_ops xchg_neighbor_direct_persist;

/* Waits for n requests of an exchange whose receives were posted before
 * their messages were seen: a failed request (a block larger than its
 * receive: MPI_ERR_TRUNCATE) comes back as a code naming the receive
 * block (from[k]: the block of request k, -1 for a send), also under
 * MPICH, which raises completion errors on MPI_COMM_WORLD's handler. With
 * flag not NULL it only tests (*flag set when all are complete). */
int xchg_nbr_complete(xchg_nbr_call *c, int n, MPI_Request req[], const int from[],
                      int *flag, const char *who);

#endif /* XCHG_NEIGHBOR_INTERNAL_H */

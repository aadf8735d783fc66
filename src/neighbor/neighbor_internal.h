/*
 * neighbor_internal.h - what the neighbour exchange algorithms (src/neighbor/)
 * share and offer the entry points: the graph of a topology communicator,
 * one call's arguments, the one signature of an algorithm with its
 * persistent hooks, and the registry that holds every fact about each.
 */
#ifndef XCHG_NEIGHBOR_INTERNAL_H
#define XCHG_NEIGHBOR_INTERNAL_H

#include "progress/progress.h"

/* Tags inside XCHG_TAG_NEIGHBOR's range (160..169): each algorithm's
 * messages use its base and, on a Cartesian communicator, base + 1
 * (xchg_nbr_send_tag). */
enum {
    XCHG_NEIGHBOR_TAG_DIRECT = XCHG_TAG_NEIGHBOR, /* direct: the blocks themselves (2 tags) */
    XCHG_NEIGHBOR_TAG_LOCAL = XCHG_TAG_NEIGHBOR + 2, /* locality: blocks inside a node (2 tags) */
    XCHG_NEIGHBOR_TAG_AGGREGATE = XCHG_TAG_NEIGHBOR + 4, /* locality: to a partner on a node */
    XCHG_NEIGHBOR_TAG_FORWARD = XCHG_TAG_NEIGHBOR + 5,   /* locality: partner to destination */
    XCHG_NEIGHBOR_TAG_MPICH_MODEL = XCHG_TAG_NEIGHBOR + 6, /* mpich_model (2 tags) */
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

/* The tag of send block j and of receive block i. Cartesian: one tag per
 * direction, so that the sender's block j lands in the receiver's block
 * j ^ 1 (sent towards -1, received from +1) also where both neighbours of
 * a dimension are one rank, periodic of size 1 or 2 (MPI-4.1 section 8.6,
 * the MPI-3.1 errata of mpi-forum/mpi-issues#153; Open MPI 4.1's blocking
 * MPI_Neighbor_alltoallv does this, MPICH 4.0's pairs by order instead).
 * Within a direction the blocks go in dimension order on both sides, so
 * a rank that is its own neighbour in several dimensions pairs them by
 * dimension. Otherwise one tag: MPI's order pairs repeated neighbours. */
static inline int xchg_nbr_send_tag(const xchg_nbr_graph *g, int base, int j)
{
    return g->topo == MPI_CART ? base + (j & 1) : base;
}

static inline int xchg_nbr_recv_tag(const xchg_nbr_graph *g, int base, int i)
{
    return g->topo == MPI_CART ? base + ((i & 1) ^ 1) : base;
}

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
    void *analysis;                  /* the algorithm's analysis of the graph (analyse) */
    xchg_neighbor_algo ran;          /* set where another algorithm ran instead (the
                                      * same on every rank); 0: as asked */
    double table_key;                /* this rank's tuning table (xchg_table_key, set
                                      * where an analysis is made), agreed by
                                      * locality's census */
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

/* What an algorithm learns of a graph once per communicator (collective:
 * every rank calls it at the same point; its failures agreed inside, the
 * same on every rank). The call c is that of the communicator's first
 * exchange with the algorithm (its counts inform the statistics). */
typedef int (*xchg_nbr_analyse_fn)(xchg_nbr_call *c, void **analysis);

/* Agreed statistics of a graph for auto's choice (locality's analysis),
 * per rank on average: neighbour blocks to other nodes, distinct other
 * nodes sent to, bytes to other nodes (of the analysed call), the
 * forward messages locality sends inside the node, all neighbour blocks
 * (on the node too), and the ranks of a rank's node; and the most forward
 * messages and aggregate bytes that one rank hands on (a partner that
 * serves a whole node's traffic to it: its load, not the average, sets
 * how long locality takes). */
typedef struct xchg_nbr_stats {
    double remote_blocks, remote_nodes, remote_bytes, forwards;
    double blocks, node_ranks;
    double local_bytes;  /* bytes to the rank's own node (locality_shm's copies) */
    double blocks_max;   /* the most blocks one rank sends and receives */
    double forwards_max, handed_bytes_max; /* the busiest rank's */
    double table_key; /* the tuning table every rank read (xchg_nbr_call's
                       * table_key, agreed), 0: none or not the same */
    int table_differ; /* ... and whether the ranks' tables differ */
} xchg_nbr_stats;

/* Everything the library knows of a neighbour algorithm (registry.c). */
typedef struct xchg_neighbor_info {
    xchg_neighbor_algo id;
    const char *name;
    const char *desc;                 /* one line: when it wins */
    xchg_nbr_fn run;
    const xchg_nbr_persist_ops *persist;
    xchg_nbr_analyse_fn analyse;      /* NULL: needs none */
    void (*analysis_free)(void *analysis);
    /* Its own XCHG_* settings (NULL-terminated; read with
     * xchg_setting_of); NULL: none. */
    const xchg_setting_def *const *settings;
} xchg_neighbor_info;

const xchg_neighbor_info *xchg_neighbor_registry_find(xchg_neighbor_algo id);
const xchg_neighbor_info *xchg_neighbor_registry_find_name(const char *name);
int xchg_neighbor_registry_count(void);
/* The i-th setting of the entries' own (NULL past the last). */
const xchg_setting_def *xchg_neighbor_registry_setting(int i);
const xchg_neighbor_info *xchg_neighbor_registry_at(int i);

/* The algorithms' functions are declared by registry.c from algos.def. */
int xchg_neighbor_locality(xchg_nbr_call *c); /* its persistent start runs it */
/* The agreed statistics in locality's analysis. */
const xchg_nbr_stats *xchg_neighbor_locality_stats(const void *analysis);
/* Whether locality_shm's analysis made its window (agreed). */
int xchg_neighbor_locality_shm_window(const void *analysis);

/* Waits for n requests of an exchange whose receives were posted before
 * their messages were seen: a failed request (a block larger than its
 * receive: MPI_ERR_TRUNCATE) comes back as a code naming the receive
 * block (from[k]: the block of request k, -1 for a send), also under
 * MPICH, which raises completion errors on MPI_COMM_WORLD's handler. With
 * flag not NULL it only tests (*flag set when all are complete). */
int xchg_nbr_complete(xchg_nbr_call *c, int n, MPI_Request req[], const int from[],
                      int *flag, const char *who);

/* Frees n inactive persistent requests (a plan's free); the first error. */
int xchg_nbr_requests_free(int n, MPI_Request req[]);

#endif /* XCHG_NEIGHBOR_INTERNAL_H */

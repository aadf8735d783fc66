/*
 * node_layout.h - src/node/: which ranks share a node, for every
 * node-aware algorithm of the three families (the alltoallv's node_pairs,
 * hierarchical and the others, the sparse _loc exchanges, the neighbour
 * locality paths).
 *
 * Nodes: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) of the private
 * communicator, or, when XCHG_RANKS_PER_NODE=k is set (agreed across
 * ranks), consecutive blocks of k ranks (P=7, k=3: nodes of 3, 3, 1), so
 * that one machine can play many nodes. Nodes are numbered by their lowest
 * rank (its "leader"); positions order the ranks node by node, members by
 * rank. Every rank holds the same tables. Built once per communicator and
 * cached in cs->ext[XCHG_EXT_NODES], shared by every algorithm that needs
 * it; its making is agreed (every rank gets it, or every rank the same
 * error and cs->nodes_failed set).
 */
#ifndef XCHG_NODE_LAYOUT_H
#define XCHG_NODE_LAYOUT_H

#include "progress/progress.h"

typedef struct xchg_node_layout {
    long rpn;        /* XCHG_RANKS_PER_NODE it was built for; 0: shared memory */
    MPI_Comm node;   /* this rank's node, members ordered by rank */
    int nnodes;      /* how many nodes */
    int mynode;      /* this rank's node */
    int lrank, lsize; /* this rank's place in its node, and the node's size */
    int *node_of;    /* rank -> its node */
    int *local_of;   /* rank -> its place in its node */
    int *perm;       /* position -> rank: node by node, members by rank */
    int *first;      /* node -> its first position; first[nnodes] = P */
} xchg_node_layout;

/* The layout of cs, made on first use (collective over cs->pcomm: one
 * split, an agreement and an allgather). On failure
 * every rank returns an error of the same class and cs->nodes_failed is
 * set. */
int xchg_node_layout_of(xchg_comm_state *cs, const xchg_node_layout **out);
/* Whether the layout of cs is made (no communication). */
int xchg_node_layout_ready(const xchg_comm_state *cs);

/* Rank of the member at place i of node M, and the size of node M. */
static inline int xchg_node_member(const xchg_node_layout *n, int M, int i)
{
    return n->perm[n->first[M] + i];
}
static inline int xchg_node_size(const xchg_node_layout *n, int M)
{
    return n->first[M + 1] - n->first[M];
}
/* The most members any node has. */
static inline int xchg_node_largest(const xchg_node_layout *n)
{
    int m = 0;
    for (int b = 0; b < n->nnodes; b++)
        if (xchg_node_size(n, b) > m)
            m = xchg_node_size(n, b);
    return m;
}

#endif /* XCHG_NODE_LAYOUT_H */

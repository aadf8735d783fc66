/*
 * node_state.h - a node-aware alltoallv algorithm's own state over the
 * communicator's node layout (node/node_layout.h), built, agreed and
 * cached once per communicator in the algorithm's registry slot.
 */
#ifndef XCHG_ALLTOALLV_NODE_STATE_H
#define XCHG_ALLTOALLV_NODE_STATE_H

#include "algo.h"
#include "node/node_layout.h"

/* A node-aware algorithm's own state over the layout (its tables), built
 * once per communicator by xchg_node_state_of. build makes it on this rank
 * and returns this rank's error (an error code naming what it lacked);
 * *state may be set even then, and is freed with free_state. */
typedef struct xchg_node_state_ops {
    xchg_algo algo;   /* whose registry slot caches it */
    const char *what; /* the agreement's words: "hierarchical: making the size tables" */
    int (*build)(xchg_comm_state *cs, const xchg_node_layout *nl, void **state);
    void (*free_state)(void *state);
} xchg_node_state_ops;

/* The state of ops->algo on cs, made on first use (collective over
 * cs->pcomm: the layout, then build on every rank and one agreement of
 * its outcome) and cached in the algorithm's slot. On failure every rank
 * returns an error of the same class, nothing is cached, and
 * cs->nodes_failed is set, so auto stops choosing node-aware algorithms. */
int xchg_node_state_of(xchg_comm_state *cs, const xchg_node_state_ops *ops, void **out);
/* The registry's prepare and ready over it: made now (nothing to make on
 * one rank, where every node-aware algorithm is a copy), and whether made. */
int xchg_node_state_prepare(xchg_comm_state *cs, const xchg_node_state_ops *ops);
int xchg_node_state_ready(const xchg_comm_state *cs, const xchg_node_state_ops *ops);

#endif /* XCHG_ALLTOALLV_NODE_STATE_H */

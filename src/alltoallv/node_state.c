/*
 * node_state.c - the making of a node-aware alltoallv algorithm's own
 * state over the node layout (node_state.h).
 */
#include "node_state.h"

int xchg_node_state_of(xchg_comm_state *cs, const xchg_node_state_ops *ops, void **out)
{
    const int slot = xchg_algo_slot(ops->algo);
    void *s = cs->ext[slot];
    if (s) {
        *out = s;
        return MPI_SUCCESS;
    }
    const xchg_node_layout *nl;
    int rc = xchg_node_layout_of(cs, &nl);
    if (rc == MPI_SUCCESS) /* every rank builds and agrees, even one that failed */
        rc = xchg_agree_errors(cs->pcomm, cs->rank, cs->size, ops->build(cs, nl, &s),
                               ops->what);
    if (rc != MPI_SUCCESS) {
        if (s)
            ops->free_state(s);
        cs->nodes_failed = 1; /* agreed: auto stops choosing node-aware algorithms */
        return rc;
    }
    cs->ext[slot] = s;
    cs->ext_free[slot] = ops->free_state;
    *out = s;
    return MPI_SUCCESS;
}

int xchg_node_state_prepare(xchg_comm_state *cs, const xchg_node_state_ops *ops)
{
    void *s;
    return cs->size > 1 ? xchg_node_state_of(cs, ops, &s) : MPI_SUCCESS;
}

int xchg_node_state_ready(const xchg_comm_state *cs, const xchg_node_state_ops *ops)
{
    return cs->size == 1 || cs->ext[xchg_algo_slot(ops->algo)] != NULL;
}

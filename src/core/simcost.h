/*
 * simcost.h - what the simulated build charges for libxchg's local work
 * (src/core/simcost.c); empty inlines on real MPI. Included by core.h.
 */
#ifndef XCHG_SIMCOST_H
#define XCHG_SIMCOST_H

#include <stddef.h>

/* xchg_charge_copy: a local copy or pack of `bytes` bytes, charged at
 * every copy site (the pack/unpack/self-copy helpers of core.h do): a
 * fixed cost on the rank's core, the bytes through the node's memory
 * (docs/simulation.md, "Local costs"). xchg_charge_copies: `calls` pieces
 * of `bytes` bytes in all, what MPI's datatype engine does when it packs
 * or unpacks a non-contiguous message (the node-aware algorithms' hindexed
 * sends and receives), which SMPI itself does not charge.
 * xchg_charge_ops: n operations of CPU work, at their calibrated cost
 * (core/calibrated.h), by the same rules for every algorithm and baseline.
 * xchg_charge_flush executes what was charged since the last flush: the
 * charges are summed until the rank next calls MPI (sim_flush.h makes
 * every MPI call of libxchg flush first) or leaves libxchg (xchg_raise).
 * All free on real MPI. */
typedef enum xchg_op {
    XCHG_OP_CHECK_PEER, /* the argument checks of an alltoallv, per peer */
    XCHG_OP_PEER,       /* one step of a loop over peers: counts read and summed */
    XCHG_OP_SIZE_SUM,   /* one step of a block-size check sum (node_pairs_shm) */
    XCHG_OP_MODEL,      /* one ranking of auto's candidates by its model */
    XCHG_OP_FLAG,       /* a node window's flag seen by a waiting member */
    XCHG_OP_COUNT
} xchg_op;
/* The flag latencies a node synchronisation of L members waits through
 * (node/shm_window.c): ceil(log2 L) rounds of its dissemination barrier
 * on nodes of up to 2^XCHG_NODE_SYNC_ROUNDS members (its round flags share
 * a region's flag lines), L - 1 serial reads on larger ones. */
enum { XCHG_NODE_SYNC_ROUNDS = 13 };
static inline int xchg_node_sync_flags(int L)
{
    if (L < 2)
        return 0;
    if (L > 1 << XCHG_NODE_SYNC_ROUNDS)
        return L - 1;
    int k = 0;
    while ((1 << k) < L)
        k++;
    return k;
}
#ifdef XCHG_SMPI
void xchg_charge_copy(size_t bytes);
void xchg_charge_copies(size_t calls, size_t bytes);
void xchg_charge_ops(xchg_op op, size_t n);
void xchg_charge_flush(void);
#else
static inline void xchg_charge_ops(xchg_op op, size_t n)
{
    (void)op, (void)n;
}
static inline void xchg_charge_copy(size_t bytes)
{
    (void)bytes;
}
static inline void xchg_charge_copies(size_t calls, size_t bytes)
{
    (void)calls, (void)bytes;
}
static inline void xchg_charge_flush(void)
{
}
#endif

/* The packing of one hindexed message of n pieces of len[] bytes: a copy
 * per nonempty piece (xchg_charge_copies). Outside XCHG_SMPI, nothing:
 * not even the loop. */
static inline void xchg_charge_pieces(const int *len, int n)
{
#ifdef XCHG_SMPI
    size_t pieces = 0, bytes = 0;
    for (int k = 0; k < n; k++)
        if (len[k] > 0)
            pieces++, bytes += (size_t)len[k];
    xchg_charge_copies(pieces, bytes);
#else
    (void)len, (void)n;
#endif
}

#endif /* XCHG_SIMCOST_H */

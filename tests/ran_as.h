/*
 * ran_as.h - whether the algorithm an exchange reports (xchg_get_stats,
 * xchg_request_algo) is right for one forced to `forced`: the algorithm
 * itself or, for shm, linear, which runs in shm's place where MPI refuses
 * the node-shared window or the window is too small for the call (and
 * node_pairs for node_pairs_shm, bruck_2level for bruck_2level_shm,
 * likewise).
 */
#ifndef RAN_AS_H
#define RAN_AS_H

#include "xchg.h"

static inline int ran_as_forced(xchg_algo forced, xchg_algo ran)
{
    return ran == forced || (forced == XCHG_ALGO_SHM && ran == XCHG_ALGO_LINEAR) ||
           (forced == XCHG_ALGO_NODE_PAIRS_SHM && ran == XCHG_ALGO_NODE_PAIRS) ||
           (forced == XCHG_ALGO_BRUCK_2LEVEL_SHM && ran == XCHG_ALGO_BRUCK_2LEVEL);
}

#endif

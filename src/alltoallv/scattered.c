/*
 * scattered.c - "scattered": spread-out with a bound on requests in flight.
 *
 * Linear's pairwise order with never more than K = XCHG_THROTTLE (default
 * 32) requests outstanding, as a sliding window (p2p_window.c, which says
 * why it cannot deadlock). MPICH's default alltoallv is this shape with
 * batches of 32; a bounded window keeps the unexpected-message queue and
 * the simultaneous rendezvous small at large P.
 */
#include "p2p_common.h"

int xchg_alltoallv_scattered(xchg_call *c)
{
    return xchg_p2p_windowed(c, c->cs->settings.throttle, xchg_algo_tag(XCHG_ALGO_SCATTERED),
                             "scattered");
}

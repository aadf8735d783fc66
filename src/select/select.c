/*
 * select.c - the automatic choice of an alltoallv algorithm.
 *
 * Rule 2 of the design: every rank must choose the same algorithm, so the
 * choice depends only on what all ranks know: the communicator size here.
 * (A later cost model may add one small allreduce of count statistics.)
 */
#include "xchg_internal.h"

int xchg_select_alltoallv(xchg_call *c, xchg_algo *chosen)
{
    /* Until the logarithmic algorithms and a tuned model exist, the
     * spread-out algorithm with a throttle is never much worse than the
     * vendor loop and bounds resources at large P. */
    *chosen = c->size <= 64 ? XCHG_ALGO_LINEAR : XCHG_ALGO_SCATTERED;
    return MPI_SUCCESS;
}

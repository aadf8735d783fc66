/*
 * bruck_twophase.c - "bruck_twophase": Bruck's algorithm without padding
 * (after Fan et al., HPDC 2022, "Optimizing the Bruck Algorithm for
 * Non-uniform All-to-all Communication").
 *
 * Blocks are packed to bytes in rotated order (slot i: the block for
 * rank+i). At step k = 0 .. ceil(log2 P)-1 the slots whose index has bit k
 * set go to rank+2^k and come from rank-2^k in two messages: first their
 * sizes, then exactly their bytes. Sizes travel with the data, so no global
 * maximum (and no allreduce) is needed, and uneven blocks cost only what
 * they weigh. Afterwards slot i holds the block from rank-i. Correct for
 * every P. The engine is xchg_bruck_twophase_run (bruck_common.c), shared
 * with bruck_radix; this is its radix 2.
 *
 * Cost: 2 ceil(log2 P) latencies; each byte is forwarded on average about
 * (log2 P)/2 times, plus 8 bytes of size per moving block per step. Wins
 * for small irregular blocks at large P, where the vendor pays P latencies.
 * Memory: what the rank holds at a step (its share of the forwarded data,
 * about its own volume for balanced exchanges) up to three times over (old
 * store, outgoing, new store) plus O(P) size tables. A rank that runs out of
 * temporary memory mid-exchange never blocks the others: see
 * bruck_common.c; it and every rank whose data passed through it return
 * MPI_ERR_NO_MEM.
 */
#include "bruck_common.h"

int xchg_alltoallv_bruck_twophase(xchg_call *c)
{
    return xchg_bruck_twophase_run(c, 2, "bruck_twophase");
}

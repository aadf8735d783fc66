/*
 * pairwise.c - "pairwise": P-1 steps of MPI_Sendrecv.
 *
 * At step i a rank sends to rank+i and receives from rank-i (mod P), which
 * is correct for any P, power of two or not. A side whose block is empty
 * uses MPI_PROC_NULL, so the step costs nothing for it; since the partner
 * sees the same empty block at the same step (matching type signatures),
 * both sides skip together and nothing waits forever. One message in
 * flight per rank: gentle on the network and on memory, best for large
 * messages; P-1 latencies in a row make it slow for small ones.
 */
#include "xchg_internal.h"

int xchg_alltoallv_pairwise(xchg_call *c)
{
    const int P = c->size, me = c->rank;
    int err = xchg_self_copy(c);
    for (int i = 1; i < P && err == MPI_SUCCESS; i++) {
        int dst = (me + i) % P, src = (me - i + P) % P;
        int sendto = (c->sendcounts[dst] > 0 && c->st.size > 0) ? dst : MPI_PROC_NULL;
        int recvfrom = (c->recvcounts[src] > 0 && c->rt.size > 0) ? src : MPI_PROC_NULL;
        if (sendto == MPI_PROC_NULL && recvfrom == MPI_PROC_NULL)
            continue;
        err = MPI_Sendrecv(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                           sendto == MPI_PROC_NULL ? 0 : c->sendcounts[dst], c->st.type,
                           sendto, XCHG_TAG_PAIRWISE,
                           xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                           recvfrom == MPI_PROC_NULL ? 0 : c->recvcounts[src], c->rt.type,
                           recvfrom, XCHG_TAG_PAIRWISE, c->comm, MPI_STATUS_IGNORE);
    }
    return err;
}

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
#include "p2p_common.h"

/* Every step runs on every rank even after an error (a truncated receive,
 * a self block too large): its partners are waiting for that step. The
 * first error is returned once the pattern is complete. The receive probes
 * first (p2p_common.h), the send is nonblocking, so the step cannot
 * deadlock: each rank's message of step i is out before it waits for its own. */
int xchg_alltoallv_pairwise(xchg_call *c)
{
    const int tag = xchg_algo_tag(XCHG_ALGO_PAIRWISE);
    const int P = c->size, me = c->rank;
    int err = xchg_self_copy(c);
    for (int i = 1; i < P; i++) {
        int dst = (me + i) % P, src = (me - i + P) % P, e = MPI_SUCCESS;
        MPI_Request sreq = MPI_REQUEST_NULL;
        if (c->sendcounts[dst] > 0 && c->st.size > 0)
            e = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                          c->sendcounts[dst], c->st.type, dst, tag, c->comm,
                          &sreq);
        if (c->recvcounts[src] > 0 && c->rt.size > 0) {
            int re = xchg_p2p_recv_probed(c, src, tag, NULL, "pairwise");
            if (e == MPI_SUCCESS)
                e = re;
        }
        int we = xchg_mpi_wait(&sreq, MPI_STATUS_IGNORE);
        if (e == MPI_SUCCESS)
            e = we;
        if (err == MPI_SUCCESS)
            err = e;
    }
    return err;
}

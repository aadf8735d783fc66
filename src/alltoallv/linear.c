/*
 * linear.c - "linear": the spread-out algorithm.
 *
 * Every receive and every send is posted at once, nonblocking, in pairwise
 * order (receive from rank-i, send to rank+i for i = 1..P-1) so that at any
 * moment ranks target different peers instead of all hitting rank 0 first.
 * Zero-size messages are skipped on both sides (the type signatures match,
 * so a zero send count pairs with a zero receive count) and the block to
 * self is copied locally. One latency, P-1 messages in flight: best for
 * medium P and medium to large messages; 2(P-1) requests of memory.
 */
#include "xchg_internal.h"

#include <stdlib.h>

int xchg_alltoallv_linear(xchg_call *c)
{
    const int P = c->size, me = c->rank;
    int err = MPI_SUCCESS;
    size_t rbytes = sizeof(MPI_Request) * 2 * (size_t)(P > 1 ? P - 1 : 1);
    MPI_Request *req = xchg_temp_alloc(c, rbytes, "linear: request array", &err);
    if (!req)
        return err;
    int n = 0;
    for (int i = 1; i < P && err == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P;
        if (c->recvcounts[src] > 0 && c->rt.size > 0)
            err = MPI_Irecv(xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                            c->recvcounts[src], c->rt.type, src, XCHG_TAG_LINEAR,
                            c->comm, &req[n++]);
    }
    for (int i = 1; i < P && err == MPI_SUCCESS; i++) {
        int dst = (me + i) % P;
        if (c->sendcounts[dst] > 0 && c->st.size > 0)
            err = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                            c->sendcounts[dst], c->st.type, dst, XCHG_TAG_LINEAR,
                            c->comm, &req[n++]);
    }
    if (err == MPI_SUCCESS)
        err = xchg_self_copy(c);
    int werr = MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    if (err == MPI_SUCCESS)
        err = werr;
    xchg_temp_free(c, req, rbytes);
    return err;
}

/*
 * scattered.c - "scattered": spread-out with a bound on requests in flight.
 *
 * As "linear" (pairwise order, zero-size skipped, self copied locally), but
 * never more than K requests outstanding (XCHG_THROTTLE, default 32, at
 * least 2): when the window is full, MPI_Waitany frees a slot before the
 * next is posted. This keeps the unexpected-message queue and the number of
 * simultaneous rendezvous bounded at large P (MPICH's "scattered" posts in
 * batches and waits for each batch; a sliding window never idles).
 *
 * It cannot deadlock: every rank posts step i's receive (from rank-i) and
 * send (to rank+i) in the same order, so the oldest pending request in the
 * whole job always has its partner already posted.
 */
#include "xchg_internal.h"

int xchg_alltoallv_scattered(xchg_call *c)
{
    const int P = c->size, me = c->rank;
    const int K = c->cs->settings.throttle;
    int err = MPI_SUCCESS;
    size_t rbytes = sizeof(MPI_Request) * (size_t)K;
    MPI_Request *req = xchg_temp_alloc(c, rbytes, "scattered: request window", &err);
    if (!req)
        return err;
    for (int k = 0; k < K; k++)
        req[k] = MPI_REQUEST_NULL;
    int active = 0;

    /* A free slot: the first never used, else wait for one to complete. */
    #define SLOT(slotvar)                                                     \
        do {                                                                  \
            if (active < K) {                                                 \
                slotvar = active++;                                           \
            } else {                                                          \
                err = xchg_waitany(c, K, req, &slotvar);      \
                if (slotvar == MPI_UNDEFINED)                                 \
                    slotvar = 0;                                              \
            }                                                                 \
        } while (0)

    err = xchg_self_copy(c);
    for (int i = 1; i < P && err == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P, dst = (me + i) % P, slot = 0;
        if (i % XCHG_POLL_EVERY == 0)
            xchg_select_poll(c);
        if (c->recvcounts[src] > 0 && c->rt.size > 0) {
            SLOT(slot);
            if (err != MPI_SUCCESS)
                break;
            err = MPI_Irecv(xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                            c->recvcounts[src], c->rt.type, src, XCHG_TAG_SCATTERED,
                            c->comm, &req[slot]);
            if (err != MPI_SUCCESS)
                break;
        }
        if (c->sendcounts[dst] > 0 && c->st.size > 0) {
            SLOT(slot);
            if (err != MPI_SUCCESS)
                break;
            err = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                            c->sendcounts[dst], c->st.type, dst, XCHG_TAG_SCATTERED,
                            c->comm, &req[slot]);
        }
    }
    #undef SLOT
    int werr = xchg_waitall(c, K, req);
    if (err == MPI_SUCCESS)
        err = werr;
    xchg_temp_free(c, req, rbytes);
    return err;
}

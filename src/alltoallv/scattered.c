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
 * It cannot deadlock: see below.
 */
#include "p2p_common.h"

/* Each step posts its send before it probes its receive (p2p_common.h: no
 * truncation can surface in a wait), so every rank's step-i message is out
 * before it waits for its own; a window of K >= 2 slots always holds a
 * request that can complete. Errors (a truncated receive, a self block too
 * large) are recorded and the steps go on: partners are waiting for them. */
int xchg_alltoallv_scattered(xchg_call *c)
{
    const int P = c->size, me = c->rank;
    const int K = c->cs->settings.throttle;
    int err = MPI_SUCCESS;
    size_t rbytes = sizeof(MPI_Request) * (size_t)K;
    MPI_Request *req = xchg_p2p_alloc_small(c, rbytes, "scattered: request window", &err);
    if (!req)
        return err; /* malloc itself failed */
    int lerr = err; /* over the limit: taken anyway, reported at the end */
    for (int k = 0; k < K; k++)
        req[k] = MPI_REQUEST_NULL;
    int active = 0, mpierr = MPI_SUCCESS;

    /* A free slot: the first never used, else wait for one to complete. */
    #define SLOT(slotvar)                                                     \
        do {                                                                  \
            if (active < K) {                                                 \
                slotvar = active++;                                           \
            } else {                                                          \
                mpierr = xchg_waitany(c, K, req, &slotvar);                    \
                if (slotvar == MPI_UNDEFINED)                                 \
                    slotvar = 0;                                              \
            }                                                                 \
        } while (0)

    err = xchg_self_copy(c);
    for (int i = 1; i < P && mpierr == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P, dst = (me + i) % P, slot = 0;
        if (i % XCHG_POLL_EVERY == 0)
            xchg_select_poll(c);
        if (c->sendcounts[dst] > 0 && c->st.size > 0) {
            SLOT(slot);
            if (mpierr != MPI_SUCCESS)
                break;
            mpierr = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                               c->sendcounts[dst], c->st.type, dst, XCHG_TAG_SCATTERED,
                               c->comm, &req[slot]);
        }
        if (mpierr == MPI_SUCCESS && c->recvcounts[src] > 0 && c->rt.size > 0) {
            SLOT(slot);
            if (mpierr != MPI_SUCCESS)
                break;
            int e = xchg_p2p_recv_probed(c, src, XCHG_TAG_SCATTERED, &req[slot],
                                         "scattered");
            if (err == MPI_SUCCESS)
                err = e;
        }
    }
    #undef SLOT
    int werr = xchg_waitall(c, K, req);
    if (mpierr == MPI_SUCCESS)
        mpierr = werr;
    if (err == MPI_SUCCESS)
        err = mpierr;
    if (err == MPI_SUCCESS)
        err = lerr;
    xchg_temp_free(c, req, rbytes);
    return err;
}

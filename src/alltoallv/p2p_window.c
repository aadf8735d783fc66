/*
 * p2p_window.c - the spread-out exchange with at most K requests in flight:
 * the engine of "scattered" (K = XCHG_THROTTLE) and of "linear" beyond
 * XCHG_MAX_INFLIGHT (linear.c).
 *
 * As linear (pairwise order, zero-size skipped, self copied locally), but
 * never more than K requests outstanding: when the window is full,
 * MPI_Testany frees a slot before the next is posted. This keeps the
 * posted and unexpected message queues and the number of simultaneous
 * rendezvous bounded at large P (MPICH's "scattered" posts in batches and
 * waits for each batch; a sliding window never idles).
 *
 * It cannot deadlock: see below.
 */
#include "p2p_common.h"

/* Each step posts its send, then takes its receive if the block is large
 * (over XCHG_P2P_PROBE_ABOVE bytes): probed, then received nonblocking in
 * the window. Small blocks are received after the last send, in the same
 * order, by blocking receives (p2p_common.h: no truncation can surface in
 * a wait); receiving each at its own step would chain the steps, each
 * waiting one latency for its partner (72 us instead of 25 at P=64, 16 B,
 * simulated). A small block need not travel eagerly (Open MPI's shared
 * memory switches to rendezvous above 4 KiB), so its sender's slot may
 * wait for this receive: whenever this rank would wait (window full, or a
 * large block not yet there) it polls instead, receiving the small blocks
 * already arrived (pending_service). So no rank waits on a partner that is
 * itself waiting without receiving, and a window of K >= 2 slots always
 * makes progress. Errors (a truncated receive, a self block too large) are
 * recorded and the steps go on: partners are waiting for them. */

typedef struct window_pending {
    int *src;   /* small blocks still to receive, in step order (-1: done) */
    int n, first, cursor;
} window_pending;

static int is_small(const xchg_call *c, int src)
{
    return c->recvcounts[src] > 0 && c->rt.size > 0 &&
           (MPI_Count)c->recvcounts[src] * c->rt.size <= XCHG_P2P_PROBE_ABOVE;
}

static void record(int e, int *err, int *mpierr)
{
    if (xchg_p2p_is_truncate(e)) {
        if (*err == MPI_SUCCESS)
            *err = e;
    } else if (e != MPI_SUCCESS && *mpierr == MPI_SUCCESS) {
        *mpierr = e;
    }
}

/* Receives up to 8 pending small blocks that have arrived (a rotating
 * cursor: every pending source is probed within a few calls). */
static void pending_service(xchg_call *c, window_pending *pd, int tag, const char *who,
                            int *err, int *mpierr)
{
    while (pd->first < pd->n && pd->src[pd->first] < 0)
        pd->first++;
    if (pd->first >= pd->n)
        return;
    if (pd->cursor < pd->first || pd->cursor >= pd->n)
        pd->cursor = pd->first;
    for (int probes = 0; probes < 8 && pd->cursor < pd->n; pd->cursor++) {
        int src = pd->src[pd->cursor];
        if (src < 0)
            continue;
        int flag = 0;
        probes++;
        int e = MPI_Iprobe(src, tag, c->comm, &flag, MPI_STATUS_IGNORE);
        if (e == MPI_SUCCESS && flag) {
            e = xchg_p2p_recv_probed(c, src, tag, NULL, who);
            pd->src[pd->cursor] = -1;
        }
        record(e, err, mpierr);
    }
}

int xchg_p2p_windowed(xchg_call *c, int K, int tag, const char *who)
{
    const int P = c->size, me = c->rank;
    int err = MPI_SUCCESS;
    size_t rbytes = sizeof(MPI_Request) * (size_t)K + sizeof(int) * (size_t)P;
    MPI_Request *req = xchg_p2p_alloc_small(c, rbytes, "the request window", &err);
    if (!req)
        return err; /* malloc itself failed */
    int lerr = err; /* over the limit: taken anyway, reported at the end */
    for (int k = 0; k < K; k++)
        req[k] = MPI_REQUEST_NULL;
    window_pending pd = {(int *)(req + K), 0, 0, 0};
    for (int i = 1; i < P; i++)
        if (is_small(c, (me - i + P) % P))
            pd.src[pd.n++] = (me - i + P) % P;
    int active = 0, mpierr = MPI_SUCCESS;

    /* A free slot: the first never used, else poll until one completes. */
    #define SLOT(slotvar)                                                     \
        do {                                                                  \
            if (active < K) {                                                 \
                slotvar = active++;                                           \
                break;                                                        \
            }                                                                 \
            for (;;) {                                                        \
                int flag_ = 0;                                                \
                mpierr = MPI_Testany(K, req, &slotvar, &flag_, MPI_STATUS_IGNORE); \
                if (mpierr != MPI_SUCCESS || flag_)                           \
                    break;                                                    \
                pending_service(c, &pd, tag, who, &err, &mpierr);                       \
                xchg_poll(c);                                          \
            }                                                                 \
            if (slotvar == MPI_UNDEFINED)                                     \
                slotvar = 0;                                                  \
        } while (0)

    err = xchg_self_copy(c);
    for (int i = 1; i < P && mpierr == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P, dst = (me + i) % P, slot = 0;
        if (i % XCHG_POLL_EVERY == 0)
            xchg_poll(c);
        if (c->sendcounts[dst] > 0 && c->st.size > 0) {
            SLOT(slot);
            if (mpierr != MPI_SUCCESS)
                break;
            mpierr = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                               c->sendcounts[dst], c->st.type, dst, tag,
                               c->comm, &req[slot]);
        }
        if (mpierr == MPI_SUCCESS && c->recvcounts[src] > 0 && c->rt.size > 0 &&
            !is_small(c, src)) {
            SLOT(slot);
            /* Wait for it polling (see above), then receive it. */
            for (int flag = 0; !flag && mpierr == MPI_SUCCESS;) {
                mpierr = MPI_Iprobe(src, tag, c->comm, &flag, MPI_STATUS_IGNORE);
                if (!flag) {
                    pending_service(c, &pd, tag, who, &err, &mpierr);
                    xchg_poll(c);
                }
            }
            if (mpierr != MPI_SUCCESS)
                break;
            record(xchg_p2p_recv_probed(c, src, tag, &req[slot], who),
                   &err, &mpierr);
        }
    }
    #undef SLOT
    /* The small blocks not yet received, in step order, blocking: every
     * send of this rank is posted. */
    for (int k = pd.first; k < pd.n && mpierr == MPI_SUCCESS; k++) {
        if (pd.src[k] < 0)
            continue;
        if (k % XCHG_POLL_EVERY == 0)
            xchg_poll(c);
        record(xchg_p2p_recv_probed(c, pd.src[k], tag, NULL, who),
               &err, &mpierr);
    }
    int werr = xchg_call_waitall(c, K, req);
    if (mpierr == MPI_SUCCESS)
        mpierr = werr;
    if (err == MPI_SUCCESS)
        err = mpierr;
    if (err == MPI_SUCCESS)
        err = lerr;
    xchg_temp_free(c, req, rbytes);
    return err;
}

/*
 * hybrid.c - "hybrid": small blocks through the radix Bruck, large blocks
 * directly, in one exchange.
 *
 * Real patterns mix a few large blocks with many small ones (zipf, hot
 * receivers, FFT transposes with uneven splits). Bruck forwards every byte
 * up to log_r P times, which is wasteful for the large blocks; the
 * spread-out algorithm pays a message per block, wasteful for the small
 * ones. Here a block of more than T bytes goes straight to its receiver
 * (MPI_Isend from the user's buffer, posted before anything else so it
 * travels while the Bruck runs) and the others go through the two-phase
 * radix Bruck (bruck_common.c, the engine of bruck_radix).
 *
 * Who classifies: the sender alone. Its Bruck carries, in place of a large
 * block, the block's byte count (a negative size word, no data), so every
 * receiver learns exactly which sources send to it directly and how many
 * bytes, whatever its own recvcounts say. It then posts exactly those
 * receives: a block larger than its receive count is drained and reported
 * (MPI_ERR_TRUNCATE), a smaller one writes only the bytes sent, as in every
 * algorithm, and a disagreement about the class can never leave a receive
 * or a send unmatched. (Classifying on both sides from recvcounts and
 * sendcounts would agree only for correct programs.) The price: a large
 * block's receive is posted after the receiver's Bruck rounds; eager sends
 * are already there, a rendezvous one starts then.
 *
 * T is XCHG_HYBRID_THRESHOLD (bytes, agreed like every setting); unset, the
 * default below. r is bruck_radix's (XCHG_BRUCK_RADIX, default ceil(sqrt
 * P)). Temporary memory: the Bruck's for the small blocks only (at most
 * P T bytes per store) plus P size words and 2P requests.
 */
#include "bruck_common.h"
#include "p2p_common.h"

#include <stdint.h>

/* Default threshold (bytes). Fitted in the faithful simulation (hpc, 16
 * ranks per node, sim/README.md "hybrid"). */
#define HYBRID_DEFAULT_THRESHOLD 256

size_t xchg_hybrid_threshold_for(const xchg_settings *s)
{
    return s->hybrid_threshold < 0 ? (size_t)HYBRID_DEFAULT_THRESHOLD
                                   : (size_t)s->hybrid_threshold;
}

int xchg_alltoallv_hybrid(xchg_call *c)
{
    const int P = c->size, me = c->rank;
    const size_t T = xchg_hybrid_threshold_for(&c->cs->settings);
    int err = MPI_SUCCESS, mpierr = MPI_SUCCESS;
    /* announced sizes, requests, then the direct flags */
    size_t bytes = (size_t)P * sizeof(int64_t) + 2 * (size_t)P * sizeof(MPI_Request) + (size_t)P;
    char *mem = xchg_p2p_alloc_small(c, bytes, "hybrid: tables", &err);
    if (!mem)
        return err; /* malloc itself failed */
    int64_t *announced = (int64_t *)mem;
    MPI_Request *req = (MPI_Request *)(announced + P);
    unsigned char *direct = (unsigned char *)(req + 2 * (size_t)P);
    int n = 0;

    /* Large blocks first, in pairwise order, so they travel meanwhile. */
    for (int i = 0; i < P; i++) {
        int dst = (me + i) % P;
        direct[dst] = xchg_bruck_send_bytes(c, dst) > T && mpierr == MPI_SUCCESS;
        if (direct[dst] && i > 0)
            mpierr = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                               c->sendcounts[dst], c->st.type, dst, XCHG_TAG_HYBRID, c->comm,
                               &req[n++]);
    }
    if (mpierr != MPI_SUCCESS) {
        /* MPI itself failed: no announcements could be trusted */
        xchg_waitall(c, n, req);
        xchg_temp_free(c, mem, bytes);
        return mpierr;
    }

    for (int j = 0; j < P; j++)
        announced[j] = -2; /* stays so if the engine cannot even start */
    int e = xchg_bruck_twophase_run_ex(c, xchg_bruck_radix_for(&c->cs->settings, P), "hybrid",
                                       direct, announced);
    if (err == MPI_SUCCESS)
        err = e;
    if (announced[me] == -2) {
        /* MPI failed inside the Bruck: nobody learnt of our large blocks,
         * so their sends may never match; let MPI finish them if it can. */
        for (int k = 0; k < n; k++)
            MPI_Request_free(&req[k]);
        xchg_temp_free(c, mem, bytes);
        return err;
    }

    /* Own large block: one local copy (the Bruck would pack and unpack it). */
    if (announced[me] >= 0) {
        e = xchg_self_copy(c);
        if (err == MPI_SUCCESS)
            err = e;
    }
    /* Exactly the receives the senders announced. */
    static char sink[1];
    for (int i = 1; i < P && mpierr == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P;
        if (announced[src] < 0)
            continue;
        size_t b = (size_t)announced[src], cap = xchg_bruck_recv_bytes(c, src);
        if (b <= cap && c->rt.size > 0 && b % (size_t)c->rt.size == 0) {
            mpierr = MPI_Irecv(xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                               (int)(b / (size_t)c->rt.size), c->rt.type, src,
                               XCHG_TAG_HYBRID, c->comm, &req[n++]);
            continue;
        }
        /* Cannot store it: drain it (a truncated zero-count receive, which
         * MPI_Recv reports on our communicator) and say why. */
        MPI_Recv(sink, 0, MPI_BYTE, src, XCHG_TAG_HYBRID, c->comm, MPI_STATUS_IGNORE);
        if (err == MPI_SUCCESS)
            err = b > cap
                      ? xchg_error_code(MPI_ERR_TRUNCATE, "hybrid: rank %d receives %zu bytes "
                                        "from rank %d but recvcounts[%d] holds only %zu",
                                        me, b, src, src, cap)
                      : xchg_error_code(MPI_ERR_TYPE, "hybrid: rank %d receives %zu bytes "
                                        "from rank %d, not a whole number of recvtype "
                                        "elements (%d bytes): the type signatures do not "
                                        "match", me, b, src, c->rt.size);
    }
    int werr = xchg_waitall(c, n, req);
    if (mpierr == MPI_SUCCESS)
        mpierr = werr;
    xchg_temp_free(c, mem, bytes);
    return err != MPI_SUCCESS ? err : mpierr;
}

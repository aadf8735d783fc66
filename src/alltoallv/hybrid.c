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
 * receiver learns exactly which sources sent to it directly and how many
 * bytes, whatever its own recvcounts say. (Classifying on both sides from
 * recvcounts and sendcounts would agree only for correct programs.)
 *
 * Receives are posted before anything is sent, as the MPI libraries'
 * spread-out alltoallv does, so a large block lands in place while the
 * Bruck runs (eagerly or by rendezvous): for every source whose room
 * (recvcounts) exceeds T, since only such a source can send directly in a
 * correct program. After the Bruck the announcements settle each of them:
 * announced, it stays (a block larger than the room fails it with
 * MPI_ERR_TRUNCATE, reported through the code as in linear.c); not
 * announced (the sender sent fewer bytes, through the Bruck), it is
 * cancelled. A block announced where no receive was posted (larger than
 * its room) is drained and reported. So no receive or send is ever left
 * unmatched. Measured in the faithful simulation (P=64):
 * receiving only after the Bruck, hot 256 B took 65.7 us and hot 1 KiB
 * 236.0; pre-posting, 63.9 and 220.8 (docs/algorithms.md "hybrid").
 *
 * Why two tags: a pre-posted receive whose sender sent nothing directly is
 * cancelled only once this rank's Bruck is over, and by then that sender
 * may already be in its next hybrid call, sending directly to us. Calls
 * alternate two tags (by a count of hybrid runs on the communicator, kept
 * in hybrid's slot of its state, the same on every rank), so that message
 * cannot match the stale receive; two calls ahead it cannot be, since its
 * Bruck needs a size word from this rank's next call.
 *
 * T is XCHG_HYBRID_THRESHOLD (bytes, agreed like every setting); unset, the
 * default below. r is bruck_radix's (XCHG_BRUCK_RADIX, default ceil(sqrt
 * P)). Temporary memory: the Bruck's for the small blocks only (at most
 * P T bytes per store) plus P size words and 2P requests.
 */
#include "bruck_common.h"
#include "p2p_common.h"

#include <stdint.h>

/* Default threshold (bytes). Fitted in the simulation (hpc preset, 16
 * ranks per node; docs/algorithms.md "hybrid"). */
#define HYBRID_DEFAULT_THRESHOLD 256

static const xchg_setting_def threshold = {"XCHG_HYBRID_THRESHOLD", XCHG_KIND_BYTES, 0,
                                           INT64_MAX, HYBRID_DEFAULT_THRESHOLD, NULL, NULL,
                                           NULL};
const xchg_setting_def *const xchg_hybrid_settings[] = {&threshold, NULL};

size_t xchg_hybrid_threshold_for(const xchg_settings *s)
{
    return (size_t)xchg_setting_of(s, &threshold);
}

/* Cancels and completes a receive that will not be matched. */
static void cancel_recv(MPI_Request *r)
{
    if (*r == MPI_REQUEST_NULL)
        return;
    MPI_Cancel(r);
    xchg_mpi_wait(r, MPI_STATUS_IGNORE);
}

/* Receives first, from every source that may send directly (room over T);
 * then the large sends, in pairwise order, so they travel while the Bruck
 * runs. direct[dst]: this rank sends dst's block directly; *ns: sends
 * posted into sreq. */
static int post_direct(xchg_call *c, size_t T, int tag, MPI_Request *rreq, MPI_Request *sreq,
                       unsigned char *direct, int *ns)
{
    const int P = c->size, me = c->rank;
    int mpierr = MPI_SUCCESS;
    for (int j = 0; j < P; j++)
        rreq[j] = MPI_REQUEST_NULL;
    for (int i = 1; i < P && mpierr == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P;
        if (xchg_bruck_recv_bytes(c, src) > T)
            mpierr = MPI_Irecv(xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                               c->recvcounts[src], c->rt.type, src, tag, c->comm, &rreq[src]);
    }
    for (int i = 0; i < P; i++) {
        int dst = (me + i) % P;
        direct[dst] = xchg_bruck_send_bytes(c, dst) > T && mpierr == MPI_SUCCESS;
        if (direct[dst] && i > 0)
            mpierr = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                               c->sendcounts[dst], c->st.type, dst, tag, c->comm, &sreq[(*ns)++]);
    }
    return mpierr;
}

/* Settles every source against its announcement (after the Bruck):
 * cancels the receives nobody will match, drains a direct block that had
 * no receive, and names a truncation or a type mismatch (the first). */
static int settle(xchg_call *c, const int64_t *announced, MPI_Request *rreq, int tag)
{
    const int P = c->size, me = c->rank;
    int err = MPI_SUCCESS;
    static char sink[1];
    for (int i = 1; i < P; i++) {
        int src = (me - i + P) % P;
        size_t b = announced[src] >= 0 ? (size_t)announced[src] : 0;
        size_t cap = xchg_bruck_recv_bytes(c, src);
        if (announced[src] < 0) {
            cancel_recv(&rreq[src]); /* sent through the Bruck, or nothing */
            continue;
        }
        if (rreq[src] == MPI_REQUEST_NULL) {
            /* room up to T, yet sent directly: it cannot fit; drain it (a
             * truncated zero-count receive, reported on our communicator) */
            xchg_mpi_recv(sink, 0, MPI_BYTE, src, tag, c->comm, MPI_STATUS_IGNORE);
        }
        if (err == MPI_SUCCESS && b > cap)
            err = xchg_error_code(MPI_ERR_TRUNCATE, "hybrid: rank %d receives %zu bytes from "
                                  "rank %d but recvcounts[%d] holds only %zu",
                                  me, b, src, src, cap);
        else if (err == MPI_SUCCESS && c->rt.size > 0 && b % (size_t)c->rt.size != 0)
            err = xchg_error_code(MPI_ERR_TYPE, "hybrid: rank %d receives %zu bytes from rank "
                                  "%d, not a whole number of recvtype elements (%d bytes): "
                                  "the type signatures do not match", me, b, src, c->rt.size);
    }
    return err;
}

int xchg_alltoallv_hybrid(xchg_call *c)
{
    const int P = c->size, me = c->rank;
    const size_t T = xchg_hybrid_threshold_for(&c->cs->settings);
    /* its runs on this communicator, kept in its slot: the tag parity */
    const unsigned long run = c->cs->ext_count[xchg_algo_slot(XCHG_ALGO_HYBRID)]++;
    const int tag = xchg_algo_tag(XCHG_ALGO_HYBRID) + (int)(run & 1);
    int err = MPI_SUCCESS;
    /* announced sizes, receive and send requests, then the direct flags */
    size_t bytes = (size_t)P * sizeof(int64_t) + 2 * (size_t)P * sizeof(MPI_Request) + (size_t)P;
    char *mem = xchg_p2p_alloc_small(c, bytes, "hybrid: tables", &err);
    if (!mem)
        return err; /* malloc itself failed */
    int64_t *announced = (int64_t *)mem;
    MPI_Request *rreq = (MPI_Request *)(announced + P); /* by source */
    MPI_Request *sreq = rreq + P;                        /* packed */
    unsigned char *direct = (unsigned char *)(sreq + P);
    int ns = 0;

    int mpierr = post_direct(c, T, tag, rreq, sreq, direct, &ns);
    if (mpierr != MPI_SUCCESS) {
        /* MPI itself failed: no announcements could be trusted */
        for (int j = 0; j < P; j++)
            cancel_recv(&rreq[j]);
        xchg_call_waitall(c, ns, sreq);
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
        for (int j = 0; j < P; j++)
            cancel_recv(&rreq[j]);
        for (int k = 0; k < ns; k++)
            MPI_Request_free(&sreq[k]);
        xchg_temp_free(c, mem, bytes);
        return err;
    }

    /* Own large block: one local copy (the Bruck would pack and unpack it). */
    if (announced[me] >= 0) {
        e = xchg_self_copy(c);
        if (err == MPI_SUCCESS)
            err = e;
    }
    e = settle(c, announced, rreq, tag);
    if (err == MPI_SUCCESS)
        err = e;
    /* A truncated pre-posted receive fails in the wait (the announcement
     * already named it above); xchg_p2p_wait_posted keeps MPICH from
     * aborting there. */
    int bad, werr = xchg_p2p_wait_posted(c, P, rreq, &bad);
    int serr = xchg_call_waitall(c, ns, sreq);
    if (mpierr == MPI_SUCCESS)
        mpierr = werr != MPI_SUCCESS ? werr : serr;
    xchg_temp_free(c, mem, bytes);
    return err != MPI_SUCCESS ? err : mpierr;
}

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
 *
 * Beyond XCHG_MAX_INFLIGHT requests (default 2048, i.e. from 1026 ranks)
 * it keeps that many in flight instead, as a sliding window
 * (p2p_window.c): at 4096+ ranks, thousands of posted receives and
 * unexpected messages per rank overflow a NIC's match list (TuNA's
 * warning for Slingshot). Its persistent form then takes the generic path
 * (each start runs the windowed exchange).
 */
#include "p2p_common.h"

#include <stdint.h>
#include <stdlib.h>

/* Receives first, as MPICH does: every block up to XCHG_P2P_PROBE_ABOVE
 * bytes (eager range) gets its receive before any send, so its overhead
 * overlaps the flows instead of following them (P=64, faithful
 * simulation, receiving each block blocking after the sends -> pre-posted:
 * random 256 B 27.1 -> 25.3 us, zipf 256 B 31.9 -> 25.9, random 1 KiB
 * 79.2 -> 70.5, zipf 1 KiB 82.9 -> 70.9; MPICH's model 25.6, 25.6, 72.6,
 * 80.0; docs/algorithms.md "linear"). A message larger than its receive is
 * truncated by MPI, nothing written past the block, and reported by
 * xchg_p2p_wait_posted as a code even under MPICH. Larger blocks are
 * probed once the sends are out (p2p_common.h), so a block too large for
 * its receive count is drained, not truncated in the final wait. */
int xchg_alltoallv_linear(xchg_call *c)
{
    const int tag = xchg_algo_tag(XCHG_ALGO_LINEAR);
    if (xchg_linear_bounded(c))
        return xchg_p2p_windowed(c, c->cs->settings.max_inflight, tag, "linear");
    const int P = c->size, me = c->rank;
    int err = MPI_SUCCESS, mpierr = MPI_SUCCESS;
    const size_t slots = (size_t)(P > 1 ? P - 1 : 1);
    size_t rbytes = (sizeof(MPI_Request) * 2 + sizeof(int)) * slots;
    MPI_Request *req = xchg_p2p_alloc_small(c, rbytes, "linear: request array", &err);
    if (!req)
        return err; /* malloc itself failed */
    int *from = (int *)(req + 2 * slots); /* the source of each posted receive */
    int n = 0;
    for (int i = 1; i < P && mpierr == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P;
        MPI_Count room = (MPI_Count)c->recvcounts[src] * (MPI_Count)c->rt.size;
        if (room > 0 && room <= XCHG_P2P_PROBE_ABOVE) {
            from[n] = src;
            mpierr = MPI_Irecv(xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                               c->recvcounts[src], c->rt.type, src, tag, c->comm,
                               &req[n++]);
        }
    }
    const int nposted = n;
    for (int i = 1; i < P && mpierr == MPI_SUCCESS; i++) {
        int dst = (me + i) % P;
        if (i % XCHG_POLL_EVERY == 0)
            xchg_poll(c);
        if (c->sendcounts[dst] > 0 && c->st.size > 0)
            mpierr = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                               c->sendcounts[dst], c->st.type, dst, tag,
                               c->comm, &req[n++]);
    }
    int e = xchg_self_copy(c);
    if (err == MPI_SUCCESS)
        err = e;
    for (int i = 1; i < P && mpierr == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P;
        MPI_Count room = (MPI_Count)c->recvcounts[src] * (MPI_Count)c->rt.size;
        if (room > XCHG_P2P_PROBE_ABOVE) {
            e = xchg_p2p_recv_probed(c, src, tag, &req[n++], "linear");
            if (err == MPI_SUCCESS)
                err = e;
        }
    }
    int bad = -1;
    int werr = xchg_p2p_wait_posted(c, n, req, &bad);
    if (werr != MPI_SUCCESS && xchg_p2p_is_truncate(werr)) {
        /* a pre-posted receive was too small: MPI wrote only its block */
        if (err == MPI_SUCCESS) {
            if (bad >= 0 && bad < nposted)
                err = xchg_error_code(MPI_ERR_TRUNCATE, "linear: rank %d receives more than "
                                      "recvcounts[%d] holds (%lld bytes) from rank %d", me,
                                      from[bad], (long long)c->recvcounts[from[bad]] *
                                      c->rt.size, from[bad]);
            else
                err = xchg_error_code(MPI_ERR_TRUNCATE, "linear: rank %d receives more from "
                                      "some rank than its recvcounts entry holds", me);
        }
        werr = MPI_SUCCESS;
    }
    if (mpierr == MPI_SUCCESS)
        mpierr = werr;
    xchg_temp_free(c, req, rbytes);
    return err != MPI_SUCCESS ? err : mpierr;
}

/* Persistent plan: MPI_Recv_init/MPI_Send_init for every nonzero block, in
 * the same spread-out order, once at init; a start is one MPI_Startall and
 * the self copy. Init also learns, with one MPI_Alltoall, how many bytes
 * each peer really sends: a receive is set up exactly for the peers that
 * send, and a block larger than its receive count is not received into the
 * user's buffer (its truncation would surface in MPI_Waitall, on
 * MPI_COMM_WORLD's handler under MPICH) but drained at each wait and
 * reported as MPI_ERR_TRUNCATE. */
typedef struct linear_plan {
    int n;
    MPI_Request *req;
    size_t bytes;
    int ntrunc;            /* peers whose block is too large */
    int *trunc_src;
    int64_t *trunc_bytes;
} linear_plan;

static int linear_pfree(xchg_call *c, void *p)
{
    linear_plan *lp = p;
    if (!lp)
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < lp->n; i++)
        if (lp->req[i] != MPI_REQUEST_NULL) {
            int r = MPI_Request_free(&lp->req[i]);
            if (rc == MPI_SUCCESS)
                rc = r;
        }
    xchg_temp_free(c, lp->req, lp->bytes);
    free(lp->trunc_src);
    free(lp->trunc_bytes);
    free(lp);
    return rc;
}

static int linear_pinit(xchg_call *c, void **plan)
{
    const int tag = xchg_algo_tag(XCHG_ALGO_LINEAR);
    const int P = c->size, me = c->rank;
    int err = MPI_SUCCESS;
    /* What each peer sends me, in bytes: collective, so it comes before any
     * local failure can make this rank leave. */
    int64_t *sizes = malloc(sizeof(int64_t) * 2 * (size_t)P);
    if (sizes) {
        for (int j = 0; j < P; j++)
            sizes[j] = (int64_t)c->sendcounts[j] * c->st.size;
        err = xchg_mpi_alltoall(sizes, 1, MPI_INT64_T, sizes + P, 1, MPI_INT64_T, c->comm);
    } else { /* 16 P bytes: nothing sensible is left to take part with */
        err = xchg_error_code(MPI_ERR_NO_MEM, "linear: out of memory for the plan");
    }
    const int64_t *incoming = sizes ? sizes + P : NULL;
    linear_plan *lp = err == MPI_SUCCESS ? calloc(1, sizeof *lp) : NULL;
    if (lp) {
        lp->trunc_src = malloc(sizeof(int) * (size_t)P);
        lp->trunc_bytes = malloc(sizeof(int64_t) * (size_t)P);
        lp->bytes = sizeof(MPI_Request) * 2 * (size_t)(P > 1 ? P - 1 : 1);
        if (lp->trunc_src && lp->trunc_bytes)
            lp->req = xchg_temp_alloc(c, lp->bytes, "linear: persistent requests", &err);
        else
            err = xchg_error_code(MPI_ERR_NO_MEM, "linear: out of memory for the plan");
    } else if (err == MPI_SUCCESS) {
        err = xchg_error_code(MPI_ERR_NO_MEM, "linear: out of memory for the plan");
    }
    if (err != MPI_SUCCESS) {
        free(sizes);
        if (lp) {
            free(lp->trunc_src);
            free(lp->trunc_bytes);
            free(lp);
        }
        return err;
    }
    for (int i = 1; i < P && err == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P;
        int64_t room = (int64_t)c->recvcounts[src] * c->rt.size;
        if (incoming[src] == 0)
            continue; /* nothing comes, whatever recvcounts says */
        if (incoming[src] > room) {
            lp->trunc_src[lp->ntrunc] = src;
            lp->trunc_bytes[lp->ntrunc++] = incoming[src];
            continue;
        }
        err = MPI_Recv_init(xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                            c->recvcounts[src], c->rt.type, src, tag, c->comm,
                            &lp->req[lp->n++]);
    }
    free(sizes);
    for (int i = 1; i < P && err == MPI_SUCCESS; i++) {
        int dst = (me + i) % P;
        if (c->sendcounts[dst] > 0 && c->st.size > 0)
            err = MPI_Send_init(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                                c->sendcounts[dst], c->st.type, dst, tag,
                                c->comm, &lp->req[lp->n++]);
    }
    if (err != MPI_SUCCESS) {
        linear_pfree(c, lp);
        return err;
    }
    *plan = lp;
    return MPI_SUCCESS;
}

static int linear_pstart(xchg_call *c, void *p)
{
    linear_plan *lp = p;
    int err = lp->n ? MPI_Startall(lp->n, lp->req) : MPI_SUCCESS;
    if (err == MPI_SUCCESS)
        err = xchg_self_copy(c);
    return err;
}

/* Drains the blocks too large for their receive counts (blocking: the
 * partners' sends are started by then or will be) and reports the first. */
static int linear_drain(xchg_call *c, linear_plan *lp)
{
    const int tag = xchg_algo_tag(XCHG_ALGO_LINEAR);
    static char sink[1];
    int err = MPI_SUCCESS;
    for (int k = 0; k < lp->ntrunc; k++) {
        int src = lp->trunc_src[k];
        xchg_mpi_recv(sink, 0, MPI_BYTE, src, tag, c->comm, MPI_STATUS_IGNORE);
        if (err == MPI_SUCCESS)
            err = xchg_error_code(MPI_ERR_TRUNCATE, "linear: rank %d receives %lld bytes "
                                  "from rank %d but recvcounts[%d] holds only %lld",
                                  c->rank, (long long)lp->trunc_bytes[k], src, src,
                                  (long long)c->recvcounts[src] * c->rt.size);
    }
    return err;
}

static int linear_pwait(xchg_call *c, void *p)
{
    linear_plan *lp = p;
    int derr = linear_drain(c, lp);
    int err = xchg_mpi_waitall(lp->n, lp->req, MPI_STATUSES_IGNORE);
    return derr != MPI_SUCCESS ? derr : err;
}

static int linear_ptest(xchg_call *c, void *p, int *flag)
{
    linear_plan *lp = p;
    if (lp->ntrunc) { /* erroneous counts: complete now, report the truncation */
        *flag = 1;
        return linear_pwait(c, p);
    }
    return MPI_Testall(lp->n, lp->req, flag, MPI_STATUSES_IGNORE);
}

/* Beyond XCHG_MAX_INFLIGHT the generic path: each start runs the windowed
 * exchange (a plan would start 2 (P - 1) requests at once). */
static int linear_pfits(const xchg_call *c)
{
    return !xchg_linear_bounded(c);
}

const xchg_persist_ops xchg_linear_persist = {linear_pinit, linear_pstart, linear_ptest,
                                              linear_pwait, linear_pfree, linear_pfits};

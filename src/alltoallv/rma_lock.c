/*
 * rma_lock.c - "rma_lock": passive-target puts with point-to-point
 * notification, no collective synchronisation per exchange.
 *
 * Init (collective) creates the window (as rma_fence: recvbuf or a packed
 * staging buffer, see rma_common.h), opens one MPI_Win_lock_all(NOCHECK)
 * epoch that lasts until free, and sets up zero-byte persistent requests
 * with each peer it exchanges data with. A pair (origin o, target t) is
 * active when o sends t a nonzero block (both know it from the init
 * exchange). Protocol of one exchange, on the private communicator:
 *
 *   target t, at start:  post receives for READY (its first tag) from
 *                        each of its targets and DONE (its second)
 *                        from each of its origins; then send READY to each
 *                        origin: "my window may be written now".
 *   origin o, on READY from t:  MPI_Put the block, MPI_Win_flush(t) (the
 *                        data is in t's memory), send DONE to t.
 *   target t, at wait:   all DONE received -> every block has arrived;
 *                        MPI_Win_sync, unpack staged blocks, self copy.
 *
 * So a target never reads before the data is there (DONE follows a flush),
 * and an origin never writes a buffer its owner may still read: READY is
 * sent only from xchg_start, which the caller calls after it has finished
 * with the previous result (and, for MPI_IN_PLACE, after start has copied
 * the data to send out of recvbuf). Back-to-back starts are safe: messages
 * between two ranks with the same tag are not overtaken, so READY/DONE of
 * exchange k+1 can only match the receives of exchange k+1 (those of k all
 * completed in wait k), and a READY of k+1 that arrives while its receiver
 * is still in exchange k simply waits, unexpected, until the receive of k+1
 * is posted. The origin's send buffer is free again once wait returns,
 * since every put was flushed before DONE was sent.
 *
 * Versus rma_fence: no barrier-like fence, each rank synchronises only with
 * the ranks it exchanges data with (good for sparse patterns), at the cost
 * of two zero-byte messages and one flush per nonzero block.
 */
#include "rma_common.h"

#include <stdlib.h>

typedef struct lock_plan {
    xchg_rma w;
    int nt, no;           /* active targets, active origins */
    int *tgt;             /* targets, spread-out order (rank+i) */
    MPI_Request *rdy_in;  /* nt: READY from each target */
    MPI_Request *done_out;/* nt: DONE to each target */
    MPI_Request *rdy_out; /* no: READY to each origin */
    MPI_Request *done_in; /* no: DONE from each origin */
    int *idx;             /* nt: scratch for MPI_Testsome/Waitsome */
    int handled;          /* targets already served in this exchange */
    void *mem;
    size_t mem_bytes;
    int locked;
} lock_plan;

static int lock_free(xchg_call *c, void *p)
{
    lock_plan *lp = p;
    int rc = MPI_SUCCESS, r;
    MPI_Request *all = lp->rdy_in;
    for (int i = 0; all && i < 2 * (lp->nt + lp->no); i++)
        if (all[i] != MPI_REQUEST_NULL && (r = MPI_Request_free(&all[i])) != MPI_SUCCESS &&
            rc == MPI_SUCCESS)
            rc = r;
    if (lp->locked && (r = MPI_Win_unlock_all(lp->w.win)) != MPI_SUCCESS && rc == MPI_SUCCESS)
        rc = r;
    if ((r = xchg_rma_teardown(c, &lp->w)) != MPI_SUCCESS && rc == MPI_SUCCESS)
        rc = r;
    xchg_temp_free(c, lp->mem, lp->mem_bytes);
    free(lp);
    return rc;
}

static int lock_init(xchg_call *c, void **plan)
{
    const int P = c->size, me = c->rank;
    const int ready_tag = xchg_algo_tag(XCHG_ALGO_RMA_LOCK), done_tag = ready_tag + 1;
    lock_plan *lp = calloc(1, sizeof *lp);
    xchg_rma dummy;
    int rc = xchg_rma_setup(c, lp ? &lp->w : &dummy, 0); /* collective: all ranks */
    if (!lp) {
        if (rc == MPI_SUCCESS)
            xchg_rma_teardown(c, &dummy);
        return xchg_error_code(MPI_ERR_NO_MEM, "rma_lock: out of memory");
    }
    if (rc != MPI_SUCCESS) {
        free(lp);
        return rc;
    }
    for (int j = 0; j < P; j++) {
        lp->nt += lp->w.sbytes[j] > 0;
        lp->no += lp->w.rbytes[j] > 0;
    }
    lp->mem_bytes = sizeof(MPI_Request) * 2 * (size_t)(lp->nt + lp->no) +
                    sizeof(int) * 2 * (size_t)lp->nt;
    lp->mem = xchg_temp_alloc(c, lp->mem_bytes, "rma_lock: notification requests", &rc);
    /* A rank without them must not leave alone: the others would wait for
     * its READY while it frees the window (collective). */
    rc = xchg_rma_agree(c, rc, "rma_lock: notification setup");
    if (rc == MPI_SUCCESS) {
        lp->rdy_in = lp->mem;
        lp->done_out = lp->rdy_in + lp->nt;
        lp->rdy_out = lp->done_out + lp->nt;
        lp->done_in = lp->rdy_out + lp->no;
        lp->tgt = (int *)(lp->done_in + lp->no);
        lp->idx = lp->tgt + lp->nt;
        for (int i = 0; i < 2 * (lp->nt + lp->no); i++)
            lp->rdy_in[i] = MPI_REQUEST_NULL;
        int t = 0, o = 0;
        for (int i = 1; i < P && rc == MPI_SUCCESS; i++) {
            int dst = (me + i) % P, src = (me - i + P) % P;
            if (lp->w.sbytes[dst] > 0) {
                lp->tgt[t] = dst;
                rc = MPI_Recv_init(NULL, 0, MPI_BYTE, dst, ready_tag, c->comm,
                                   &lp->rdy_in[t]);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Send_init(NULL, 0, MPI_BYTE, dst, done_tag, c->comm,
                                       &lp->done_out[t]);
                t++;
            }
            if (rc == MPI_SUCCESS && lp->w.rbytes[src] > 0) {
                rc = MPI_Send_init(NULL, 0, MPI_BYTE, src, ready_tag, c->comm,
                                   &lp->rdy_out[o]);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Recv_init(NULL, 0, MPI_BYTE, src, done_tag, c->comm,
                                       &lp->done_in[o]);
                o++;
            }
        }
    }
    /* The lock is local (NOCHECK: nobody ever takes an exclusive lock). */
    if (rc == MPI_SUCCESS && (rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, lp->w.win)) == MPI_SUCCESS)
        lp->locked = 1;
    if (rc != MPI_SUCCESS) {
        lock_free(c, lp);
        return rc;
    }
    *plan = lp;
    return MPI_SUCCESS;
}

/* Serves the targets in idx[0..n): put, flush, DONE. */
static int serve(xchg_call *c, lock_plan *lp, int n)
{
    int rc = MPI_SUCCESS;
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++)
        rc = xchg_rma_put(c, &lp->w, lp->tgt[lp->idx[k]]);
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++)
        rc = MPI_Win_flush(lp->tgt[lp->idx[k]], lp->w.win);
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++)
        rc = MPI_Start(&lp->done_out[lp->idx[k]]);
    lp->handled += n;
    return rc;
}

/* Serves whichever targets are ready (blocking: at least one). */
static int progress(xchg_call *c, lock_plan *lp, int blocking)
{
    int n = 0;
    if (lp->handled == lp->nt)
        return MPI_SUCCESS;
    int rc = blocking ? xchg_mpi_waitsome(lp->nt, lp->rdy_in, &n, lp->idx, MPI_STATUSES_IGNORE)
                      : MPI_Testsome(lp->nt, lp->rdy_in, &n, lp->idx, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS || n == MPI_UNDEFINED || n == 0)
        return rc;
    return serve(c, lp, n);
}

static int lock_start(xchg_call *c, void *p)
{
    lock_plan *lp = p;
    lp->handled = 0;
    int rc = MPI_SUCCESS;
    if (lp->nt)
        rc = MPI_Startall(lp->nt, lp->rdy_in);
    if (rc == MPI_SUCCESS && lp->no)
        rc = MPI_Startall(lp->no, lp->done_in);
    /* A packing error is reported, but the protocol goes on: the origins
     * wait for our READY, the targets for our DONE (wait completes them). */
    int perr = rc == MPI_SUCCESS ? xchg_rma_pack(c, &lp->w) : MPI_SUCCESS;
    /* the caller's (and in-place start's) stores to recvbuf precede READY */
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_sync(lp->w.win);
    if (rc == MPI_SUCCESS && lp->no)
        rc = MPI_Startall(lp->no, lp->rdy_out);
    if (rc == MPI_SUCCESS)
        rc = progress(c, lp, 0);
    return rc != MPI_SUCCESS ? rc : perr;
}

static int finish(xchg_call *c, lock_plan *lp)
{
    int rc = MPI_Win_sync(lp->w.win); /* the puts are visible to our loads */
    if (rc == MPI_SUCCESS)
        rc = xchg_rma_finish(c, &lp->w);
    return rc;
}

static int lock_wait(xchg_call *c, void *p)
{
    lock_plan *lp = p;
    int rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && lp->handled < lp->nt)
        rc = progress(c, lp, 1);
    /* rdy_in..done_in are contiguous: 2(nt+no) requests, all started */
    if (rc == MPI_SUCCESS)
        rc = xchg_mpi_waitall(2 * (lp->nt + lp->no), lp->rdy_in, MPI_STATUSES_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = finish(c, lp);
    return rc;
}

static int lock_test(xchg_call *c, void *p, int *flag)
{
    lock_plan *lp = p;
    *flag = 0;
    int rc = progress(c, lp, 0);
    if (rc != MPI_SUCCESS || lp->handled < lp->nt)
        return rc;
    rc = MPI_Testall(2 * (lp->nt + lp->no), lp->rdy_in, flag, MPI_STATUSES_IGNORE);
    if (rc == MPI_SUCCESS && *flag)
        rc = finish(c, lp);
    return rc;
}

const xchg_persist_ops xchg_rma_lock_persist = {lock_init, lock_start, lock_test, lock_wait,
                                                lock_free, NULL};

int xchg_alltoallv_rma_lock(xchg_call *c)
{
    return xchg_persist_oneshot(&xchg_rma_lock_persist, c);
}

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
        if (i % XCHG_POLL_EVERY == 0)
            xchg_select_poll(c);
        if (c->recvcounts[src] > 0 && c->rt.size > 0)
            err = MPI_Irecv(xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                            c->recvcounts[src], c->rt.type, src, XCHG_TAG_LINEAR,
                            c->comm, &req[n++]);
    }
    for (int i = 1; i < P && err == MPI_SUCCESS; i++) {
        int dst = (me + i) % P;
        if (i % XCHG_POLL_EVERY == 0)
            xchg_select_poll(c);
        if (c->sendcounts[dst] > 0 && c->st.size > 0)
            err = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                            c->sendcounts[dst], c->st.type, dst, XCHG_TAG_LINEAR,
                            c->comm, &req[n++]);
    }
    if (err == MPI_SUCCESS)
        err = xchg_self_copy(c);
    int werr = xchg_waitall(c, n, req);
    if (err == MPI_SUCCESS)
        err = werr;
    xchg_temp_free(c, req, rbytes);
    return err;
}

/* Persistent plan: MPI_Recv_init/MPI_Send_init for every nonzero block, in
 * the same spread-out order, once at init; a start is one MPI_Startall and
 * the self copy. */
typedef struct linear_plan {
    int n;
    MPI_Request *req;
    size_t bytes;
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
    free(lp);
    return rc;
}

static int linear_pinit(xchg_call *c, void **plan)
{
    const int P = c->size, me = c->rank;
    int err = MPI_SUCCESS;
    linear_plan *lp = calloc(1, sizeof *lp);
    if (!lp)
        return xchg_error_code(MPI_ERR_NO_MEM, "linear: out of memory for the plan");
    lp->bytes = sizeof(MPI_Request) * 2 * (size_t)(P > 1 ? P - 1 : 1);
    lp->req = xchg_temp_alloc(c, lp->bytes, "linear: persistent requests", &err);
    if (!lp->req) {
        free(lp);
        return err;
    }
    for (int i = 1; i < P && err == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P;
        if (c->recvcounts[src] > 0 && c->rt.size > 0)
            err = MPI_Recv_init(xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                                c->recvcounts[src], c->rt.type, src, XCHG_TAG_LINEAR,
                                c->comm, &lp->req[lp->n++]);
    }
    for (int i = 1; i < P && err == MPI_SUCCESS; i++) {
        int dst = (me + i) % P;
        if (c->sendcounts[dst] > 0 && c->st.size > 0)
            err = MPI_Send_init(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                                c->sendcounts[dst], c->st.type, dst, XCHG_TAG_LINEAR,
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

static int linear_pwait(xchg_call *c, void *p)
{
    (void)c;
    linear_plan *lp = p;
    return MPI_Waitall(lp->n, lp->req, MPI_STATUSES_IGNORE);
}

static int linear_ptest(xchg_call *c, void *p, int *flag)
{
    (void)c;
    linear_plan *lp = p;
    return MPI_Testall(lp->n, lp->req, flag, MPI_STATUSES_IGNORE);
}

const xchg_persist_ops xchg_linear_persist = {linear_pinit, linear_pstart, linear_ptest,
                                              linear_pwait, linear_pfree};

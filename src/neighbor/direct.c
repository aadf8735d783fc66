/*
 * direct.c - "direct": one message per neighbour block, receives posted
 * before any send; the persistent form prepares every message once
 * (MPI_Recv_init, MPI_Send_init) and starts them all with MPI_Startall.
 *
 * Which blocks move: a block of zero bytes (count 0, or a datatype of size
 * 0) is skipped on its own side, as is one whose neighbour is
 * MPI_PROC_NULL. In a correct program the send and receive of one block
 * carry the same type signature, so a skipped send always meets a skipped
 * receive, and the k-th message to a repeated neighbour still meets that
 * neighbour's k-th receive from this rank (MPI's non-overtaking order on
 * one source, tag and communicator): the pairing of repeated neighbours
 * and self-loops is MPI's own (Cartesian: per direction, see
 * xchg_nbr_send_tag). (A zero-byte send against a nonzero
 * receive is erroneous in MPI; here the receive would wait for ever:
 * XCHG_CHECK=1 finds it before anything moves.) Messages to self go
 * through MPI like the others, so their pairing needs no special case.
 */
#include "neighbor_internal.h"

#include <stdlib.h>

static int recv_moves(const xchg_nbr_call *c, int i)
{
    return c->recvcounts[i] > 0 && c->rt.size > 0 && c->g->sources[i] != MPI_PROC_NULL;
}

static int send_moves(const xchg_nbr_call *c, int j)
{
    return c->sendcounts[j] > 0 && c->st.size > 0 && c->g->dests[j] != MPI_PROC_NULL;
}

/* Requests and, per request, its receive block (-1: a send): one
 * allocation, counted but never refused (a rank refusing it would leave
 * its neighbours waiting; *limit_err then holds the limit's error, to be
 * returned once the exchange is complete). */
static MPI_Request *requests_alloc(xchg_nbr_call *c, int **from, size_t *bytes,
                                   int *limit_err)
{
    int n = c->g->indegree + c->g->outdegree;
    *bytes = (sizeof(MPI_Request) + sizeof(int)) * (size_t)(n > 0 ? n : 1);
    *limit_err = MPI_SUCCESS;
    MPI_Request *req = xchg_temp_alloc(&c->mem, *bytes, "direct: request array", limit_err);
    if (!req && c->mem.temp_limit != SIZE_MAX) {
        size_t limit = c->mem.temp_limit;
        int merr = MPI_SUCCESS;
        c->mem.temp_limit = SIZE_MAX;
        req = xchg_temp_alloc(&c->mem, *bytes, "direct: request array", &merr);
        c->mem.temp_limit = limit;
        if (!req)
            *limit_err = merr;
    }
    *from = req ? (int *)(req + (n > 0 ? n : 1)) : NULL;
    return req;
}

/* Posts (or, persistent, prepares) every receive, then every send. */
static int post_all(xchg_nbr_call *c, int persistent, MPI_Request *req, int *from, int *n)
{
    const xchg_nbr_graph *g = c->g;
    int rc = MPI_SUCCESS;
    *n = 0;
    for (int i = 0; i < g->indegree && rc == MPI_SUCCESS; i++) {
        if (!recv_moves(c, i))
            continue;
        void *buf = xchg_block_addr(c->recvbuf, c->rdispls[i], &c->rt);
        from[*n] = i;
        int tag = xchg_nbr_recv_tag(g, XCHG_NEIGHBOR_TAG_DIRECT, i);
        rc = persistent ? MPI_Recv_init(buf, c->recvcounts[i], c->rt.type, g->sources[i], tag,
                                        c->comm, &req[*n])
                        : MPI_Irecv(buf, c->recvcounts[i], c->rt.type, g->sources[i], tag,
                                    c->comm, &req[*n]);
        if (rc == MPI_SUCCESS)
            (*n)++;
    }
    for (int j = 0; j < g->outdegree && rc == MPI_SUCCESS; j++) {
        if (!send_moves(c, j))
            continue;
        const void *buf = xchg_block_addr(c->sendbuf, c->sdispls[j], &c->st);
        from[*n] = -1;
        int tag = xchg_nbr_send_tag(g, XCHG_NEIGHBOR_TAG_DIRECT, j);
        rc = persistent ? MPI_Send_init(buf, c->sendcounts[j], c->st.type, g->dests[j], tag,
                                        c->comm, &req[*n])
                        : MPI_Isend(buf, c->sendcounts[j], c->st.type, g->dests[j], tag,
                                    c->comm, &req[*n]);
        if (rc == MPI_SUCCESS)
            (*n)++;
    }
    return rc;
}

int xchg_neighbor_direct(xchg_nbr_call *c)
{
    size_t bytes;
    int *from, err, n = 0;
    MPI_Request *req = requests_alloc(c, &from, &bytes, &err);
    if (!req)
        return err; /* malloc itself failed */
    int rc = post_all(c, 0, req, from, &n);
    /* What was posted completes even after a failed post: partners wait for it. */
    int wrc = xchg_nbr_complete(c, n, req, from, NULL, "direct");
    xchg_temp_free(&c->mem, req, bytes);
    return rc != MPI_SUCCESS ? rc : wrc != MPI_SUCCESS ? wrc : err;
}

/* The persistent plan: the prepared requests. */
typedef struct direct_plan {
    MPI_Request *req;
    int *from;
    int n;
    size_t bytes;
    int limit_err; /* over XCHG_MAX_TEMP_BYTES: reported by every wait */
} direct_plan;

static int direct_pfree(xchg_nbr_call *c, void *p)
{
    direct_plan *dp = p;
    if (!dp)
        return MPI_SUCCESS;
    int rc = xchg_nbr_requests_free(dp->n, dp->req);
    xchg_temp_free(&c->mem, dp->req, dp->bytes);
    free(dp);
    return rc;
}

static int direct_pinit(xchg_nbr_call *c, void **plan)
{
    *plan = NULL;
    direct_plan *dp = calloc(1, sizeof *dp);
    if (!dp)
        return xchg_error_code(MPI_ERR_NO_MEM, "direct: no memory for the persistent plan");
    dp->req = requests_alloc(c, &dp->from, &dp->bytes, &dp->limit_err);
    if (!dp->req) {
        int rc = dp->limit_err;
        free(dp);
        return rc;
    }
    int rc = post_all(c, 1, dp->req, dp->from, &dp->n);
    if (rc != MPI_SUCCESS) {
        direct_pfree(c, dp);
        return rc;
    }
    *plan = dp;
    return MPI_SUCCESS;
}

static int direct_pstart(xchg_nbr_call *c, void *p)
{
    (void)c;
    direct_plan *dp = p;
    return dp->n ? MPI_Startall(dp->n, dp->req) : MPI_SUCCESS;
}

static int direct_ptest(xchg_nbr_call *c, void *p, int *flag)
{
    direct_plan *dp = p;
    int rc = xchg_nbr_complete(c, dp->n, dp->req, dp->from, flag, "direct");
    return rc != MPI_SUCCESS || !*flag ? rc : dp->limit_err;
}

static int direct_pwait(xchg_nbr_call *c, void *p)
{
    direct_plan *dp = p;
    int rc = xchg_nbr_complete(c, dp->n, dp->req, dp->from, NULL, "direct");
    return rc != MPI_SUCCESS ? rc : dp->limit_err;
}

const xchg_nbr_persist_ops xchg_neighbor_direct_persist = {
    direct_pinit, direct_pstart, direct_ptest, direct_pwait, direct_pfree,
};

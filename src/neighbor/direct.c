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
 *
 * More messages than XCHG_MAX_INFLIGHT (K) on a rank: that rank posts no
 * receive and at most K sends at once (a window), and takes each block
 * when MPI_Iprobe on its neighbour and tag sees it, in the order of the
 * receives (the k-th block from a repeated neighbour is the k-th message
 * from it); persistent, each start runs that as a coroutine. The messages
 * are the same, so a bounded rank and an unbounded one pair as before.
 * It never waits while it has a send to post or a block to take, so no
 * cycle of waiting ranks can form.
 */
#include "neighbor_internal.h"

#include "progress/progress.h"

#include <stdlib.h>
#include <string.h>

static int recv_moves(const xchg_nbr_call *c, int i)
{
    return c->recvcounts[i] > 0 && c->rt.size > 0 && c->g->sources[i] != MPI_PROC_NULL;
}

static int send_moves(const xchg_nbr_call *c, int j)
{
    return c->sendcounts[j] > 0 && c->st.size > 0 && c->g->dests[j] != MPI_PROC_NULL;
}

/* Temporary memory counted but never refused (a rank refusing it would
 * leave its neighbours waiting; *limit_err then holds the limit's error,
 * to be returned once the exchange is complete); NULL only where malloc
 * itself failed (*limit_err its error). */
static void *never_refused(xchg_nbr_call *c, size_t bytes, const char *what, int *limit_err)
{
    *limit_err = MPI_SUCCESS;
    void *p = xchg_temp_alloc(&c->mem, bytes, what, limit_err);
    if (!p && c->mem.temp_limit != SIZE_MAX) {
        size_t limit = c->mem.temp_limit;
        int merr = MPI_SUCCESS;
        c->mem.temp_limit = SIZE_MAX;
        p = xchg_temp_alloc(&c->mem, bytes, what, &merr);
        c->mem.temp_limit = limit;
        if (!p)
            *limit_err = merr;
    }
    return p;
}

/* Requests and, per request, its receive block (-1: a send): one
 * allocation, never refused. */
static MPI_Request *requests_alloc(xchg_nbr_call *c, int **from, size_t *bytes,
                                   int *limit_err)
{
    int n = c->g->indegree + c->g->outdegree;
    *bytes = (sizeof(MPI_Request) + sizeof(int)) * (size_t)(n > 0 ? n : 1);
    MPI_Request *req = never_refused(c, *bytes, "direct: request array", limit_err);
    *from = req ? (int *)(req + (n > 0 ? n : 1)) : NULL;
    return req;
}

/* Blocks this rank sends (zero-size and MPI_PROC_NULL ones skipped). */
static int moving_sends(const xchg_nbr_call *c)
{
    int n = 0;
    for (int j = 0; j < c->g->outdegree; j++)
        n += send_moves(c, j);
    return n;
}

/* Whether this rank runs the bounded exchange: more messages to post than
 * XCHG_MAX_INFLIGHT (its own decision: the messages are the same either
 * way). Counted only where the graph alone could exceed the bound. */
static int bounded(const xchg_nbr_call *c)
{
    int K = c->cs->settings.max_inflight;
    if (K <= 0 || c->g->indegree + c->g->outdegree <= K)
        return 0;
    int n = moving_sends(c);
    for (int i = 0; i < c->g->indegree; i++)
        n += recv_moves(c, i);
    return n > K;
}

/* A pending receive as sorted by (source, tag, position), for ordering
 * repeated neighbours (no shared state: threads may run exchanges). */
typedef struct recv_key {
    int src, tag, i;
} recv_key;

static int by_source_tag(const void *x, const void *y)
{
    const recv_key *a = x, *b = y;
    if (a->src != b->src)
        return (a->src > b->src) - (a->src < b->src);
    if (a->tag != b->tag)
        return (a->tag > b->tag) - (a->tag < b->tag);
    return (a->i > b->i) - (a->i < b->i);
}

/* The window's post: out-block j's send, nothing for a block that moves
 * nothing. */
static int post_block(void *arg, int j, MPI_Request *req)
{
    xchg_nbr_call *c = arg;
    if (!send_moves(c, j))
        return MPI_SUCCESS;
    return MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[j], &c->st), c->sendcounts[j],
                     c->st.type, c->g->dests[j],
                     xchg_nbr_send_tag(c->g, XCHG_NEIGHBOR_TAG_DIRECT, j), c->comm, req);
}

/* The bounded exchange: at most K sends in flight (progress.h's window),
 * no receive posted; each block taken when its message is there, a
 * repeated neighbour's in order (prev[i]: the receive that must come
 * first, -1: none). */
static int direct_windowed(xchg_nbr_call *c, int K)
{
    const xchg_nbr_graph *g = c->g;
    const int nin = g->indegree, nout = g->outdegree, nsend = moving_sends(c);
    int slots = K < nsend ? K : nsend;
    if (slots < 1)
        slots = 1;
    size_t bytes = sizeof(MPI_Request) * (size_t)slots + sizeof(recv_key) * (size_t)nin +
                   sizeof(int) * (size_t)(2 * nin + 2 * slots);
    int limit_err;
    char *mem = never_refused(c, bytes, "direct: window tables", &limit_err);
    if (!mem)
        return limit_err;
    MPI_Request *req = (MPI_Request *)mem;
    /* pend: the receives to take, sorted; the probes go round them */
    recv_key *pend = (recv_key *)(req + slots);
    int *prev = (int *)(pend + nin), *done = prev + nin, *ints = done + nin;
    int npend = 0;
    for (int i = 0; i < nin; i++) {
        prev[i] = -1;
        done[i] = !recv_moves(c, i);
        if (!done[i])
            pend[npend++] =
                (recv_key){g->sources[i], xchg_nbr_recv_tag(g, XCHG_NEIGHBOR_TAG_DIRECT, i), i};
    }
    qsort(pend, (size_t)npend, sizeof(recv_key), by_source_tag);
    for (int k = 1; k < npend; k++)
        if (pend[k].src == pend[k - 1].src && pend[k].tag == pend[k - 1].tag)
            prev[pend[k].i] = pend[k - 1].i;
    xchg_send_window w;
    xchg_send_window_init(&w, slots, nout, req, ints, post_block, c);
    int taken = 0, cursor = 0;
    int err = MPI_SUCCESS;
    xchg_world_errors_return(1); /* MPICH: request errors as codes (progress.h) */
    (void)xchg_send_window_start(&w); /* a failure is in w's error, reported below */
    while (!xchg_send_window_done(&w) || taken < npend) {
        int moved = 0;
        /* blocks that are there: up to 16 probes from a rotating cursor */
        for (int probes = 0, seen = 0; probes < 16 && seen < npend && taken < npend;
             seen++, cursor = (cursor + 1) % npend) {
            const recv_key *r = &pend[cursor];
            const int i = r->i;
            if (done[i] || (prev[i] >= 0 && !done[prev[i]]))
                continue;
            int flag = 0;
            probes++;
            int e = MPI_Iprobe(r->src, r->tag, c->comm, &flag, MPI_STATUS_IGNORE);
            if (e == MPI_SUCCESS && flag)
                e = xchg_mpi_recv(xchg_block_addr(c->recvbuf, c->rdispls[i], &c->rt),
                                  c->recvcounts[i], c->rt.type, r->src, r->tag, c->comm,
                                  MPI_STATUS_IGNORE);
            if (e != MPI_SUCCESS || flag) {
                done[i] = 1; /* a failed receive consumed its message too */
                taken++;
                moved = 1;
            }
            if (e != MPI_SUCCESS && err == MPI_SUCCESS) {
                int cls = MPI_ERR_OTHER;
                MPI_Error_class(e, &cls);
                err = cls != MPI_ERR_TRUNCATE ? e
                      : xchg_error_code(MPI_ERR_TRUNCATE, "direct: rank %d receives more from "
                                        "rank %d than its receive block %d holds "
                                        "(recvcounts[%d] = %d)", c->rank, g->sources[i], i, i,
                                        c->recvcounts[i]);
            }
        }
        /* sends that are done free their slots, refilled at once */
        int sent_moved = 0;
        (void)xchg_send_window_progress(&w, &sent_moved);
        if (!moved && !sent_moved)
            xchg_poll_idle(); /* nonblocking or persistent: let the caller go on */
    }
    xchg_world_errors_return(0);
    xchg_temp_free(&c->mem, mem, bytes);
    return w.err != MPI_SUCCESS ? w.err : err != MPI_SUCCESS ? err : limit_err;
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
    if (bounded(c))
        return direct_windowed(c, c->cs->settings.max_inflight);
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

/* The persistent plan: the prepared requests; or, bounded, the call whose
 * start runs the window as a coroutine (progress/queue.c). */
typedef struct direct_plan {
    MPI_Request *req;
    int *from;
    int n;
    size_t bytes;
    int limit_err; /* over XCHG_MAX_TEMP_BYTES: reported by every wait */
    xchg_nbr_call *c; /* bounded: */
    xchg_nb *nb;
    int rc;
} direct_plan;

static int direct_pfree(xchg_nbr_call *c, void *p)
{
    direct_plan *dp = p;
    if (!dp)
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    if (dp->c) {
        xchg_nb_free(dp->nb);
    } else {
        rc = xchg_nbr_requests_free(dp->n, dp->req);
        xchg_temp_free(&c->mem, dp->req, dp->bytes);
    }
    free(dp);
    return rc;
}

static int windowed_body(void *p)
{
    direct_plan *dp = p;
    return direct_windowed(dp->c, dp->c->cs->settings.max_inflight);
}

static int direct_pinit(xchg_nbr_call *c, void **plan)
{
    *plan = NULL;
    direct_plan *dp = calloc(1, sizeof *dp);
    if (!dp)
        return xchg_error_code(MPI_ERR_NO_MEM, "direct: no memory for the persistent plan");
    if (bounded(c)) { /* the call lives as long as the plan */
        dp->c = c;
        *plan = dp;
        return MPI_SUCCESS;
    }
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
    direct_plan *dp = p;
    if (dp->c) {
        dp->rc = MPI_SUCCESS;
        if (xchg_nb_start(c->cs, windowed_body, dp, &dp->nb) != MPI_SUCCESS) {
            dp->nb = NULL; /* no memory for a coroutine: the exchange runs here */
            dp->rc = direct_windowed(c, c->cs->settings.max_inflight);
        }
        return MPI_SUCCESS;
    }
    return dp->n ? MPI_Startall(dp->n, dp->req) : MPI_SUCCESS;
}

/* A bounded start's end: its coroutine freed, its result. */
static int windowed_done(direct_plan *dp, int rc)
{
    xchg_nb_free(dp->nb);
    dp->nb = NULL;
    return rc;
}

static int direct_ptest(xchg_nbr_call *c, void *p, int *flag)
{
    direct_plan *dp = p;
    if (dp->c) {
        if (!dp->nb) {
            *flag = 1;
            return dp->rc;
        }
        int rc = xchg_nb_test(dp->nb, flag);
        return *flag ? windowed_done(dp, rc) : rc;
    }
    int rc = xchg_nbr_complete(c, dp->n, dp->req, dp->from, flag, "direct");
    return rc != MPI_SUCCESS || !*flag ? rc : dp->limit_err;
}

static int direct_pwait(xchg_nbr_call *c, void *p)
{
    direct_plan *dp = p;
    if (dp->c)
        return dp->nb ? windowed_done(dp, xchg_nb_wait(dp->nb)) : dp->rc;
    int rc = xchg_nbr_complete(c, dp->n, dp->req, dp->from, NULL, "direct");
    return rc != MPI_SUCCESS ? rc : dp->limit_err;
}

const xchg_nbr_persist_ops xchg_neighbor_direct_persist = {
    direct_pinit, direct_pstart, direct_ptest, direct_pwait, direct_pfree,
};

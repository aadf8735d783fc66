/*
 * baseline_mpich.c - "mpich_model": what MPICH 4's MPI_Neighbor_alltoallv
 * does, as a baseline for the simulated study, where SMPI has no
 * MPI_Neighbor_alltoallv to measure (docs/neighbor.md). Never chosen by
 * auto.
 *
 * MPICH 4.0 (ineighbor_alltoallv_allcomm_sched_linear.c; the blocking
 * call runs the nonblocking schedule and waits): one send per send block,
 * in block order, a zero-size block sent as an empty message; then one
 * receive per receive block, in block order; then wait for all. (Later
 * MPICH posts the receives in reverse order to pair the two blocks of a
 * Cartesian dimension whose neighbours are one rank; here a tag per
 * direction does that, xchg_nbr_send_tag.)
 * Sends to MPI_PROC_NULL are MPI's no-ops, as in MPICH. The persistent
 * form (MPI_Neighbor_alltoallv_init, MPICH 4.1) replays the same schedule
 * at each start: here every message prepared once, started together.
 *
 * What it does not model: MPICH's schedule engine's own overhead per
 * message; so it flatters MPICH, never xchg.
 */
#include "neighbor_internal.h"

#include <stdlib.h>

typedef struct model_plan {
    MPI_Request *req;
    int *from; /* per request: its receive block, -1 for a send */
    int n;
} model_plan;

static int plan_alloc(xchg_nbr_call *c, model_plan *p)
{
    int n = c->g->indegree + c->g->outdegree;
    p->n = 0;
    p->req = malloc((sizeof(MPI_Request) + sizeof(int)) * (size_t)(n > 0 ? n : 1));
    if (!p->req)
        return xchg_error_code(MPI_ERR_NO_MEM, "mpich_model: no memory for %d requests", n);
    p->from = (int *)(p->req + (n > 0 ? n : 1));
    return MPI_SUCCESS;
}

/* Every send, then every receive (persistent: prepared). */
static int post_all(xchg_nbr_call *c, int persistent, model_plan *p)
{
    const xchg_nbr_graph *g = c->g;
    int rc = MPI_SUCCESS;
    for (int j = 0; j < g->outdegree && rc == MPI_SUCCESS; j++) {
        const void *buf = xchg_block_addr(c->sendbuf, c->sdispls[j], &c->st);
        int tag = xchg_nbr_send_tag(g, XCHG_NEIGHBOR_TAG_MPICH_MODEL, j);
        p->from[p->n] = -1;
        rc = persistent ? MPI_Send_init(buf, c->sendcounts[j], c->st.type, g->dests[j], tag,
                                        c->comm, &p->req[p->n])
                        : MPI_Isend(buf, c->sendcounts[j], c->st.type, g->dests[j], tag,
                                    c->comm, &p->req[p->n]);
        if (rc == MPI_SUCCESS)
            p->n++;
    }
    for (int i = 0; i < g->indegree && rc == MPI_SUCCESS; i++) {
        void *buf = xchg_block_addr(c->recvbuf, c->rdispls[i], &c->rt);
        int tag = xchg_nbr_recv_tag(g, XCHG_NEIGHBOR_TAG_MPICH_MODEL, i);
        p->from[p->n] = i;
        rc = persistent ? MPI_Recv_init(buf, c->recvcounts[i], c->rt.type, g->sources[i], tag,
                                        c->comm, &p->req[p->n])
                        : MPI_Irecv(buf, c->recvcounts[i], c->rt.type, g->sources[i], tag,
                                    c->comm, &p->req[p->n]);
        if (rc == MPI_SUCCESS)
            p->n++;
    }
    return rc;
}

int xchg_neighbor_mpich_model(xchg_nbr_call *c)
{
    model_plan p;
    int rc = plan_alloc(c, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = post_all(c, 0, &p);
    /* what was posted completes even after a failed post: partners wait for it */
    int wrc = xchg_nbr_complete(c, p.n, p.req, p.from, NULL, "mpich_model");
    free(p.req);
    return rc != MPI_SUCCESS ? rc : wrc;
}

static int model_pfree(xchg_nbr_call *c, void *plan)
{
    (void)c;
    model_plan *p = plan;
    if (!p)
        return MPI_SUCCESS;
    int rc = xchg_nbr_requests_free(p->n, p->req);
    free(p->req);
    free(p);
    return rc;
}

static int model_pinit(xchg_nbr_call *c, void **plan)
{
    *plan = NULL;
    model_plan *p = calloc(1, sizeof *p);
    int rc = p ? plan_alloc(c, p)
               : xchg_error_code(MPI_ERR_NO_MEM, "mpich_model: no memory for the plan");
    if (rc == MPI_SUCCESS)
        rc = post_all(c, 1, p);
    if (rc != MPI_SUCCESS) {
        model_pfree(c, p); /* frees what was made: NULL p or req too */
        return rc;
    }
    *plan = p;
    return MPI_SUCCESS;
}

static int model_pstart(xchg_nbr_call *c, void *plan)
{
    (void)c;
    model_plan *p = plan;
    return p->n ? MPI_Startall(p->n, p->req) : MPI_SUCCESS;
}

static int model_ptest(xchg_nbr_call *c, void *plan, int *flag)
{
    model_plan *p = plan;
    return xchg_nbr_complete(c, p->n, p->req, p->from, flag, "mpich_model");
}

static int model_pwait(xchg_nbr_call *c, void *plan)
{
    model_plan *p = plan;
    return xchg_nbr_complete(c, p->n, p->req, p->from, NULL, "mpich_model");
}

const xchg_nbr_persist_ops xchg_neighbor_mpich_model_persist = {
    model_pinit, model_pstart, model_ptest, model_pwait, model_pfree,
};

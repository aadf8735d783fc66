/*
 * request.c - the request calls every kind of xchg request shares
 * (xchg_start, xchg_wait, xchg_test, xchg_waitall, xchg_request_free,
 * xchg_request_algo, xchg_request_neighbor_algo), through each request's
 * mode (request.h).
 */
#include "api.h"

#include <stdlib.h>

struct xchg_request_s {
    const xchg_request_ops *ops; /* the mode */
    void *ctx;                   /* its state: own[], or allocated apart */
    MPI_Comm comm;               /* the caller's: its error handler */
    xchg_comm_state *cs;         /* retained while the request lives */
    int active;                  /* an exchange is in flight */
    max_align_t own[];           /* the mode's state of xchg_request_alloc */
};

xchg_request xchg_request_alloc(size_t ctx_size, void **ctx)
{
    struct xchg_request_s *r = calloc(1, sizeof *r + ctx_size);
    *ctx = r ? r->own : NULL;
    if (r)
        r->ctx = r->own;
    return r;
}

void xchg_request_discard(xchg_request r)
{
    free(r);
}

void xchg_request_bind(xchg_request r, const xchg_request_ops *ops, MPI_Comm comm,
                       xchg_comm_state *cs, int active)
{
    r->ops = ops;
    r->comm = comm;
    r->cs = cs;
    xchg_comm_state_retain(cs);
    r->active = active;
}

int xchg_request_of_ops(MPI_Comm comm, xchg_comm_state *cs, const xchg_request_ops *ops,
                        void *ctx, int active, xchg_request *req)
{
    void *unused;
    xchg_request r = xchg_request_alloc(0, &unused);
    if (!r)
        return xchg_error_code(MPI_ERR_NO_MEM, "out of memory for a request");
    r->ctx = ctx;
    xchg_request_bind(r, ops, comm, cs, active);
    *req = r;
    return MPI_SUCCESS;
}

int xchg_type_keep(MPI_Datatype t, MPI_Datatype *out)
{
    int ni, na, nd, comb;
    *out = t;
    int rc = MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (rc == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        rc = MPI_Type_dup(t, out); /* a duplicate of a committed type is committed */
    return rc;
}

void xchg_type_release(MPI_Datatype *t)
{
    int ni, na, nd, comb;
    if (*t == MPI_DATATYPE_NULL)
        return;
    if (MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
        comb != MPI_COMBINER_NAMED)
        MPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

/* Where the request's errors go: the caller's communicator, or, once the
 * caller has freed it, MPI_COMM_SELF (as for errors without a communicator:
 * the request itself keeps working on its own reference to the state). */
static MPI_Comm error_comm(const struct xchg_request_s *r)
{
    return __atomic_load_n(&r->cs->comm_freed, __ATOMIC_ACQUIRE) ? MPI_COMM_NULL : r->comm;
}

/* Releases an inactive r: its mode's state (ops->free, whose result is
 * returned), its reference to the communicator's state, r itself; *comm
 * (if not NULL) gets where r's errors go, read before the state may go. */
static int dispose(struct xchg_request_s *r, MPI_Comm *comm)
{
    int rc = r->ops->free(r->ctx);
    if (comm)
        *comm = error_comm(r);
    xchg_comm_state_release(r->cs);
    free(r);
    return rc;
}

static int null_request(const char *fn)
{
    return xchg_raise(MPI_COMM_NULL, xchg_error_code(MPI_ERR_REQUEST, "%s: the request is "
                                                     "XCHG_REQUEST_NULL", fn));
}

/* Whether a wait or test has nothing to do, as MPI_Wait and MPI_Test on
 * MPI_REQUEST_NULL or an inactive persistent request: a NULL request, a
 * persistent one never started or already completed, a nonblocking one
 * already completed (MPI would have set its handle to MPI_REQUEST_NULL;
 * xchg's stays, inactive, until xchg_request_free). Checked before any
 * call of the mode, so it holds for every mode. */
static int inactive(const struct xchg_request_s *r)
{
    return !r || !r->active;
}

/* Ends an exchange: the request is inactive again, the mode records it. */
static int complete(struct xchg_request_s *r, int rc)
{
    r->active = 0;
    if (r->ops->end)
        r->ops->end(r->ctx);
    return xchg_raise(error_comm(r), rc);
}

int xchg_start(xchg_request r)
{
    if (!r)
        return null_request("xchg_start");
    if (r->active)
        return xchg_raise(error_comm(r), xchg_error_code(MPI_ERR_REQUEST, "xchg_start: the request "
                          "is already active (complete it with xchg_wait or xchg_test "
                          "first)"));
    if (!r->ops->start)
        return xchg_raise(error_comm(r), xchg_error_code(MPI_ERR_REQUEST, "xchg_start: the "
                          "request was made by a nonblocking call (xchg_ialltoallv, "
                          "xchg_ineighbor_alltoallv), not a persistent init: "
                          "free it with xchg_request_free"));
    r->active = 1;
    int rc = r->ops->start(r->ctx);
    if (rc != MPI_SUCCESS)
        return complete(r, rc); /* the mode completed what it began */
    xchg_charge_flush(); /* copies since its last MPI call */
    return MPI_SUCCESS;
}

int xchg_wait(xchg_request r)
{
    if (inactive(r))
        return xchg_raise(MPI_COMM_NULL, MPI_SUCCESS);
    return complete(r, r->ops->wait(r->ctx));
}

int xchg_test(xchg_request r, int *flag)
{
    if (!flag)
        return xchg_raise(r ? error_comm(r) : MPI_COMM_NULL,
                          xchg_error_code(MPI_ERR_ARG, "xchg_test: flag is NULL"));
    *flag = inactive(r);
    if (*flag)
        return xchg_raise(MPI_COMM_NULL, MPI_SUCCESS);
    int done = 1, rc = r->ops->test(r->ctx, &done);
    if (rc != MPI_SUCCESS || done) {
        *flag = 1;
        return complete(r, rc);
    }
    xchg_charge_flush(); /* copies since its last MPI call */
    return MPI_SUCCESS;
}

/* The first failure in array order wins: the caller learns the lowest
 * index that failed, whichever completed first. */
static void note_result(int i, int rc, int *first, int *first_rc)
{
    if (rc != MPI_SUCCESS && (*first < 0 || i < *first)) {
        *first = i;
        *first_rc = rc;
    }
}

static int active_count(int count, const xchg_request reqs[])
{
    int n = 0;
    for (int i = 0; i < count; i++)
        n += !inactive(reqs[i]);
    return n;
}

int xchg_waitall(int count, xchg_request reqs[])
{
    if (count < 0)
        return xchg_raise(MPI_COMM_NULL, xchg_error_code(MPI_ERR_COUNT, "xchg_waitall: count "
                          "is negative (%d)", count));
    if (count > 0 && !reqs)
        return xchg_raise(MPI_COMM_NULL, xchg_error_code(MPI_ERR_ARG, "xchg_waitall: reqs is "
                          "NULL but count is %d", count));
    int first = -1, first_rc = MPI_SUCCESS;
    /* Test them all in turn until one is left, so each advances whatever
     * order the partners complete theirs in (as MPI_Waitall progresses all
     * of its requests); then wait for the last. Active ones are counted
     * anew each round: a request listed twice completes once. Each error
     * has gone through its request's error handler already. */
    while (active_count(count, reqs) > 1) {
        for (int i = 0; i < count; i++) {
            int flag = 0, rc;
            if (inactive(reqs[i]))
                continue;
            rc = xchg_test(reqs[i], &flag);
            if (flag)
                note_result(i, rc, &first, &first_rc);
        }
    }
    for (int i = 0; i < count; i++)
        if (!inactive(reqs[i]))
            note_result(i, xchg_wait(reqs[i]), &first, &first_rc);
    return first_rc;
}

int xchg_request_free(xchg_request *req)
{
    if (!req || !*req)
        return null_request("xchg_request_free");
    struct xchg_request_s *r = *req;
    if (r->active)
        return xchg_raise(error_comm(r), xchg_error_code(MPI_ERR_REQUEST, "xchg_request_free: the "
                          "request is active (complete it with xchg_wait or xchg_test "
                          "first)"));
    MPI_Comm comm;
    int rc = dispose(r, &comm);
    *req = XCHG_REQUEST_NULL;
    return xchg_raise(comm, rc);
}

int xchg_request_to_mpi(xchg_request *req, MPI_Request *mpi_req)
{
    if (!req || !*req || !mpi_req)
        return 0;
    struct xchg_request_s *r = *req;
    if (!r->active || !r->ops->to_mpi || !r->ops->to_mpi(r->ctx, mpi_req))
        return 0;
    r->active = 0; /* the mode holds nothing in flight now */
    dispose(r, NULL);
    *req = XCHG_REQUEST_NULL;
    return 1;
}

xchg_algo xchg_request_algo(xchg_request r)
{
    return r && r->ops->algo ? r->ops->algo(r->ctx) : XCHG_ALGO_INVALID;
}

xchg_neighbor_algo xchg_request_neighbor_algo(xchg_request r)
{
    return r && r->ops->neighbor_algo ? r->ops->neighbor_algo(r->ctx) : XCHG_NEIGHBOR_INVALID;
}

/*
 * persistent.c - persistent alltoallv requests (xchg_alltoallv_init, start,
 * wait, test, free), and the request calls every kind of xchg request
 * shares (start, wait, test, waitall, free).
 *
 * Init checks the arguments exactly as xchg_alltoallv does, copies the
 * count/displacement arrays and duplicates derived datatypes (so the caller
 * may free theirs), resolves the algorithm once and, for algorithms with
 * persistent hooks (xchg_persist_ops), builds their plan. Algorithms without
 * hooks take the generic path: start replays the blocking call and keeps its
 * result for wait, so their start is blocking.
 *
 * Large counts that some rank cannot give xchg's algorithms (large_count.c)
 * make a request that is MPI's own MPI_Alltoallv_init_c on the private
 * communicator (mpi_req): start, wait, test and free pass through to it.
 *
 * MPI_IN_PLACE: the contract is that each start sends what recvbuf's blocks
 * hold at that start. The request keeps one copy buffer for the span of the
 * receive blocks (allocated at init, so plans may post sends from it), fills
 * it at every start and sends from it with the receive layout.
 */
#include "api.h"

#include <stdlib.h>
#include <string.h>

struct xchg_request_s {
    MPI_Comm comm;               /* the caller's: its error handler */
    const xchg_algo_info *algo;
    xchg_call c;                 /* lives as long as the request */
    int *arrays;                 /* 4P ints: our copies of counts/displs */
    MPI_Datatype stype, rtype;   /* our duplicates (or the predefined types) */
    int in_place;
    void *ip_buf;                /* MPI_IN_PLACE copy of recvbuf's blocks */
    size_t ip_bytes;
    MPI_Aint ip_lo;
    const xchg_persist_ops *persist; /* the algorithm's hooks, NULL on the generic path */
    void *plan;                  /* the algorithm's, NULL on the generic path */
    int active;
    int generic_rc;              /* generic path: result of the call in start */
    int holds_state;             /* holds a reference to c.cs (set once init succeeded) */
    long rec_shape;              /* XCHG_RECORD: the shape each start counts (-1: none) */
    int passed_to_mpi;           /* MPI's own request (mpi_req) does the work */
    MPI_Request mpi_req;
    void *mpi_arrays;            /* its copies of the large-count arrays */
    xchg_nb *nb;                 /* the exchange running as a coroutine, if any */
    int nonblocking;             /* made by xchg_ialltoallv: one exchange, no restart */
    xchg_a2av_args args;         /* xchg_ialltoallv's call */
    xchg_algo ran;               /* ... and the algorithm it ran */
    xchg_nb_body body;           /* xchg_ialltoallv_c: its agreement and MPI's path */
    const xchg_request_ops *ops; /* another entry point's request (neighbour): its work */
    void *ops_ctx;
};

static int type_keep(MPI_Datatype t, MPI_Datatype *out)
{
    int ni, na, nd, comb;
    *out = t;
    int rc = MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (rc == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        rc = MPI_Type_dup(t, out); /* a duplicate of a committed type is committed */
    return rc;
}

static void type_release(MPI_Datatype *t)
{
    int ni, na, nd, comb;
    if (*t == MPI_DATATYPE_NULL)
        return;
    if (MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
        comb != MPI_COMBINER_NAMED)
        MPI_Type_free(t);
    *t = MPI_DATATYPE_NULL;
}

int xchg_type_keep(MPI_Datatype t, MPI_Datatype *out)
{
    return type_keep(t, out);
}

void xchg_type_release(MPI_Datatype *t)
{
    type_release(t);
}

static void request_destroy(struct xchg_request_s *r)
{
    xchg_nb_free(r->nb);
    if (r->body.free)
        r->body.free(r->body.ext);
    if (r->passed_to_mpi && r->mpi_req != MPI_REQUEST_NULL)
        MPI_Request_free(&r->mpi_req);
    free(r->mpi_arrays);
    if (r->ip_buf)
        xchg_temp_free(&r->c, r->ip_buf, r->ip_bytes);
    type_release(&r->stype);
    type_release(&r->rtype);
    if (r->holds_state)
        xchg_comm_state_release(r->c.cs);
    free(r->arrays);
    free(r);
}

/* Where the request's errors go: the caller's communicator, or, once the
 * caller has freed it, MPI_COMM_SELF (as for errors without a communicator:
 * the request itself keeps working on its own reference to the state). */
static MPI_Comm error_comm(const struct xchg_request_s *r)
{
    return __atomic_load_n(&r->c.cs->comm_freed, __ATOMIC_ACQUIRE) ? MPI_COMM_NULL : r->comm;
}

int xchg_alltoallv_init_run(xchg_algo algo, int from_env, int pre_err, const void *sendbuf,
                            const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Info info, xchg_request *req)
{
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    (void)info;
    if (!req)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "req is NULL"));
    *req = XCHG_REQUEST_NULL;
    /* The state first (collective on first use); then an argument error
     * is agreed with the allreduce below, so it fails every rank alike. */
    int P0 = 0, rc = xchg_check_comm(comm, &P0);
    xchg_comm_state *cs = NULL;
    if (rc == MPI_SUCCESS)
        rc = xchg_api_state(comm, &cs);
    if (rc != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    xchg_nb_drain(cs); /* init is collective: after what was started before */
    int arg_err = pre_err != MPI_SUCCESS
                      ? pre_err
                      : xchg_check_alltoallv_args(sendbuf, sendcounts, sdispls, sendtype,
                                                  recvbuf, recvcounts, rdispls, recvtype, comm);
    if (arg_err == MPI_SUCCESS)
        arg_err = xchg_resolve_algo(&cs->settings, algo, from_env, &algo);
    if (arg_err != MPI_SUCCESS)
        return xchg_raise(comm, xchg_agree_errors(cs->pcomm, cs->rank, cs->size, arg_err,
                                                  "xchg_alltoallv_init"));

    struct xchg_request_s *r = calloc(1, sizeof *r);
    const int P = cs->size;
    int *a = r ? malloc(sizeof(int) * 4 * (size_t)(P > 0 ? P : 1)) : NULL;
    if (!a) {
        free(r);
        return xchg_raise(comm, xchg_error_code(MPI_ERR_NO_MEM, "xchg_alltoallv_init: out "
                                                "of memory for the request"));
    }
    r->arrays = a;
    r->comm = comm;
    r->stype = r->rtype = MPI_DATATYPE_NULL;
    r->in_place = sendbuf == MPI_IN_PLACE;
    memcpy(a + 2 * P, recvcounts, sizeof(int) * (size_t)P);
    memcpy(a + 3 * P, rdispls, sizeof(int) * (size_t)P);
    if (!r->in_place) {
        memcpy(a, sendcounts, sizeof(int) * (size_t)P);
        memcpy(a + P, sdispls, sizeof(int) * (size_t)P);
    }
    xchg_call *c = &r->c;
    c->sendbuf = sendbuf;
    c->sendcounts = a;
    c->sdispls = a + P;
    c->recvbuf = recvbuf;
    c->recvcounts = a + 2 * P;
    c->rdispls = a + 3 * P;
    c->comm = cs->pcomm;
    c->cs = cs;
    c->rank = cs->rank;
    c->size = P;
    c->temp_limit = xchg_temp_limit_of(cs);
    rc = type_keep(recvtype, &r->rtype);
    if (rc == MPI_SUCCESS)
        rc = xchg_typeinfo_get(r->rtype, &c->rt);
    if (rc == MPI_SUCCESS && !r->in_place) {
        rc = type_keep(sendtype, &r->stype);
        if (rc == MPI_SUCCESS)
            rc = xchg_typeinfo_get(r->stype, &c->st);
    }
    if (rc == MPI_SUCCESS && r->in_place) {
        /* sends with the receive layout from a copy made at each start */
        xchg_block_span(c->recvcounts, c->rdispls, P, &c->rt, &r->ip_lo, &r->ip_bytes);
        r->ip_buf = xchg_temp_alloc(c, r->ip_bytes, "persistent MPI_IN_PLACE copy of "
                                    "recvbuf", &rc);
        if (r->ip_buf) {
            c->sendbuf = (char *)r->ip_buf - r->ip_lo;
            c->sendcounts = c->recvcounts;
            c->sdispls = c->rdispls;
            c->st = c->rt;
        }
    }
    /* Everything above is local; from here on ranks must agree. A local
     * failure before the collective part would hang the others, so agree
     * (the same allreduce as for an argument error above). */
    rc = xchg_agree_errors(c->comm, c->rank, c->size, rc, "xchg_alltoallv_init");
    if (rc != MPI_SUCCESS) {
        request_destroy(r);
        return xchg_raise(comm, rc);
    }
    r->rec_shape = -1;
    if (cs->settings.record) /* agreed; the starts count the calls */
        rc = xchg_record_call(cs, c->sendcounts, c->st.size, MPI_SUCCESS, 0, &r->rec_shape);
    if (rc == MPI_SUCCESS && algo == XCHG_ALGO_AUTO)
        rc = xchg_select_alltoallv_now(c, &algo); /* once, at init, from its own counts */
    if (rc == MPI_SUCCESS) {
        r->algo = xchg_registry_find(algo);
        r->persist = r->algo->persist;
        if (r->persist && r->persist->fits && !r->persist->fits(c))
            r->persist = NULL;
        if (r->persist)
            rc = r->persist->init(c, &r->plan);
    }
    if (rc != MPI_SUCCESS) {
        request_destroy(r);
        return xchg_raise(comm, rc);
    }
    /* The request keeps the state (and its private communicator) alive
     * even if the caller frees comm first, as MPI keeps a communicator for
     * its pending persistent requests. */
    xchg_comm_state_retain(cs);
    r->holds_state = 1;
    *req = r;
    return MPI_SUCCESS;
}

int xchg_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, xchg_request *req)
{
    return xchg_alltoallv_init_run(XCHG_ALGO_AUTO, 1, MPI_SUCCESS, sendbuf, sendcounts,
                                   sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                   recvtype, comm, info, req);
}

int xchg_alltoallv_init_algo(xchg_algo algo, const void *sendbuf, const int sendcounts[],
                             const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                             xchg_request *req)
{
    return xchg_alltoallv_init_run(algo, 0, MPI_SUCCESS, sendbuf, sendcounts, sdispls,
                                   sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                   info, req);
}

static int null_request(const char *fn)
{
    return xchg_raise(MPI_COMM_NULL, xchg_error_code(MPI_ERR_REQUEST, "%s: the request is "
                                                     "XCHG_REQUEST_NULL", fn));
}

/* Ends an exchange: the request is inactive again, stats are recorded. */
static int complete(struct xchg_request_s *r, int rc)
{
    r->active = 0;
    if (r->ops) /* its entry point recorded the stats */
        return xchg_raise(error_comm(r), rc);
    xchg_nb_free(r->nb);
    r->nb = NULL;
    xchg_comm_state *cs = r->c.cs;
    if (r->nonblocking) {
        r->algo = xchg_registry_find(r->ran); /* the body recorded its stats */
        return xchg_raise(error_comm(r), rc);
    }
    cs->last.algo = r->algo->id;
    cs->last.sparse_algo = XCHG_SPARSE_INVALID;
    cs->last.temp_bytes = r->c.temp_peak;
    cs->last.calls = cs->calls;
    cs->last.passed_to_mpi = r->passed_to_mpi;
    return xchg_raise(error_comm(r), rc);
}

/* Whether an exchange of algo on cs runs blocking at its start rather than
 * as a coroutine. Inside coroutines a blocking collective is unsafe: two
 * exchanges on two communicators, each blocked in one, can wait for each
 * other across ranks. So what has no nonblocking form runs at the start
 * (after what is queued on cs), where every rank is at the same point of
 * its program: the RMA algorithms (a window per call, fences, locks) and
 * one-time setup (hierarchical's node communicators; the node map and
 * those communicators for auto, made now if missing, after which auto
 * runs nonblocking). */
static int blocking_start(xchg_comm_state *cs, xchg_algo algo)
{
    const xchg_algo_info *info = xchg_registry_find(algo);
    if (info && info->blocking_start)
        return 1;
    if (info && info->prepare && !info->ready(cs))
        return 1;
    if (algo == XCHG_ALGO_AUTO && !(cs->auto_prepared & 2) && xchg_select_prepares(cs)) {
        xchg_nb_drain(cs);
        xchg_select_prepare(cs, 1); /* collective; a failure only narrows the choice */
    }
    return 0;
}

/* The generic path's exchange: the blocking algorithm, as a coroutine. */
static int generic_run(void *p)
{
    struct xchg_request_s *r = p;
    return r->algo->run(&r->c);
}

int xchg_start(xchg_request r)
{
    if (!r)
        return null_request("xchg_start");
    if (r->active)
        return xchg_raise(error_comm(r), xchg_error_code(MPI_ERR_REQUEST, "xchg_start: the request "
                          "is already active (complete it with xchg_wait or xchg_test "
                          "first)"));
    if (r->nonblocking)
        return xchg_raise(error_comm(r), xchg_error_code(MPI_ERR_REQUEST, "xchg_start: the "
                          "request was made by a nonblocking call (xchg_ialltoallv, "
                          "xchg_ineighbor_alltoallv), not a persistent init: "
                          "free it with xchg_request_free"));
    xchg_call *c = &r->c;
    if (r->ops) {
        xchg_nb_drain(c->cs); /* after what was started before, as every start */
        r->active = 1;
        int rc = r->ops->start(r->ops_ctx);
        if (rc != MPI_SUCCESS) { /* complete what it began: partners wait for it */
            r->ops->wait(r->ops_ctx);
            return complete(r, rc);
        }
        xchg_charge_flush(); /* copies since its last MPI call */
        return MPI_SUCCESS;
    }
    if (r->passed_to_mpi || r->persist)
        xchg_nb_drain(c->cs); /* they use the private communicator at once */
    if (r->passed_to_mpi) {
        c->cs->calls++;
        int rc = MPI_Start(&r->mpi_req);
        if (rc != MPI_SUCCESS)
            return complete(r, rc);
        r->active = 1;
        return MPI_SUCCESS;
    }
    if (r->in_place && r->ip_bytes) {
        memcpy(r->ip_buf, (char *)c->recvbuf + r->ip_lo, r->ip_bytes);
        xchg_charge_copy(r->ip_bytes);
    }
    c->temp_peak = c->temp_cur;
    c->cs->calls++;
    xchg_record_count(c->cs, r->rec_shape);
    r->active = 1;
    int rc;
    if (r->persist) {
        rc = r->persist->start(c, r->plan);
        if (rc != MPI_SUCCESS) {
            /* The start may have set operations in flight (MPI_Startall,
             * a fence) and partners wait for this exchange: complete it
             * before the request becomes inactive, so it stays usable and
             * nothing is left running. The start's error is the one reported. */
            r->persist->wait(c, r->plan);
            return complete(r, rc);
        }
    } else if (blocking_start(c->cs, r->algo->id) ||
               xchg_nb_start(c->cs, generic_run, r, &r->nb) != MPI_SUCCESS) {
        /* no memory for a coroutine: run it here, blocking (every rank
         * takes part either way) */
        xchg_nb_drain(c->cs);
        r->generic_rc = r->algo->run(c);
    }
    xchg_charge_flush(); /* copies since its last MPI call */
    return MPI_SUCCESS;
}

/* Whether a wait or test has nothing to do, as MPI_Wait and MPI_Test on
 * MPI_REQUEST_NULL or an inactive persistent request: a NULL request, a
 * persistent one never started or already completed, a nonblocking one
 * already completed (MPI would have set its handle to MPI_REQUEST_NULL;
 * xchg's stays, inactive, until xchg_request_free). One check for every
 * kind of request, before any dispatch on the kind. */
static int inactive(const struct xchg_request_s *r)
{
    return !r || !r->active;
}

int xchg_wait(xchg_request r)
{
    if (inactive(r))
        return xchg_raise(MPI_COMM_NULL, MPI_SUCCESS);
    int rc = r->ops            ? r->ops->wait(r->ops_ctx)
             : r->passed_to_mpi ? MPI_Wait(&r->mpi_req, MPI_STATUS_IGNORE)
             : r->nb            ? xchg_nb_wait(r->nb)
             : r->nonblocking   ? r->generic_rc
             : r->persist ? r->persist->wait(&r->c, r->plan)
                                : r->generic_rc;
    return complete(r, rc);
}

int xchg_test(xchg_request r, int *flag)
{
    if (!flag)
        return xchg_raise(r ? error_comm(r) : MPI_COMM_NULL,
                          xchg_error_code(MPI_ERR_ARG, "xchg_test: flag is NULL"));
    *flag = inactive(r);
    if (*flag)
        return xchg_raise(MPI_COMM_NULL, MPI_SUCCESS);
    int rc = MPI_SUCCESS, done = 1;
    if (r->ops) {
        rc = r->ops->test(r->ops_ctx, &done);
    } else if (r->passed_to_mpi) {
        rc = MPI_Test(&r->mpi_req, &done, MPI_STATUS_IGNORE);
    } else if (r->nb) {
        rc = xchg_nb_test(r->nb, &done);
    } else if (r->nonblocking) {
        rc = r->generic_rc;
    } else if (r->persist) {
        rc = r->persist->test(&r->c, r->plan, &done);
    } else {
        rc = r->generic_rc;
    }
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
    int rc = MPI_SUCCESS;
    if (r->ops)
        rc = r->ops->free(r->ops_ctx);
    else if (r->passed_to_mpi)
        rc = MPI_Request_free(&r->mpi_req); /* MPI_REQUEST_NULL afterwards */
    else if (!r->nonblocking && r->persist) {
        xchg_nb_drain(r->c.cs); /* the plan's free may be collective */
        rc = r->persist->free(&r->c, r->plan);
    }
    MPI_Comm comm = error_comm(r); /* before the state may go */
    request_destroy(r);
    *req = XCHG_REQUEST_NULL;
    return xchg_raise(comm, rc);
}

xchg_algo xchg_request_algo(xchg_request r)
{
    return r && r->algo ? r->algo->id : XCHG_ALGO_INVALID;
}

xchg_neighbor_algo xchg_request_neighbor_algo(xchg_request r)
{
    return r && r->ops ? r->ops->neighbor_algo(r->ops_ctx) : XCHG_NEIGHBOR_INVALID;
}

int xchg_request_of_ops(MPI_Comm comm, xchg_comm_state *cs, const xchg_request_ops *ops,
                        void *ctx, int nonblocking, xchg_request *req)
{
    struct xchg_request_s *r = calloc(1, sizeof *r);
    if (!r)
        return xchg_error_code(MPI_ERR_NO_MEM, "out of memory for a request");
    r->comm = comm;
    r->stype = r->rtype = MPI_DATATYPE_NULL;
    r->ops = ops;
    r->ops_ctx = ctx;
    r->nonblocking = nonblocking;
    r->active = nonblocking; /* started by its maker */
    r->c.cs = cs;
    xchg_comm_state_retain(cs);
    r->holds_state = 1;
    *req = r;
    return MPI_SUCCESS;
}

/* xchg_ialltoallv: the blocking call's body as a coroutine (or, for
 * xchg_ialltoallv_c, the large-count agreement first: large_count.c). */
static int ialltoallv_body(struct xchg_request_s *r)
{
    if (r->body.run)
        return r->body.run(r->body.ext, &r->args);
    return xchg_alltoallv_body(&r->args);
}

static int ialltoallv_run(void *p)
{
    struct xchg_request_s *r = p;
    int rc = ialltoallv_body(r);
    r->ran = r->c.cs->last.algo; /* recorded by the body just now */
    return rc;
}

/* A copy of counts or displacements (NULL stays NULL: the body reports it). */
static const int *keep_array(int **store, const int *a, int P)
{
    if (!a)
        return a;
    memcpy(*store, a, sizeof(int) * (size_t)P);
    const int *out = *store;
    *store += P;
    return out;
}

/* The checks every nonblocking entry makes before it can make a request:
 * the running MPI, req, comm, and xchg's state for comm (collective on
 * first use only). */
int xchg_ialltoallv_prepare(MPI_Comm comm, xchg_request *req, int *P, xchg_comm_state **cs)
{
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    if (!req)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "req is NULL"));
    *req = XCHG_REQUEST_NULL;
    int rc = xchg_check_comm(comm, P);
    if (rc == MPI_SUCCESS)
        rc = xchg_api_state(comm, cs);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : xchg_raise(comm, rc);
}

/* Starts the exchange a (whose arrays are the request's own copies, in
 * arrays, which the request now owns; body: what it runs instead of the
 * blocking call's body, its ext also owned) as a request. */
int xchg_ialltoallv_launch(const xchg_a2av_args *a, int *arrays, const xchg_nb_body *body,
                           xchg_request *req)
{
    struct xchg_request_s *r = calloc(1, sizeof *r);
    if (!r) {
        free(arrays);
        if (body && body->free)
            body->free(body->ext);
        return MPI_ERR_NO_MEM;
    }
    xchg_comm_state *cs = a->cs;
    r->arrays = arrays;
    if (body)
        r->body = *body;
    r->comm = a->comm;
    r->nonblocking = 1;
    r->in_place = a->sendbuf == MPI_IN_PLACE;
    r->args = *a;
    /* The caller may free derived types once the call returns (as with
     * MPI's nonblocking calls): keep duplicates. */
    r->stype = r->rtype = MPI_DATATYPE_NULL;
    if (!r->in_place && a->sendtype != MPI_DATATYPE_NULL &&
        type_keep(a->sendtype, &r->stype) == MPI_SUCCESS)
        r->args.sendtype = r->stype;
    else
        r->stype = MPI_DATATYPE_NULL;
    if (a->recvtype != MPI_DATATYPE_NULL && type_keep(a->recvtype, &r->rtype) == MPI_SUCCESS)
        r->args.recvtype = r->rtype;
    else
        r->rtype = MPI_DATATYPE_NULL;
    r->c.cs = cs;
    xchg_comm_state_retain(cs);
    r->holds_state = 1;
    r->active = 1;
    xchg_algo resolved = a->algo;
    if (xchg_resolve_algo(&cs->settings, a->algo, a->from_env, &resolved) != MPI_SUCCESS)
        resolved = a->algo; /* the body reports it */
    if (blocking_start(cs, resolved) ||
        xchg_nb_start(cs, ialltoallv_run, r, &r->nb) != MPI_SUCCESS) {
        xchg_nb_drain(cs); /* no coroutine: run it here, blocking */
        r->generic_rc = ialltoallv_body(r);
        r->ran = cs->last.algo;
    }
    *req = r;
    xchg_charge_flush(); /* copies since its last MPI call */
    return MPI_SUCCESS;
}

/* Out of memory for a request: the call becomes blocking, which its
 * partners cannot tell from a fast nonblocking one; the caller then hears
 * of it (rc, the blocking call's own result, kept if it failed). */
int xchg_ialltoallv_ran_blocking(MPI_Comm comm, int rc, const char *fn)
{
    if (rc != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    return xchg_raise(comm, xchg_error_code(MPI_ERR_NO_MEM, "%s: out of memory for the "
                      "request (the exchange ran blocking and succeeded: its result is in "
                      "recvbuf)", fn));
}

int xchg_ialltoallv_run(xchg_algo algo, int from_env, const void *sendbuf,
                        const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req)
{
    int P = 0;
    xchg_comm_state *cs = NULL;
    int rc = xchg_ialltoallv_prepare(comm, req, &P, &cs);
    if (rc != MPI_SUCCESS)
        return rc;
    int *a = malloc(sizeof(int) * 4 * (size_t)(P > 0 ? P : 1));
    xchg_a2av_args args = {algo, from_env, MPI_SUCCESS, sendbuf, sendcounts, sdispls,
                           sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, cs};
    if (a) {
        int in_place = sendbuf == MPI_IN_PLACE, *store = a;
        if (!in_place) {
            args.sendcounts = keep_array(&store, sendcounts, P);
            args.sdispls = keep_array(&store, sdispls, P);
        }
        args.recvcounts = keep_array(&store, recvcounts, P);
        args.rdispls = keep_array(&store, rdispls, P);
        if (xchg_ialltoallv_launch(&args, a, NULL, req) == MPI_SUCCESS)
            return MPI_SUCCESS;
        args.sendcounts = sendcounts, args.sdispls = sdispls; /* the copies are gone */
        args.recvcounts = recvcounts, args.rdispls = rdispls;
    }
    xchg_nb_drain(cs);
    return xchg_ialltoallv_ran_blocking(comm, xchg_alltoallv_body(&args), "xchg_ialltoallv");
}

int xchg_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    xchg_request *req)
{
    return xchg_ialltoallv_run(XCHG_ALGO_AUTO, 1, sendbuf, sendcounts, sdispls, sendtype,
                               recvbuf, recvcounts, rdispls, recvtype, comm, req);
}

int xchg_ialltoallv_algo(xchg_algo algo, const void *sendbuf, const int sendcounts[],
                         const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                         MPI_Comm comm, xchg_request *req)
{
    return xchg_ialltoallv_run(algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                               recvcounts, rdispls, recvtype, comm, req);
}

#if XCHG_HAVE_LARGE_COUNT
int xchg_request_mpi_large(xchg_comm_state *cs, const void *sendbuf,
                           const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                           const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                           xchg_request *req)
{
    const size_t P = (size_t)(cs->size > 0 ? cs->size : 1);
    struct xchg_request_s *r = calloc(1, sizeof *r);
    /* MPI_Count and MPI_Aint are both 64-bit here; one block of 4P of the wider */
    const size_t elem = sizeof(MPI_Count) > sizeof(MPI_Aint) ? sizeof(MPI_Count)
                                                             : sizeof(MPI_Aint);
    char *a = r ? malloc(4 * P * elem) : NULL;
    if (!a) {
        free(r);
        return xchg_error_code(MPI_ERR_NO_MEM, "xchg_alltoallv_init_c: out of memory for "
                               "the request");
    }
    MPI_Count *sc = (MPI_Count *)a, *rc_ = (MPI_Count *)(a + P * elem);
    MPI_Aint *sd = (MPI_Aint *)(a + 2 * P * elem), *rd = (MPI_Aint *)(a + 3 * P * elem);
    r->mpi_arrays = a;
    r->passed_to_mpi = 1;
    r->mpi_req = MPI_REQUEST_NULL;
    r->comm = comm;
    r->stype = r->rtype = MPI_DATATYPE_NULL;
    r->in_place = sendbuf == MPI_IN_PLACE;
    r->algo = xchg_registry_find(XCHG_ALGO_VENDOR);
    r->c.cs = cs;
    r->c.comm = cs->pcomm;
    r->c.rank = cs->rank;
    r->c.size = cs->size;
    memcpy(rc_, recvcounts, sizeof(MPI_Count) * (size_t)cs->size);
    memcpy(rd, rdispls, sizeof(MPI_Aint) * (size_t)cs->size);
    if (!r->in_place) {
        memcpy(sc, sendcounts, sizeof(MPI_Count) * (size_t)cs->size);
        memcpy(sd, sdispls, sizeof(MPI_Aint) * (size_t)cs->size);
    }
    int rc = type_keep(recvtype, &r->rtype);
    if (rc == MPI_SUCCESS && !r->in_place)
        rc = type_keep(sendtype, &r->stype);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Alltoallv_init_c(sendbuf, sc, sd, r->in_place ? MPI_DATATYPE_NULL : r->stype,
                                   recvbuf, rc_, rd, r->rtype, cs->pcomm, MPI_INFO_NULL,
                                   &r->mpi_req);
    if (rc != MPI_SUCCESS) {
        request_destroy(r);
        return rc;
    }
    xchg_comm_state_retain(cs);
    r->holds_state = 1;
    *req = r;
    return MPI_SUCCESS;
}
#endif

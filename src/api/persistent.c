/*
 * persistent.c - the alltoallv requests, each a mode of the one request
 * type (request.h): persistent (xchg_alltoallv_init and _init_algo),
 * nonblocking (xchg_ialltoallv and _algo, and the request of
 * xchg_ialltoallv_c), and MPI's own persistent request for large counts.
 *
 * Init checks the arguments exactly as xchg_alltoallv does, copies the
 * count/displacement arrays and duplicates derived datatypes (so the caller
 * may free theirs), resolves the algorithm once and, for algorithms with
 * persistent hooks (xchg_persist_ops), builds their plan (the plan mode).
 * Algorithms without hooks take the generic mode: start replays the
 * blocking call as a coroutine, or at once where it cannot run as one.
 *
 * Large counts that some rank cannot give xchg's algorithms (large_count.c)
 * make a request that is MPI's own MPI_Alltoallv_init_c on the private
 * communicator (the MPI mode): start, wait, test and free pass through.
 *
 * MPI_IN_PLACE: the contract is that each start sends what recvbuf's blocks
 * hold at that start. The request keeps one copy buffer for the span of the
 * receive blocks (allocated at init, so plans may post sends from it), fills
 * it at every start and sends from it with the receive layout.
 */
#include "api.h"

#include <stdlib.h>
#include <string.h>

/* ---- persistent: the plan and generic modes ---- */

typedef struct a2av_persistent {
    const xchg_algo_info *algo;
    xchg_call c;                 /* lives as long as the request */
    int *arrays;                 /* 4P ints: our copies of counts/displs */
    MPI_Datatype stype, rtype;   /* our duplicates (or the predefined types) */
    int in_place;
    void *ip_buf;                /* MPI_IN_PLACE copy of recvbuf's blocks */
    size_t ip_bytes;
    MPI_Aint ip_lo;
    const xchg_persist_ops *persist; /* the algorithm's hooks (plan mode) */
    void *plan;                  /* the algorithm's (plan mode) */
    int generic_rc;              /* generic mode: result of a call run at its start */
    xchg_nb *nb;                 /* generic mode: the exchange as a coroutine, if any */
    long rec_shape;              /* XCHG_RECORD: the shape each start counts (-1: none) */
} a2av_persistent;

static void persistent_release(a2av_persistent *q)
{
    xchg_nb_free(q->nb);
    if (q->ip_buf)
        xchg_temp_free(&q->c, q->ip_buf, q->ip_bytes);
    xchg_type_release(&q->stype);
    xchg_type_release(&q->rtype);
    free(q->arrays);
}

/* Whether an exchange of algo on cs runs blocking at its start rather than
 * as a coroutine. Inside coroutines a blocking collective is unsafe: two
 * exchanges on two communicators, each blocked in one, can wait for each
 * other across ranks. So what has no nonblocking form runs at the start
 * (after what is queued on cs), where every rank is at the same point of
 * its program: the RMA algorithms (a window per call, fences, locks).
 * One-time setup is made there too, after which the exchange runs as a
 * coroutine: an algorithm's prepare step (hierarchical's node
 * communicators, shm's own window), or auto's node map and those
 * communicators. */
static int blocking_start(xchg_comm_state *cs, xchg_algo algo)
{
    const xchg_algo_info *info = xchg_registry_find(algo);
    if (info && info->blocking_start)
        return 1;
    if (info && info->prepare && !info->ready(cs)) {
        xchg_nb_drain(cs);
        (void)info->prepare(cs); /* collective; a failure: the run finds out (agreed) */
        return !info->ready(cs);
    }
    if (algo == XCHG_ALGO_AUTO && !(cs->auto_prepared & 2) && xchg_select_prepares(cs)) {
        xchg_nb_drain(cs);
        xchg_select_prepare(cs, 1); /* collective; a failure only narrows the choice */
    }
    return 0;
}

/* What every start does first: the MPI_IN_PLACE copy, the counters. */
static void start_counts(a2av_persistent *q)
{
    xchg_call *c = &q->c;
    if (q->in_place && q->ip_bytes) {
        memcpy(q->ip_buf, (char *)c->recvbuf + q->ip_lo, q->ip_bytes);
        xchg_charge_copy(q->ip_bytes);
    }
    c->temp_peak = c->temp_cur;
    c->ran_instead = XCHG_ALGO_AUTO;
    c->cs->calls++;
    xchg_record_count(c->cs, q->rec_shape);
}

static int plan_start(void *ctx)
{
    a2av_persistent *q = ctx;
    xchg_nb_drain(q->c.cs); /* the plan uses the private communicator at once */
    start_counts(q);
    int rc = q->persist->start(&q->c, q->plan);
    if (rc != MPI_SUCCESS)
        /* The start may have set operations in flight (MPI_Startall, a
         * fence) and partners wait for this exchange: complete it before
         * the request becomes inactive, so it stays usable and nothing is
         * left running. The start's error is the one reported. */
        q->persist->wait(&q->c, q->plan);
    return rc;
}

static int plan_test(void *ctx, int *done)
{
    a2av_persistent *q = ctx;
    return q->persist->test(&q->c, q->plan, done);
}

static int plan_wait(void *ctx)
{
    a2av_persistent *q = ctx;
    return q->persist->wait(&q->c, q->plan);
}

static int plan_free(void *ctx)
{
    a2av_persistent *q = ctx;
    xchg_nb_drain(q->c.cs); /* the plan's free may be collective */
    int rc = q->persist->free(&q->c, q->plan);
    persistent_release(q);
    return rc;
}

/* The generic mode's exchange: the blocking algorithm, as a coroutine. */
static int generic_run(void *ctx)
{
    a2av_persistent *q = ctx;
    return q->algo->run(&q->c);
}

static int generic_start(void *ctx)
{
    a2av_persistent *q = ctx;
    xchg_comm_state *cs = q->c.cs;
    start_counts(q);
    if (blocking_start(cs, q->algo->id) ||
        xchg_nb_start(cs, generic_run, q, &q->nb) != MPI_SUCCESS) {
        /* no memory for a coroutine: run it here, blocking (every rank
         * takes part either way) */
        xchg_nb_drain(cs);
        q->generic_rc = q->algo->run(&q->c);
    }
    return MPI_SUCCESS;
}

static int generic_test(void *ctx, int *done)
{
    a2av_persistent *q = ctx;
    return xchg_nb_test_or_ran(q->nb, q->generic_rc, done);
}

static int generic_wait(void *ctx)
{
    a2av_persistent *q = ctx;
    return xchg_nb_wait_or_ran(q->nb, q->generic_rc);
}

static int generic_free(void *ctx)
{
    persistent_release(ctx);
    return MPI_SUCCESS;
}

/* An exchange ended: its stats. */
static void persistent_end(void *ctx)
{
    a2av_persistent *q = ctx;
    xchg_nb_free(q->nb);
    q->nb = NULL;
    xchg_comm_state *cs = q->c.cs;
    cs->last.algo = q->c.ran_instead != XCHG_ALGO_AUTO ? q->c.ran_instead : q->algo->id;
    cs->last.sparse_algo = XCHG_SPARSE_INVALID;
    cs->last.temp_bytes = q->c.temp_peak;
    cs->last.calls = cs->calls;
    cs->last.passed_to_mpi = 0;
}

static xchg_algo persistent_algo(void *ctx)
{
    const a2av_persistent *q = ctx;
    return q->algo ? q->algo->id : XCHG_ALGO_INVALID;
}

static const xchg_request_ops plan_ops = {.start = plan_start,
                                          .test = plan_test,
                                          .wait = plan_wait,
                                          .end = persistent_end,
                                          .free = plan_free,
                                          .algo = persistent_algo};

static const xchg_request_ops generic_ops = {.start = generic_start,
                                             .test = generic_test,
                                             .wait = generic_wait,
                                             .end = persistent_end,
                                             .free = generic_free,
                                             .algo = persistent_algo};

/* The checks of an init before it makes anything, as xchg_alltoallv's;
 * a->algo resolved, a->cs found. An argument error is agreed, so it fails
 * every rank alike. Returns the error raised. */
static int init_checks(xchg_a2av_args *a, xchg_request *req)
{
    int mpi_rc = xchg_mpi_check(a->comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    if (!req)
        return xchg_raise(a->comm, xchg_error_code(MPI_ERR_ARG, "req is NULL"));
    *req = XCHG_REQUEST_NULL;
    /* The state first (collective on first use); then an argument error
     * is agreed with the allreduce below, so it fails every rank alike. */
    int P0 = 0, rc = xchg_check_comm(a->comm, &P0);
    if (rc == MPI_SUCCESS)
        rc = xchg_api_state(a->comm, &a->cs);
    if (rc != MPI_SUCCESS)
        return xchg_raise(a->comm, rc);
    xchg_comm_state *cs = a->cs;
    xchg_nb_drain(cs); /* init is collective: after what was started before */
    int arg_err = a->pre_err != MPI_SUCCESS
                      ? a->pre_err
                      : xchg_check_alltoallv_args(a->sendbuf, a->sendcounts, a->sdispls,
                                                  a->sendtype, a->recvbuf, a->recvcounts,
                                                  a->rdispls, a->recvtype, a->comm);
    if (arg_err == MPI_SUCCESS)
        arg_err = xchg_resolve_algo(&cs->settings, a->algo, a->from_env, &a->algo);
    if (arg_err != MPI_SUCCESS)
        return xchg_raise(a->comm, xchg_agree_errors(cs->pcomm, cs->rank, cs->size, arg_err,
                                                     "xchg_alltoallv_init"));
    return MPI_SUCCESS;
}

/* The request's call on its own copies of a's arrays (q->arrays, 4P ints)
 * and datatypes, with the MPI_IN_PLACE copy buffer. Local. */
static int persistent_call(a2av_persistent *q, const xchg_a2av_args *a)
{
    xchg_comm_state *cs = a->cs;
    const int P = cs->size;
    int *arr = q->arrays;
    q->stype = q->rtype = MPI_DATATYPE_NULL;
    q->in_place = a->sendbuf == MPI_IN_PLACE;
    memcpy(arr + 2 * P, a->recvcounts, sizeof(int) * (size_t)P);
    memcpy(arr + 3 * P, a->rdispls, sizeof(int) * (size_t)P);
    if (!q->in_place) {
        memcpy(arr, a->sendcounts, sizeof(int) * (size_t)P);
        memcpy(arr + P, a->sdispls, sizeof(int) * (size_t)P);
    }
    xchg_call *c = &q->c;
    c->sendbuf = a->sendbuf;
    c->sendcounts = arr;
    c->sdispls = arr + P;
    c->recvbuf = a->recvbuf;
    c->recvcounts = arr + 2 * P;
    c->rdispls = arr + 3 * P;
    c->comm = cs->pcomm;
    c->cs = cs;
    c->rank = cs->rank;
    c->size = P;
    c->temp_limit = xchg_temp_limit_of(cs);
    int rc = xchg_type_keep(a->recvtype, &q->rtype);
    if (rc == MPI_SUCCESS)
        rc = xchg_typeinfo_get(q->rtype, &c->rt);
    if (rc == MPI_SUCCESS && !q->in_place) {
        rc = xchg_type_keep(a->sendtype, &q->stype);
        if (rc == MPI_SUCCESS)
            rc = xchg_typeinfo_get(q->stype, &c->st);
    }
    if (rc == MPI_SUCCESS && q->in_place) {
        /* sends with the receive layout from a copy made at each start */
        xchg_block_span(c->recvcounts, c->rdispls, P, &c->rt, &q->ip_lo, &q->ip_bytes);
        q->ip_buf = xchg_temp_alloc(c, q->ip_bytes, "persistent MPI_IN_PLACE copy of "
                                    "recvbuf", &rc);
        if (q->ip_buf) {
            c->sendbuf = (char *)q->ip_buf - q->ip_lo;
            c->sendcounts = c->recvcounts;
            c->sdispls = c->rdispls;
            c->st = c->rt;
        }
    }
    return rc;
}

/* Collective: the shape recorded, the algorithm chosen (auto: once, from
 * the request's own counts) and its plan made, if it has hooks that fit. */
static int persistent_plan(a2av_persistent *q, xchg_algo algo)
{
    xchg_call *c = &q->c;
    xchg_comm_state *cs = c->cs;
    int rc = MPI_SUCCESS;
    q->rec_shape = -1;
    if (cs->settings.record) /* agreed; the starts count the calls */
        rc = xchg_record_call(cs, c->sendcounts, c->st.size, MPI_SUCCESS, 0, &q->rec_shape);
    if (rc == MPI_SUCCESS && algo == XCHG_ALGO_AUTO)
        rc = xchg_select_alltoallv_now(c, &algo);
    if (rc != MPI_SUCCESS)
        return rc;
    q->algo = xchg_registry_find(algo);
    q->persist = q->algo->persist;
    if (q->persist && q->persist->fits && !q->persist->fits(c))
        q->persist = NULL;
    /* reuse announced: the algorithm's prepare step now (collective, the
     * same algorithm on every rank), so that no start blocks for it */
    if (!q->persist && q->algo->prepare) /* made once: a no-op where it is */
        (void)q->algo->prepare(cs); /* a failure: the run finds out (agreed) */
    return q->persist ? q->persist->init(c, &q->plan) : MPI_SUCCESS;
}

int xchg_alltoallv_init_run(xchg_algo algo, int from_env, int pre_err, const void *sendbuf,
                            const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Info info, xchg_request *req)
{
    (void)info;
    xchg_a2av_args a = {algo,    from_env,   pre_err, sendbuf,  sendcounts, sdispls, sendtype,
                        recvbuf, recvcounts, rdispls, recvtype, comm,       NULL};
    int rc = init_checks(&a, req);
    if (rc != MPI_SUCCESS)
        return rc; /* raised there */
    void *ctx = NULL;
    xchg_request r = xchg_request_alloc(sizeof(a2av_persistent), &ctx);
    a2av_persistent *q = ctx;
    const int P = a.cs->size;
    int *arrays = r ? malloc(sizeof(int) * 4 * (size_t)(P > 0 ? P : 1)) : NULL;
    if (!arrays) {
        xchg_request_discard(r);
        return xchg_raise(comm, xchg_error_code(MPI_ERR_NO_MEM, "xchg_alltoallv_init: out "
                                                "of memory for the request"));
    }
    q->arrays = arrays;
    rc = persistent_call(q, &a);
    /* Everything above is local; from here on ranks must agree. A local
     * failure before the collective part would hang the others, so agree
     * (the same allreduce as for an argument error above). */
    rc = xchg_agree_errors(q->c.comm, q->c.rank, q->c.size, rc, "xchg_alltoallv_init");
    if (rc == MPI_SUCCESS)
        rc = persistent_plan(q, a.algo);
    if (rc != MPI_SUCCESS) {
        persistent_release(q);
        xchg_request_discard(r);
        return xchg_raise(comm, rc);
    }
    /* The request keeps the state (and its private communicator) alive
     * even if the caller frees comm first. */
    xchg_request_bind(r, q->persist ? &plan_ops : &generic_ops, comm, a.cs, 0);
    *req = r;
    return xchg_raise(comm, MPI_SUCCESS); /* (SMPI: the model's charge, flushed) */
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

/* ---- nonblocking: xchg_ialltoallv's mode ---- */

typedef struct a2av_nonblocking {
    xchg_a2av_args args;       /* the call, on the copies below */
    int *arrays;               /* the copies of its counts and displacements */
    MPI_Datatype stype, rtype; /* our duplicates (or the predefined types) */
    xchg_nb_body body;         /* xchg_ialltoallv_c: its agreement and MPI's path */
    xchg_nb *nb;               /* the exchange as a coroutine (NULL: it ran at once) */
    int rc;                    /* ... the result of the one that ran at once */
    xchg_algo ran;             /* the algorithm it ran (the body records it) */
    int ended;                 /* complete: xchg_request_algo tells ran */
} a2av_nonblocking;

/* The blocking call's body (or, for xchg_ialltoallv_c, the large-count
 * agreement first: large_count.c). */
static int nonblocking_body(a2av_nonblocking *q)
{
    if (q->body.run)
        return q->body.run(q->body.ext, &q->args);
    return xchg_alltoallv_body(&q->args);
}

/* The exchange as a coroutine. */
static int nonblocking_run(void *ctx)
{
    a2av_nonblocking *q = ctx;
    int rc = nonblocking_body(q);
    q->ran = q->args.cs->last.algo; /* recorded by the body just now */
    return rc;
}

static int nonblocking_test(void *ctx, int *done)
{
    a2av_nonblocking *q = ctx;
    return xchg_nb_test_or_ran(q->nb, q->rc, done);
}

static int nonblocking_wait(void *ctx)
{
    a2av_nonblocking *q = ctx;
    return xchg_nb_wait_or_ran(q->nb, q->rc);
}

/* The exchange ended: the body recorded its stats. */
static void nonblocking_end(void *ctx)
{
    a2av_nonblocking *q = ctx;
    xchg_nb_free(q->nb);
    q->nb = NULL;
    q->ended = 1;
}

static void nonblocking_release(a2av_nonblocking *q)
{
    xchg_nb_free(q->nb);
    if (q->body.free)
        q->body.free(q->body.ext);
    xchg_type_release(&q->stype);
    xchg_type_release(&q->rtype);
    free(q->arrays);
}

static int nonblocking_free(void *ctx)
{
    nonblocking_release(ctx);
    return MPI_SUCCESS;
}

static xchg_algo nonblocking_algo(void *ctx)
{
    const a2av_nonblocking *q = ctx;
    const xchg_algo_info *info = q->ended ? xchg_registry_find(q->ran) : NULL;
    return info ? info->id : XCHG_ALGO_INVALID;
}

static const xchg_request_ops nonblocking_ops = {.start = NULL, /* never restarted */
                                                 .test = nonblocking_test,
                                                 .wait = nonblocking_wait,
                                                 .end = nonblocking_end,
                                                 .free = nonblocking_free,
                                                 .algo = nonblocking_algo};

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

/* The caller may free derived types once the call returns (as with MPI's
 * nonblocking calls): the request's call uses duplicates. */
static void nonblocking_types(a2av_nonblocking *q, const xchg_a2av_args *a)
{
    q->stype = q->rtype = MPI_DATATYPE_NULL;
    if (a->sendbuf != MPI_IN_PLACE && a->sendtype != MPI_DATATYPE_NULL &&
        xchg_type_keep(a->sendtype, &q->stype) == MPI_SUCCESS)
        q->args.sendtype = q->stype;
    else
        q->stype = MPI_DATATYPE_NULL;
    if (a->recvtype != MPI_DATATYPE_NULL && xchg_type_keep(a->recvtype, &q->rtype) == MPI_SUCCESS)
        q->args.recvtype = q->rtype;
    else
        q->rtype = MPI_DATATYPE_NULL;
}

/* Starts the exchange a (whose arrays are the request's own copies, in
 * arrays, which the request now owns; body: what it runs instead of the
 * blocking call's body, its ext also owned) as a request. */
int xchg_ialltoallv_launch(const xchg_a2av_args *a, int *arrays, const xchg_nb_body *body,
                           xchg_request *req)
{
    void *ctx = NULL;
    xchg_request r = xchg_request_alloc(sizeof(a2av_nonblocking), &ctx);
    if (!r) {
        free(arrays);
        if (body && body->free)
            body->free(body->ext);
        return MPI_ERR_NO_MEM;
    }
    a2av_nonblocking *q = ctx;
    xchg_comm_state *cs = a->cs;
    q->arrays = arrays;
    if (body)
        q->body = *body;
    q->args = *a;
    nonblocking_types(q, a);
    xchg_request_bind(r, &nonblocking_ops, a->comm, cs, 1); /* started here */
    xchg_algo resolved = a->algo;
    if (xchg_resolve_algo(&cs->settings, a->algo, a->from_env, &resolved) != MPI_SUCCESS)
        resolved = a->algo; /* the body reports it */
    if (blocking_start(cs, resolved) ||
        xchg_nb_start(cs, nonblocking_run, q, &q->nb) != MPI_SUCCESS) {
        xchg_nb_drain(cs); /* no coroutine: run it here, blocking */
        q->rc = nonblocking_body(q);
        q->ran = cs->last.algo;
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

/* ---- a new communicator's first nonblocking auto calls --------------
 * MPI's own MPI_Ialltoallv on the caller's communicator until set-up pays
 * back (select/phase.c); the request is that one, its check settled on
 * completion. */
static int passed_test(void *ctx, int *done)
{
    return xchg_phase_nb_test(ctx, done);
}

static int passed_wait(void *ctx)
{
    return xchg_phase_nb_wait(ctx);
}

static int passed_free(void *ctx)
{
    (void)ctx; /* inactive: MPI's request is complete */
    return MPI_SUCCESS;
}

static xchg_algo passed_algo(void *ctx)
{
    (void)ctx;
    return XCHG_ALGO_VENDOR;
}

/* MPI's request itself; a check still in flight is decided at the next
 * call's start on the communicator (or its free), as where the request
 * completes after it. */
static int passed_to_mpi(void *ctx, MPI_Request *out)
{
    xchg_phase_nb *nb = ctx;
    *out = nb->req;
    nb->req = MPI_REQUEST_NULL;
    nb->checking = 0;
    return 1;
}

static const xchg_request_ops passed_ops = {.start = NULL, /* never restarted */
                                            .test = passed_test,
                                            .wait = passed_wait,
                                            .free = passed_free,
                                            .algo = passed_algo,
                                            .to_mpi = passed_to_mpi};

/* Passes the call through where phase.c says so (*handled = 1, its
 * result returned); else the usual path runs it (the state is set up). */
static int ialltoallv_passed(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             xchg_request *req, int *handled)
{
    *handled = 0;
    int P = 0;
    if (!req || xchg_mpi_check(comm) != MPI_SUCCESS || xchg_check_comm(comm, &P) != MPI_SUCCESS)
        return MPI_SUCCESS; /* the usual path reports it */
    void *ctx = NULL;
    xchg_request r = xchg_request_alloc(sizeof(xchg_phase_nb), &ctx);
    if (!r)
        return MPI_SUCCESS; /* the usual path, which says what is missing */
    xchg_phase_nb *nb = ctx;
    int passed = 0;
    xchg_comm_state *ready = NULL;
    int rc = xchg_phase_ialltoallv(comm, xchg_api_names(), sendbuf, sendcounts, sdispls,
                                   sendtype, recvbuf, recvcounts, rdispls, recvtype, nb,
                                   &passed, &ready);
    if (!passed && rc == MPI_SUCCESS) {
        xchg_request_discard(r);
        return MPI_SUCCESS; /* set up (or no memory for the state): the usual path */
    }
    *handled = 1;
    *req = XCHG_REQUEST_NULL;
    if (rc != MPI_SUCCESS || nb->req == MPI_REQUEST_NULL) {
        const int raised = nb->raised;
        xchg_request_discard(r);
        return raised ? rc : xchg_raise(comm, rc);
    }
    xchg_request_bind(r, &passed_ops, comm, nb->cs, 1); /* started here */
    *req = r;
    return MPI_SUCCESS;
}

int xchg_ialltoallv_run(xchg_algo algo, int from_env, const void *sendbuf,
                        const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req)
{
    if (algo == XCHG_ALGO_AUTO && from_env) {
        int handled = 0;
        int prc = ialltoallv_passed(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                    rdispls, recvtype, comm, req, &handled);
        if (handled)
            return prc;
    }
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
/* ---- MPI's own persistent request: the MPI mode ---- */

typedef struct a2av_mpi {
    xchg_comm_state *cs;
    MPI_Request req;           /* MPI_Alltoallv_init_c's on the private communicator */
    void *arrays;              /* its copies of the large-count arrays */
    MPI_Datatype stype, rtype; /* our duplicates (or the predefined types) */
} a2av_mpi;

static void mpi_release(a2av_mpi *q)
{
    if (q->req != MPI_REQUEST_NULL)
        MPI_Request_free(&q->req);
    free(q->arrays);
    xchg_type_release(&q->stype);
    xchg_type_release(&q->rtype);
}

static int mpi_start(void *ctx)
{
    a2av_mpi *q = ctx;
    xchg_nb_drain(q->cs); /* it uses the private communicator at once */
    q->cs->calls++;
    return MPI_Start(&q->req);
}

static int mpi_test(void *ctx, int *done)
{
    a2av_mpi *q = ctx;
    return MPI_Test(&q->req, done, MPI_STATUS_IGNORE);
}

static int mpi_wait(void *ctx)
{
    a2av_mpi *q = ctx;
    return MPI_Wait(&q->req, MPI_STATUS_IGNORE);
}

static void mpi_end(void *ctx)
{
    xchg_comm_state *cs = ((a2av_mpi *)ctx)->cs;
    cs->last.algo = XCHG_ALGO_VENDOR;
    cs->last.sparse_algo = XCHG_SPARSE_INVALID;
    cs->last.temp_bytes = 0;
    cs->last.calls = cs->calls;
    cs->last.passed_to_mpi = XCHG_PASSED_BEYOND_INT;
}

static int mpi_free(void *ctx)
{
    a2av_mpi *q = ctx;
    int rc = MPI_Request_free(&q->req); /* MPI_REQUEST_NULL afterwards */
    mpi_release(q);
    return rc;
}

static xchg_algo mpi_algo(void *ctx)
{
    (void)ctx;
    return XCHG_ALGO_VENDOR;
}

static const xchg_request_ops mpi_ops = {.start = mpi_start,
                                         .test = mpi_test,
                                         .wait = mpi_wait,
                                         .end = mpi_end,
                                         .free = mpi_free,
                                         .algo = mpi_algo};

int xchg_request_mpi_large(xchg_comm_state *cs, const void *sendbuf,
                           const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                           const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                           xchg_request *req)
{
    const size_t P = (size_t)(cs->size > 0 ? cs->size : 1);
    void *ctx = NULL;
    xchg_request r = xchg_request_alloc(sizeof(a2av_mpi), &ctx);
    /* MPI_Count and MPI_Aint are both 64-bit here; one block of 4P of the wider */
    const size_t elem = sizeof(MPI_Count) > sizeof(MPI_Aint) ? sizeof(MPI_Count)
                                                             : sizeof(MPI_Aint);
    char *a = r ? malloc(4 * P * elem) : NULL;
    if (!a) {
        xchg_request_discard(r);
        return xchg_error_code(MPI_ERR_NO_MEM, "xchg_alltoallv_init_c: out of memory for "
                               "the request");
    }
    MPI_Count *sc = (MPI_Count *)a, *rc_ = (MPI_Count *)(a + P * elem);
    MPI_Aint *sd = (MPI_Aint *)(a + 2 * P * elem), *rd = (MPI_Aint *)(a + 3 * P * elem);
    a2av_mpi *q = ctx;
    q->cs = cs;
    q->arrays = a;
    q->req = MPI_REQUEST_NULL;
    q->stype = q->rtype = MPI_DATATYPE_NULL;
    const int in_place = sendbuf == MPI_IN_PLACE;
    memcpy(rc_, recvcounts, sizeof(MPI_Count) * (size_t)cs->size);
    memcpy(rd, rdispls, sizeof(MPI_Aint) * (size_t)cs->size);
    if (!in_place) {
        memcpy(sc, sendcounts, sizeof(MPI_Count) * (size_t)cs->size);
        memcpy(sd, sdispls, sizeof(MPI_Aint) * (size_t)cs->size);
    }
    int rc = xchg_type_keep(recvtype, &q->rtype);
    if (rc == MPI_SUCCESS && !in_place)
        rc = xchg_type_keep(sendtype, &q->stype);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Alltoallv_init_c(sendbuf, sc, sd, in_place ? MPI_DATATYPE_NULL : q->stype,
                                   recvbuf, rc_, rd, q->rtype, cs->pcomm, MPI_INFO_NULL,
                                   &q->req);
    if (rc != MPI_SUCCESS) {
        mpi_release(q);
        xchg_request_discard(r);
        return rc;
    }
    xchg_request_bind(r, &mpi_ops, comm, cs, 0);
    *req = r;
    return MPI_SUCCESS;
}
#endif

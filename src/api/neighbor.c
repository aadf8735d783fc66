/*
 * neighbor.c - the public neighbour exchange (xchg_neighbor_alltoallv, its
 * _algo, _init and nonblocking forms) and the names of its algorithms.
 *
 * A topology never changes, so the graph is read once per communicator, at
 * its first neighbour exchange, and kept on xchg's state for it
 * (XCHG_EXT_NEIGHBOR). That first call also agrees, with one allreduce,
 * that every rank read its graph and had good arguments: the state is
 * kept only where every rank succeeded, so the next call is the first
 * again on every rank alike. Later calls run no collective besides the
 * exchange (XCHG_CHECK=1 adds the check mode's), and an argument error
 * there stays the failing rank's (docs/errors.md). A persistent init
 * always agrees (one allreduce for the arguments, one for the plans).
 */
#include "neighbor_state.h"
#include "node/shm_window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef xchg_nbr_state nbr_state;
#define NBR_IDS XCHG_NBR_IDS

void xchg_nbr_state_free(void *p)
{
    nbr_state *st = p;
    for (int id = 0; id < NBR_IDS; id++) {
        const xchg_neighbor_info *a = xchg_neighbor_registry_find((xchg_neighbor_algo)id);
        if (a && a->analysis_free && st->analysis[id])
            a->analysis_free(st->analysis[id]);
    }
    xchg_nbr_graph_free(&st->g);
    free(st);
}

nbr_state *xchg_nbr_state_new(void)
{
    nbr_state *st = calloc(1, sizeof *st);
    if (st)
        st->auto_algo = st->auto_polled = XCHG_NEIGHBOR_INVALID;
    return st;
}

void xchg_nbr_state_keep(xchg_comm_state *cs, nbr_state *st)
{
    cs->ext[XCHG_EXT_NEIGHBOR] = st;
    cs->ext_free[XCHG_EXT_NEIGHBOR] = xchg_nbr_state_free;
}

int xchg_nbr_own_graph(MPI_Comm comm)
{
    xchg_comm_state *cs = NULL;
    if (xchg_comm_state_lookup(comm, &cs) != MPI_SUCCESS || !cs)
        return 0;
    const nbr_state *st = cs->ext[XCHG_EXT_NEIGHBOR];
    return st && st->own_graph;
}

/* This rank's part of a first call on an MPI topology: the graph read (no
 * communication). */
static int state_make(MPI_Comm comm, nbr_state **out)
{
    *out = xchg_nbr_state_new();
    if (!*out)
        return xchg_error_code(MPI_ERR_NO_MEM, "no memory for the neighbour exchange state");
    int rc = xchg_nbr_graph_read(comm, &(*out)->g);
    if (rc != MPI_SUCCESS) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* The arguments of one call, as the caller gave them (or the request's
 * copies). */
typedef struct nbr_args {
    xchg_neighbor_algo algo;
    int from_env;
    const void *sendbuf;
    const int *sendcounts, *sdispls;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts, *rdispls;
    MPI_Datatype recvtype;
    MPI_Comm comm; /* the caller's */
    xchg_comm_state *cs;
} nbr_args;

/* "direct, locality, ... or auto": this build's names, for a message. */
static const char *algo_names(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < xchg_neighbor_registry_count() && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s, ", xchg_neighbor_registry_at(i)->name);
    if (n < len)
        snprintf(buf + n, len - n, "or auto");
    return buf;
}

int xchg_nbr_resolve_algo(const xchg_settings *s, xchg_neighbor_algo algo, int from_env,
                        xchg_neighbor_algo *out)
{
    if (from_env) {
        char names[256];
        algo = s->neighbor_algo; /* agreed: the same on every rank */
        if (algo == XCHG_NEIGHBOR_INVALID)
            return xchg_error_code(MPI_ERR_ARG, "XCHG_NEIGHBOR_ALGO: unknown neighbour "
                                   "algorithm '%s' (%s)", s->neighbor_algo_text,
                                   algo_names(names, sizeof names));
    }
    if (algo == XCHG_NEIGHBOR_INVALID)
        return xchg_error_code(MPI_ERR_ARG, "algo %d is not a neighbour algorithm "
                               "(XCHG_NEIGHBOR_INVALID: xchg_neighbor_algo_from_name returns "
                               "it for an unknown name)", (int)algo);
    if (algo != XCHG_NEIGHBOR_AUTO && !xchg_neighbor_registry_find(algo))
        return xchg_error_code(MPI_ERR_ARG, "algo %d is not a neighbour algorithm of this "
                               "build (xchg_neighbor_algo_count and xchg_neighbor_algo_at list "
                               "them)", (int)algo);
    *out = algo;
    return MPI_SUCCESS;
}

/* The analysis of algorithm id on st's graph, made on first need
 * (collective: every rank reaches it at the same call). */
static int analysis_of(nbr_state *st, xchg_nbr_call *c, xchg_neighbor_algo id)
{
    const xchg_neighbor_info *a = xchg_neighbor_registry_find(id);
    if (!a || !a->analyse || (int)id >= NBR_IDS || st->analysis[id])
        return MPI_SUCCESS;
    c->table_key = xchg_table_key(); /* for locality's census (auto's model) */
    xchg_table_warn(c->rank == 0);    /* a table it cannot use, as auto says */
    return a->analyse(c, &st->analysis[id]);
}

/* auto's choice, once per communicator (its first call with auto), the
 * same on every rank (src/select/model_neighbor.c), from locality's
 * analysis (its census agrees the statistics and the tuning table): a
 * table's neighbor rule for P, whose algorithm's analysis is made here
 * (collective: every rank has the same rule; one that fails, agreed,
 * leaves the choice to the model); else the model; direct where
 * locality's analysis failed (agreed). Two choices are made together: one
 * for blocking calls, one for the polled ones (ineighbor and persistent
 * requests, whose locality runs as a coroutine that polls each of its
 * probes). */
static xchg_neighbor_algo auto_choice(nbr_state *st, xchg_nbr_call *c, int polled)
{
    if (st->auto_algo != XCHG_NEIGHBOR_INVALID)
        return polled ? st->auto_polled : st->auto_algo;
    st->auto_algo = st->auto_polled = XCHG_NEIGHBOR_DIRECT;
    if (!xchg_neighbor_registry_find(XCHG_NEIGHBOR_LOCALITY) ||
        analysis_of(st, c, XCHG_NEIGHBOR_LOCALITY) != MPI_SUCCESS)
        return XCHG_NEIGHBOR_DIRECT;
    const xchg_nbr_stats *s = xchg_neighbor_locality_stats(st->analysis[XCHG_NEIGHBOR_LOCALITY]);
    int line;
    xchg_neighbor_algo t = xchg_select_neighbor_rule(c->cs, s, &line);
    if (t != XCHG_NEIGHBOR_INVALID && analysis_of(st, c, t) == MPI_SUCCESS) {
        st->auto_algo = st->auto_polled = t;
        xchg_select_neighbor_ruled(c->cs, &st->auto_printed, t, line);
    } else {
        /* locality_shm where the model prefers it and its window is made
         * (its analysis: collective, agreed; every rank has the same s) */
        int shm = xchg_neighbor_registry_find(XCHG_NEIGHBOR_LOCALITY_SHM) &&
                  xchg_node_window_usable(c->cs) && xchg_model_neighbor_shm_wins(s) &&
                  analysis_of(st, c, XCHG_NEIGHBOR_LOCALITY_SHM) == MPI_SUCCESS &&
                  xchg_neighbor_locality_shm_window(st->analysis[XCHG_NEIGHBOR_LOCALITY_SHM]);
        xchg_select_neighbor(c->cs, s, shm, &st->auto_printed, &st->auto_algo,
                             &st->auto_polled);
    }
    return polled ? st->auto_polled : st->auto_algo;
}

/* Whether running algo on st needs a collective first: auto's first
 * choice, or an analysis not yet made. */
static int analysis_pending(const nbr_state *st, xchg_neighbor_algo algo, int polled)
{
    if (algo == XCHG_NEIGHBOR_AUTO && st->auto_algo == XCHG_NEIGHBOR_INVALID)
        return 1;
    if (algo == XCHG_NEIGHBOR_AUTO)
        algo = polled ? st->auto_polled : st->auto_algo;
    const xchg_neighbor_info *a = xchg_neighbor_registry_find(algo);
    return a && a->analyse && (int)algo < NBR_IDS && !st->analysis[algo];
}

/* The algorithm of a checked call (auto resolved) and its analysis in c. */
static int analysed(nbr_state *st, xchg_nbr_call *c, xchg_neighbor_algo *algo, int polled)
{
    if (*algo == XCHG_NEIGHBOR_AUTO)
        *algo = auto_choice(st, c, polled);
    int rc = analysis_of(st, c, *algo);
    c->analysis = (int)*algo < NBR_IDS ? st->analysis[*algo] : NULL;
    return rc;
}

/* The call c of the arguments a on the graph of st, checked locally:
 * arrays, types, algorithm (auto not yet resolved). */
static int call_of(const nbr_args *a, const nbr_state *st, xchg_nbr_call *c,
                   xchg_neighbor_algo *algo)
{
    xchg_comm_state *cs = a->cs;
    memset(c, 0, sizeof *c);
    c->sendbuf = a->sendbuf;
    c->sendcounts = a->sendcounts;
    c->sdispls = a->sdispls;
    c->recvbuf = a->recvbuf;
    c->recvcounts = a->recvcounts;
    c->rdispls = a->rdispls;
    c->g = &st->g;
    c->comm = cs->pcomm;
    c->cs = cs;
    c->rank = cs->rank;
    c->size = cs->size;
    c->mem.cs = cs;
    c->mem.rank = cs->rank;
    c->mem.size = cs->size;
    c->mem.comm = cs->pcomm;
    c->mem.temp_limit = xchg_temp_limit_of(cs);
    /* the algorithm first: known (the same on every rank) even where the
     * arrays are bad, so that prepare knows whether a collective follows */
    int rc = xchg_nbr_resolve_algo(&cs->settings, a->algo, a->from_env, algo);
    if (rc == MPI_SUCCESS)
        rc = xchg_check_neighbor_arrays(a->sendbuf, a->sendcounts, a->sdispls, a->sendtype,
                                        st->g.outdegree, a->recvbuf, a->recvcounts,
                                        a->rdispls, a->recvtype, st->g.indegree);
    if (rc == MPI_SUCCESS)
        rc = xchg_typeinfo_get(a->sendtype, &c->st);
    if (rc == MPI_SUCCESS)
        rc = xchg_typeinfo_get(a->recvtype, &c->rt);
    return rc;
}

/* The checks of a call and their agreement: the state made and agreed on
 * a communicator's first call (every rank then keeps it or none does), or
 * always when `agree` (init, the check mode), or when a collective follows
 * anyway (auto's first choice, an algorithm's first analysis: a rank with
 * bad arguments must not leave the others in it); then the algorithm
 * (auto resolved) and its analysis, made on its first use (collective).
 * On success *st is the communicator's state. */
static int prepare(const nbr_args *a, int agree, int polled, const char *who, nbr_state **st,
                   xchg_nbr_call *c, xchg_neighbor_algo *algo)
{
    xchg_comm_state *cs = a->cs;
    nbr_state *fresh = NULL;
    *st = cs->ext[XCHG_EXT_NEIGHBOR];
    int rc = MPI_SUCCESS;
    if (!*st)
        rc = state_make(a->comm, &fresh);
    if (fresh)
        *st = fresh;
    *algo = XCHG_NEIGHBOR_INVALID;
    if (rc == MPI_SUCCESS)
        rc = call_of(a, *st, c, algo);
    int pending = *algo != XCHG_NEIGHBOR_INVALID && analysis_pending(*st, *algo, polled);
    /* a first exchange agrees also on xchg's own graphs, made without one */
    int first = fresh || !(*st)->agreed;
    if (first || agree || cs->settings.check || pending)
        rc = xchg_agree_errors(cs->pcomm, cs->rank, cs->size, rc, who);
    if (rc == MPI_SUCCESS)
        (*st)->agreed = 1;
    if (fresh && rc == MPI_SUCCESS)
        xchg_nbr_state_keep(cs, fresh);
    else if (fresh)
        xchg_nbr_state_free(fresh);
    return rc == MPI_SUCCESS ? analysed(*st, c, algo, polled) : rc;
}

void xchg_nbr_record_stats(xchg_comm_state *cs, xchg_neighbor_algo algo, size_t temp_peak)
{
    cs->calls++;
    cs->last.algo = XCHG_ALGO_INVALID;
    cs->last.sparse_algo = XCHG_SPARSE_INVALID;
    cs->last.neighbor_algo = algo;
    cs->last.temp_bytes = temp_peak;
    cs->last.calls = cs->calls;
    cs->last.passed_to_mpi = 0;
}

/* Everything of a blocking call once the communicator's state is known
 * (also the body of a nonblocking one, in its coroutine: polled, auto's
 * choice for polled requests). *ran: the algorithm. Returns the code
 * without raising it. */
static int body(const nbr_args *a, int polled, xchg_neighbor_algo *ran)
{
    nbr_state *st;
    xchg_nbr_call c;
    xchg_neighbor_algo algo = XCHG_NEIGHBOR_INVALID;
    int rc = prepare(a, 0, polled, "xchg_neighbor_alltoallv", &st, &c, &algo);
    *ran = algo;
    if (rc != MPI_SUCCESS)
        return rc;
    rc = xchg_neighbor_registry_find(algo)->run(&c);
    if (c.ran != XCHG_NEIGHBOR_AUTO)
        *ran = algo = c.ran; /* another ran instead, on every rank alike */
    xchg_nbr_record_stats(a->cs, algo, c.mem.temp_peak);
    return rc;
}

/* The checks before anything is agreed, the same on every rank by
 * themselves: the communicator, its topology; then xchg's state for it
 * (collective on first use). */
static int enter(MPI_Comm comm, xchg_comm_state **cs)
{
    int P = 0, topo = MPI_UNDEFINED, rc = xchg_check_comm(comm, &P);
    int own = rc == MPI_SUCCESS && xchg_nbr_own_graph(comm);
#ifndef XCHG_SMPI
    if (rc == MPI_SUCCESS && !own && MPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        topo = MPI_UNDEFINED;
#endif /* SMPI aborts in MPI_Topo_test: only xchg's own graphs there */
    if (rc == MPI_SUCCESS && !own && topo != MPI_DIST_GRAPH && topo != MPI_CART &&
        topo != MPI_GRAPH)
        rc = xchg_error_code(MPI_ERR_TOPOLOGY, "comm has no topology: a neighbour exchange "
                             "needs a distributed graph (MPI_Dist_graph_create_adjacent or "
                             "xchg_dist_graph_create_adjacent), Cartesian or graph "
                             "communicator");
    if (rc == MPI_SUCCESS)
        rc = xchg_api_state(comm, cs);
    return rc;
}

/* A blocking entry's first steps: the running MPI is ours (else its
 * error, not raised: its handles cannot be trusted), the communicator's
 * state (a failure raised on comm), and the nonblocking exchanges started
 * before this call completed. */
int xchg_nbr_begin(MPI_Comm comm, xchg_comm_state **cs)
{
    int rc = xchg_mpi_check(comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = enter(comm, cs)) != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    xchg_nb_drain(*cs);
    return MPI_SUCCESS;
}

int xchg_nbr_run(xchg_neighbor_algo algo, int from_env, const void *sendbuf,
               const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
               void *recvbuf, const int recvcounts[], const int rdispls[],
               MPI_Datatype recvtype, MPI_Comm comm)
{
    xchg_comm_state *cs = NULL;
    int rc = xchg_nbr_begin(comm, &cs);
    if (rc != MPI_SUCCESS)
        return rc;
    nbr_args a = {algo,    from_env,   sendbuf, sendcounts, sdispls, sendtype,
                  recvbuf, recvcounts, rdispls, recvtype,   comm,    cs};
    xchg_neighbor_algo ran;
    return xchg_raise(comm, body(&a, 0, &ran));
}

int xchg_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return xchg_nbr_run(XCHG_NEIGHBOR_AUTO, 1, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
               recvcounts, rdispls, recvtype, comm);
}

int xchg_neighbor_alltoallv_algo(xchg_neighbor_algo algo, const void *sendbuf,
                                 const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return xchg_nbr_run(algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
               recvtype, comm);
}

/*
 * Requests: the nonblocking and persistent forms keep copies of the four
 * arrays and of derived datatypes, so the caller may free theirs.
 */
typedef struct nbr_request {
    nbr_args a;            /* pointing at the copies below */
    int *arrays;
    MPI_Datatype stype, rtype;
    xchg_neighbor_algo algo;
    int rc;                /* nonblocking: the result once run */
    xchg_nb *nb;           /* nonblocking: the exchange's coroutine (NULL: ran at once) */
    xchg_nbr_call c;       /* persistent: the call its plan was made for */
    const xchg_neighbor_info *info;
    void *plan;
} nbr_request;

static const int *keep_array(int **store, const int *src, int n)
{
    if (!src || n == 0)
        return src;
    memcpy(*store, src, sizeof(int) * (size_t)n);
    const int *out = *store;
    *store += n;
    return out;
}

static void request_release(nbr_request *q)
{
    xchg_type_release(&q->stype);
    xchg_type_release(&q->rtype);
    free(q->arrays);
    free(q);
}

/* A request's copy of a, whose arrays have the graph's degrees (checked
 * lengths: the caller has prepared the call first). */
static int request_make(const nbr_args *a, const xchg_nbr_graph *g, nbr_request **out)
{
    nbr_request *q = calloc(1, sizeof *q);
    int n = 2 * (g->indegree + g->outdegree);
    int *arrays = q ? malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)) : NULL;
    if (!arrays) {
        free(q);
        return xchg_error_code(MPI_ERR_NO_MEM, "out of memory for a neighbour request");
    }
    q->a = *a;
    q->arrays = arrays;
    q->stype = q->rtype = MPI_DATATYPE_NULL;
    int *store = arrays;
    q->a.sendcounts = keep_array(&store, a->sendcounts, g->outdegree);
    q->a.sdispls = keep_array(&store, a->sdispls, g->outdegree);
    q->a.recvcounts = keep_array(&store, a->recvcounts, g->indegree);
    q->a.rdispls = keep_array(&store, a->rdispls, g->indegree);
    int rc = xchg_type_keep(a->sendtype, &q->stype);
    if (rc == MPI_SUCCESS)
        rc = xchg_type_keep(a->recvtype, &q->rtype);
    if (rc != MPI_SUCCESS) {
        request_release(q);
        return rc;
    }
    q->a.sendtype = q->stype;
    q->a.recvtype = q->rtype;
    *out = q;
    return MPI_SUCCESS;
}

static xchg_neighbor_algo request_algo(void *ctx)
{
    return ((nbr_request *)ctx)->algo;
}

/* Nonblocking: the blocking body in a coroutine. */
static int nb_run(void *ctx)
{
    nbr_request *q = ctx;
    return body(&q->a, 1, &q->algo); /* auto's choice for polled requests */
}

static int nb_test(void *ctx, int *done)
{
    nbr_request *q = ctx;
    return xchg_nb_test_or_ran(q->nb, q->rc, done);
}

static int nb_wait(void *ctx)
{
    nbr_request *q = ctx;
    return xchg_nb_wait_or_ran(q->nb, q->rc);
}

static int nb_free(void *ctx)
{
    nbr_request *q = ctx;
    xchg_nb_free(q->nb);
    request_release(q);
    return MPI_SUCCESS;
}

static const xchg_request_ops nb_ops = {.start = NULL, /* never restarted */
                                       .test = nb_test,
                                       .wait = nb_wait,
                                       .free = nb_free,
                                       .neighbor_algo = request_algo};

int xchg_nbr_irun(xchg_neighbor_algo algo, int from_env, const void *sendbuf,
                const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                void *recvbuf, const int recvcounts[], const int rdispls[],
                MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req)
{
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    if (!req)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "req is NULL"));
    *req = XCHG_REQUEST_NULL;
    xchg_comm_state *cs = NULL;
    int rc = enter(comm, &cs);
    if (rc != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    /* The graph's degrees size the copies: a first call reads and agrees
     * it here, blocking (as xchg's state for a communicator is made), as
     * does the check mode; after what was started before on comm. Later
     * calls check locally and queue behind the exchanges started before. */
    const nbr_state *known = cs->ext[XCHG_EXT_NEIGHBOR];
    if (!known || !known->agreed || cs->settings.check)
        xchg_nb_drain(cs);
    nbr_args a = {algo,    from_env,   sendbuf, sendcounts, sdispls, sendtype,
                  recvbuf, recvcounts, rdispls, recvtype,   comm,    cs};
    nbr_state *st;
    xchg_nbr_call c;
    xchg_neighbor_algo resolved;
    rc = prepare(&a, 0, 1, "xchg_ineighbor_alltoallv", &st, &c, &resolved);
    nbr_request *q = NULL;
    if (rc == MPI_SUCCESS)
        rc = request_make(&a, &st->g, &q);
    if (rc == MPI_SUCCESS && (rc = xchg_request_of_ops(comm, cs, &nb_ops, q, 1, req)) !=
                                 MPI_SUCCESS)
        request_release(q);
    if (rc != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    q->algo = resolved;
    if (xchg_nb_start(cs, nb_run, q, &q->nb) != MPI_SUCCESS) {
        q->nb = NULL; /* no memory for a coroutine: run it now, blocking */
        xchg_nb_drain(cs);
        q->rc = body(&q->a, 1, &q->algo);
    }
    xchg_charge_flush(); /* copies since its last MPI call */
    return MPI_SUCCESS;
}

int xchg_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             xchg_request *req)
{
    return xchg_nbr_irun(XCHG_NEIGHBOR_AUTO, 1, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                recvcounts, rdispls, recvtype, comm, req);
}

int xchg_ineighbor_alltoallv_algo(xchg_neighbor_algo algo, const void *sendbuf,
                                  const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req)
{
    return xchg_nbr_irun(algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                recvtype, comm, req);
}

/* Persistent: the algorithm's plan, made once at init. */
static int p_wait(void *ctx)
{
    nbr_request *q = ctx;
    return q->info->persist->wait(&q->c, q->plan);
}

static int p_start(void *ctx)
{
    nbr_request *q = ctx;
    xchg_nb_drain(q->a.cs); /* after what was started before, as every start */
    q->c.mem.temp_peak = q->c.mem.temp_cur;
    int rc = q->info->persist->start(&q->c, q->plan);
    if (rc != MPI_SUCCESS)
        p_wait(q); /* complete what it began: partners wait for it */
    return rc;
}

static int p_test(void *ctx, int *done)
{
    nbr_request *q = ctx;
    return q->info->persist->test(&q->c, q->plan, done);
}

/* An exchange ended: its stats. */
static void p_end(void *ctx)
{
    nbr_request *q = ctx;
    xchg_nbr_record_stats(q->a.cs, q->c.ran != XCHG_NEIGHBOR_AUTO ? q->c.ran : q->algo,
                          q->c.mem.temp_peak);
}

static int p_free(void *ctx)
{
    nbr_request *q = ctx;
    xchg_nb_drain(q->a.cs); /* a plan's free may be collective */
    int rc = q->info->persist->free(&q->c, q->plan);
    request_release(q);
    return rc;
}

static const xchg_request_ops persist_ops = {.start = p_start,
                                            .test = p_test,
                                            .wait = p_wait,
                                            .end = p_end,
                                            .free = p_free,
                                            .neighbor_algo = request_algo};

/* The request's plan, agreed: a rank whose plan failed fails every rank. */
static int plan_agreed(nbr_request *q, const nbr_state *st, xchg_neighbor_algo algo)
{
    xchg_comm_state *cs = q->a.cs;
    xchg_neighbor_algo again;
    int rc = call_of(&q->a, st, &q->c, &again); /* the call on the request's copies */
    q->c.analysis = (int)algo < NBR_IDS ? st->analysis[algo] : NULL;
    q->algo = algo;
    q->info = xchg_neighbor_registry_find(algo);
    if (rc == MPI_SUCCESS)
        rc = q->info->persist->init(&q->c, &q->plan);
    int arc = xchg_agree_errors(cs->pcomm, cs->rank, cs->size, rc,
                                "xchg_neighbor_alltoallv_init");
    if (arc != MPI_SUCCESS && rc == MPI_SUCCESS)
        q->info->persist->free(&q->c, q->plan);
    return arc;
}

int xchg_nbr_init_run(xchg_neighbor_algo algo, int from_env, const void *sendbuf,
                    const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                    void *recvbuf, const int recvcounts[], const int rdispls[],
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, xchg_request *req)
{
    (void)info;
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    if (!req)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "req is NULL"));
    *req = XCHG_REQUEST_NULL;
    xchg_comm_state *cs = NULL;
    int rc = enter(comm, &cs);
    if (rc != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    xchg_nb_drain(cs); /* nonblocking exchanges started before this call */
    nbr_args a = {algo,    from_env,   sendbuf, sendcounts, sdispls, sendtype,
                  recvbuf, recvcounts, rdispls, recvtype,   comm,    cs};
    nbr_state *st;
    xchg_nbr_call c;
    rc = prepare(&a, 1, 1, "xchg_neighbor_alltoallv_init", &st, &c, &algo);
    if (rc != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    nbr_request *q = NULL;
    int lrc = request_make(&a, &st->g, &q); /* agreed with the plans */
    if (lrc != MPI_SUCCESS) {
        xchg_agree_errors(cs->pcomm, cs->rank, cs->size, lrc, "xchg_neighbor_alltoallv_init");
        return xchg_raise(comm, lrc);
    }
    if ((rc = plan_agreed(q, st, algo)) != MPI_SUCCESS) {
        request_release(q);
        return xchg_raise(comm, rc);
    }
    if ((rc = xchg_request_of_ops(comm, cs, &persist_ops, q, 0, req)) != MPI_SUCCESS) {
        /* MPI_ERR_NO_MEM on this rank only: its partners' starts would
         * wait for it, as after any local failure of a collective init */
        p_free(q);
        return xchg_raise(comm, rc);
    }
    return MPI_SUCCESS;
}

int xchg_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                 const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                 const int recvcounts[], const int rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 xchg_request *req)
{
    return xchg_nbr_init_run(XCHG_NEIGHBOR_AUTO, 1, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                    recvcounts, rdispls, recvtype, comm, info, req);
}

int xchg_neighbor_alltoallv_init_algo(xchg_neighbor_algo algo, const void *sendbuf,
                                      const int sendcounts[], const int sdispls[],
                                      MPI_Datatype sendtype, void *recvbuf,
                                      const int recvcounts[], const int rdispls[],
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                      xchg_request *req)
{
    return xchg_nbr_init_run(algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                    rdispls, recvtype, comm, info, req);
}

/* Names and lists, from the registry. */
xchg_neighbor_algo xchg_neighbor_algo_from_name(const char *name)
{
    if (name && strcmp(name, "auto") == 0)
        return XCHG_NEIGHBOR_AUTO;
    const xchg_neighbor_info *a = xchg_neighbor_registry_find_name(name);
    return a ? a->id : XCHG_NEIGHBOR_INVALID;
}

const char *xchg_neighbor_algo_name(xchg_neighbor_algo algo)
{
    if (algo == XCHG_NEIGHBOR_AUTO)
        return "auto";
    const xchg_neighbor_info *a = xchg_neighbor_registry_find(algo);
    return a ? a->name : "invalid"; /* never NULL, as xchg_algo_name (algos.c) */
}

int xchg_neighbor_algo_count(void) { return xchg_neighbor_registry_count(); }

xchg_neighbor_algo xchg_neighbor_algo_at(int i)
{
    const xchg_neighbor_info *a = xchg_neighbor_registry_at(i);
    return a ? a->id : XCHG_NEIGHBOR_INVALID;
}


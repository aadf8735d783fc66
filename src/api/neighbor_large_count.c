/*
 * neighbor_large_count.c - the large-count neighbour exchange
 * (xchg_neighbor_alltoallv_c, xchg_ineighbor_alltoallv_c,
 * xchg_neighbor_alltoallv_init_c and their _algo forms), where the MPI has
 * MPI-4's large counts (MPICH 4).
 *
 * The arrays are converted to int once, on entry, and whether every
 * rank's values fit is agreed (one allreduce on the private communicator
 * per call, so every rank takes the same path); a negative count stays
 * negative, for the int call's checks to name it. If every rank's fit,
 * the call is the int one (whose requests keep their own copies). If some
 * rank's do not, auto passes the call to MPI's MPI_Neighbor_alltoallv_c on
 * xchg's private communicator (which keeps the caller's topology): the
 * nonblocking form runs it at the call, the persistent one at each start
 * (see mpi_c_request); a forced algorithm, or xchg's own graph (no MPI
 * topology), fails with MPI_ERR_COUNT on every rank.
 */
#include "neighbor_state.h"

#if XCHG_HAVE_LARGE_COUNT
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* in[0..n) as ints into out; *unfit: the first value beyond int (an
 * MPI_ERR_COUNT code naming it). */
static void fit_counts(const MPI_Count in[], int n, int out[], const char *name, int *unfit)
{
    for (int i = 0; i < n; i++) {
        MPI_Count v = in[i];
        out[i] = v < 0 ? -1 : v > INT_MAX ? 0 : (int)v;
        if (v > INT_MAX && *unfit == MPI_SUCCESS)
            *unfit = xchg_error_code(MPI_ERR_COUNT, "%s[%d] is %lld, more elements than xchg's "
                                     "algorithms address in one block (INT_MAX); auto passes "
                                     "such a call to MPI_Neighbor_alltoallv_c", name, i,
                                     (long long)v);
    }
}

static void fit_displs(const MPI_Aint in[], int n, int out[], const char *name, int *unfit)
{
    for (int i = 0; i < n; i++) {
        MPI_Aint v = in[i];
        out[i] = v < INT_MIN || v > INT_MAX ? 0 : (int)v;
        if ((v < INT_MIN || v > INT_MAX) && *unfit == MPI_SUCCESS)
            *unfit = xchg_error_code(MPI_ERR_COUNT, "%s[%d] is %lld, outside the int range of "
                                     "displacements xchg's algorithms address; auto passes "
                                     "such a call to MPI_Neighbor_alltoallv_c", name, i,
                                     (long long)v);
    }
}

/* The int copies (NULL arrays stay NULL, for the checks to name them) of
 * a call on a graph of in/out degrees; *unfit as above, or no memory. */
static int *convert_c(const MPI_Count sc[], const MPI_Aint sd[], const MPI_Count rc[],
                      const MPI_Aint rd[], int in, int out, int *arrays[4], int *unfit)
{
    int *mem = malloc(sizeof(int) * 2 * (size_t)(in + out + 1));
    *unfit = MPI_SUCCESS;
    if (!mem) {
        *unfit = xchg_error_code(MPI_ERR_NO_MEM, "out of memory for the int copies of the "
                                 "large-count arrays");
        return NULL;
    }
    arrays[0] = sc ? mem : NULL;
    arrays[1] = sd ? mem + out : NULL;
    arrays[2] = rc ? mem + 2 * out : NULL;
    arrays[3] = rd ? mem + 2 * out + in : NULL;
    if (sc)
        fit_counts(sc, out, arrays[0], "sendcounts", unfit);
    if (sd)
        fit_displs(sd, out, arrays[1], "sdispls", unfit);
    if (rc)
        fit_counts(rc, in, arrays[2], "recvcounts", unfit);
    if (rd)
        fit_displs(rd, in, arrays[3], "rdispls", unfit);
    return mem;
}

typedef enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT } c_form;

static const char *const form_name[] = {"xchg_neighbor_alltoallv_c",
                                        "xchg_ineighbor_alltoallv_c",
                                        "xchg_neighbor_alltoallv_init_c"};
static const char *const mpi_name[] = {"MPI_Neighbor_alltoallv_c", "MPI_Neighbor_alltoallv_c",
                                       "MPI_Neighbor_alltoallv_c"};

/* A request whose exchange is MPI's blocking MPI_Neighbor_alltoallv_c on
 * pcomm, run at the call (nonblocking) or at each xchg_start
 * (persistent): with copies of the arrays and datatypes it needs then.
 * Not MPI's own nonblocking or persistent call: under MPICH 4.0 a wait on
 * MPI_Ineighbor_alltoallv_c hung about one run in five of the test's
 * (5 ranks, oversubscribed), where the blocking call never did. */
typedef struct mpi_c_request {
    const void *sendbuf;
    void *recvbuf;
    MPI_Count *counts; /* out send counts, then in receive counts (one allocation) */
    MPI_Aint *displs;
    int in, out;
    MPI_Datatype stype, rtype;
    xchg_comm_state *cs;
    int rc; /* the last exchange's result */
} mpi_c_request;

static int mc_run(mpi_c_request *q)
{
    q->rc = PMPI_Neighbor_alltoallv_c(q->sendbuf, q->counts, q->displs, q->stype, q->recvbuf,
                                      q->counts + q->out, q->displs + q->out, q->rtype,
                                      q->cs->pcomm);
    xchg_nbr_record_stats(q->cs, XCHG_NEIGHBOR_INVALID, 0);
    q->cs->last.passed_to_mpi = XCHG_PASSED_BEYOND_INT;
    return MPI_SUCCESS; /* its result is the wait's */
}

static int mc_start(void *ctx)
{
    xchg_nb_drain(((mpi_c_request *)ctx)->cs); /* after what was started before */
    return mc_run(ctx);
}

static int mc_test(void *ctx, int *done)
{
    *done = 1;
    return ((mpi_c_request *)ctx)->rc;
}

static int mc_wait(void *ctx)
{
    return ((mpi_c_request *)ctx)->rc;
}

static int mc_free(void *ctx)
{
    mpi_c_request *q = ctx;
    xchg_type_release(&q->stype);
    xchg_type_release(&q->rtype);
    free(q->counts);
    free(q);
    return MPI_SUCCESS;
}

static xchg_neighbor_algo mc_algo(void *ctx)
{
    (void)ctx;
    return XCHG_NEIGHBOR_INVALID; /* MPI's */
}

/* The persistent form's mode; the nonblocking form's is the same, made
 * started and never restarted. */
static const xchg_request_ops mc_ops = {.start = mc_start,
                                        .test = mc_test,
                                        .wait = mc_wait,
                                        .free = mc_free,
                                        .neighbor_algo = mc_algo};
static const xchg_request_ops mc_nb_ops = {.test = mc_test,
                                           .wait = mc_wait,
                                           .free = mc_free,
                                           .neighbor_algo = mc_algo};

/* The request of a call that MPI takes (nonblocking: run now; persistent:
 * at each start; in/out: the degrees, for the copies). */
static int pass_request(c_form form, xchg_comm_state *cs, MPI_Comm comm, int in, int out,
                        const void *sendbuf, const MPI_Count sc[], const MPI_Aint sd[],
                        MPI_Datatype sendtype, void *recvbuf, const MPI_Count rc_[],
                        const MPI_Aint rd[], MPI_Datatype recvtype, xchg_request *req)
{
    mpi_c_request *q = calloc(1, sizeof *q);
    size_t n = (size_t)(in + out);
    char *mem = q ? malloc((sizeof(MPI_Count) + sizeof(MPI_Aint)) * (n + 1)) : NULL;
    if (!mem) {
        free(q);
        return xchg_error_code(MPI_ERR_NO_MEM, "%s: no memory for the request",
                               form_name[form]);
    }
    q->counts = (MPI_Count *)mem;
    q->displs = (MPI_Aint *)(q->counts + n + 1);
    q->in = in;
    q->out = out;
    if (out) {
        memcpy(q->counts, sc, sizeof(MPI_Count) * (size_t)out);
        memcpy(q->displs, sd, sizeof(MPI_Aint) * (size_t)out);
    }
    if (in) {
        memcpy(q->counts + out, rc_, sizeof(MPI_Count) * (size_t)in);
        memcpy(q->displs + out, rd, sizeof(MPI_Aint) * (size_t)in);
    }
    q->sendbuf = sendbuf;
    q->recvbuf = recvbuf;
    q->cs = cs;
    q->stype = q->rtype = MPI_DATATYPE_NULL;
    int rc = xchg_type_keep(sendtype, &q->stype);
    if (rc == MPI_SUCCESS)
        rc = xchg_type_keep(recvtype, &q->rtype);
    if (rc == MPI_SUCCESS)
        rc = xchg_request_of_ops(comm, cs, form == FORM_NONBLOCKING ? &mc_nb_ops : &mc_ops, q,
                                 form == FORM_NONBLOCKING, req);
    if (rc != MPI_SUCCESS) {
        mc_free(q);
        return rc;
    }
    return form == FORM_NONBLOCKING ? mc_run(q) : MPI_SUCCESS;
}

/* Some rank's values (rank who's, at least) do not fit in int: auto
 * passes the call to MPI's form on the private communicator; a forced
 * algorithm, or xchg's own graph, fails on every rank. */
static int unfit_c(c_form form, xchg_comm_state *cs, MPI_Comm comm, xchg_neighbor_algo algo,
                   int from_env, int unfit, int who, int in, int out, const void *sendbuf,
                   const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                   const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Info info,
                   xchg_request *req)
{
    (void)info; /* MPI's blocking call takes none */
    int rc = xchg_nbr_resolve_algo(&cs->settings, algo, from_env, &algo);
    if (rc != MPI_SUCCESS)
        return rc; /* agreed (the settings are), or a bad algo argument */
    /* xchg's own graph is no MPI topology: MPI cannot take the call either */
    const xchg_nbr_state *st = cs->ext[XCHG_EXT_NEIGHBOR];
    int own = st && st->own_graph;
    if (algo != XCHG_NEIGHBOR_AUTO || own)
        return unfit != MPI_SUCCESS
                   ? unfit /* this rank's own message, naming the argument */
                   : xchg_error_code(MPI_ERR_COUNT, "%s: rank %d cannot give its counts and "
                                     "displacements to %s as int (its own error names the "
                                     "value; %s %s); no rank exchanged", form_name[form], who,
                                     xchg_neighbor_algo_name(algo),
                                     own ? "the graph is xchg's, so MPI cannot take the call:"
                                         : "auto would pass the call to",
                                     mpi_name[form]);
    if (form != FORM_BLOCKING)
        return pass_request(form, cs, comm, in, out, sendbuf, sendcounts, sdispls, sendtype,
                            recvbuf, recvcounts, rdispls, recvtype, req);
    rc = PMPI_Neighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, cs->pcomm);
    xchg_nbr_record_stats(cs, XCHG_NEIGHBOR_INVALID, 0);
    cs->last.passed_to_mpi = XCHG_PASSED_BEYOND_INT;
    return rc;
}

/* Every form: the conversion, its agreement, then the int call or MPI's. */
static int run_c(c_form form, xchg_neighbor_algo algo, int from_env, const void *sendbuf,
                 const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                 void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, xchg_request *req)
{
    if (form != FORM_BLOCKING) {
        int mrc = xchg_mpi_check(comm); /* first: the running MPI is ours */
        if (mrc != MPI_SUCCESS)
            return mrc;
        if (!req)
            return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "req is NULL"));
        *req = XCHG_REQUEST_NULL;
    }
    xchg_comm_state *cs = NULL;
    int rc = xchg_nbr_begin(comm, &cs);
    if (rc != MPI_SUCCESS)
        return rc;
    /* the degrees (local, cheap): the kept graph, else MPI's */
    const xchg_nbr_state *known = cs->ext[XCHG_EXT_NEIGHBOR];
    xchg_nbr_graph g = {0};
    int unfit = known ? MPI_SUCCESS : xchg_nbr_graph_read(comm, &g);
    int *arrays[4] = {NULL, NULL, NULL, NULL};
    int in = known ? known->g.indegree : g.indegree, out = known ? known->g.outdegree : g.outdegree;
    int *mem = unfit == MPI_SUCCESS ? convert_c(sendcounts, sdispls, recvcounts, rdispls, in,
                                                out, arrays, &unfit)
                                    : NULL;
    if (!known)
        xchg_nbr_graph_free(&g);
    int64_t v = unfit != MPI_SUCCESS ? (int64_t)(cs->size - cs->rank) : 0, all = 0;
    rc = xchg_mpi_allreduce(&v, &all, 1, MPI_INT64_T, MPI_MAX, cs->pcomm);
    if (rc == MPI_SUCCESS && !all) { /* every rank's fit: the int call (raised there) */
        rc = form == FORM_BLOCKING
                 ? xchg_nbr_run(algo, from_env, sendbuf, arrays[0], arrays[1], sendtype,
                                recvbuf, arrays[2], arrays[3], recvtype, comm)
             : form == FORM_NONBLOCKING
                 ? xchg_nbr_irun(algo, from_env, sendbuf, arrays[0], arrays[1], sendtype,
                                 recvbuf, arrays[2], arrays[3], recvtype, comm, req)
                 : xchg_nbr_init_run(algo, from_env, sendbuf, arrays[0], arrays[1], sendtype,
                                     recvbuf, arrays[2], arrays[3], recvtype, comm, info, req);
        free(mem);
        return rc;
    }
    free(mem);
    if (rc != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    return xchg_raise(comm, unfit_c(form, cs, comm, algo, from_env, unfit,
                                    cs->size - (int)all, in, out, sendbuf, sendcounts, sdispls,
                                    sendtype, recvbuf, recvcounts, rdispls, recvtype, info,
                                    req));
}

int xchg_neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm)
{
    return run_c(FORM_BLOCKING, XCHG_NEIGHBOR_AUTO, 1, sendbuf, sendcounts, sdispls, sendtype,
                 recvbuf, recvcounts, rdispls, recvtype, comm, MPI_INFO_NULL, NULL);
}

int xchg_neighbor_alltoallv_algo_c(xchg_neighbor_algo algo, const void *sendbuf,
                                   const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                   MPI_Datatype sendtype, void *recvbuf,
                                   const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm)
{
    return run_c(FORM_BLOCKING, algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                 recvcounts, rdispls, recvtype, comm, MPI_INFO_NULL, NULL);
}

int xchg_ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                               const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req)
{
    return run_c(FORM_NONBLOCKING, XCHG_NEIGHBOR_AUTO, 1, sendbuf, sendcounts, sdispls,
                 sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, MPI_INFO_NULL, req);
}

int xchg_ineighbor_alltoallv_algo_c(xchg_neighbor_algo algo, const void *sendbuf,
                                    const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                    MPI_Datatype sendtype, void *recvbuf,
                                    const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req)
{
    return run_c(FORM_NONBLOCKING, algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                 recvcounts, rdispls, recvtype, comm, MPI_INFO_NULL, req);
}

int xchg_neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                   const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                   void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, xchg_request *req)
{
    return run_c(FORM_PERSISTENT, XCHG_NEIGHBOR_AUTO, 1, sendbuf, sendcounts, sdispls,
                 sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, req);
}

int xchg_neighbor_alltoallv_init_algo_c(xchg_neighbor_algo algo, const void *sendbuf,
                                        const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                        MPI_Datatype sendtype, void *recvbuf,
                                        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                        xchg_request *req)
{
    return run_c(FORM_PERSISTENT, algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                 recvcounts, rdispls, recvtype, comm, info, req);
}
#endif /* XCHG_HAVE_LARGE_COUNT */

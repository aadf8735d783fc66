/*
 * alltoallv.c - the public xchg_alltoallv entry points.
 *
 * Checks arguments before any data moves (each error names the argument
 * and goes through the caller's error handler; where a collective can carry
 * it, one rank's error fails every rank: run_failed), resolves MPI_IN_PLACE
 * once for all algorithms, runs the check mode (XCHG_CHECK=1), picks the
 * algorithm (forced, the agreed XCHG_ALLTOALLV_ALGO, or auto), runs it on
 * the private communicator and records what it did.
 */
#include "api.h"

#include <stdlib.h>
#include <string.h>

/* MPI_IN_PLACE: data to send is in recvbuf, laid out by recvcounts/rdispls.
 * Copy the byte span those blocks cover into a temporary buffer and send
 * from there with the receive layout; the algorithm then writes recvbuf as
 * usual, touching only the received blocks. */
static int resolve_in_place(xchg_call *c, void **tmp, size_t *tmpbytes)
{
    MPI_Aint lo;
    xchg_block_span(c->recvcounts, c->rdispls, c->size, &c->rt, &lo, tmpbytes);
    int err = MPI_SUCCESS;
    *tmp = xchg_temp_alloc(c, *tmpbytes, "MPI_IN_PLACE copy of recvbuf", &err);
    if (!*tmp)
        return err;
    if (*tmpbytes) {
        memcpy(*tmp, (char *)c->recvbuf + lo, *tmpbytes);
        xchg_charge_copy(*tmpbytes);
    }
    /* Same layout as recvbuf: element d of the copy is at tmp - lo + d*extent. */
    c->sendbuf = (char *)*tmp - lo;
    c->sendcounts = c->recvcounts;
    c->sdispls = c->rdispls;
    c->st = c->rt;
    return MPI_SUCCESS;
}

int xchg_resolve_algo(const xchg_settings *s, xchg_algo algo, int from_env, xchg_algo *out)
{
    if (from_env) {
        algo = s->alltoallv_algo; /* agreed: the same on every rank */
        if (algo == XCHG_ALGO_INVALID)
            return xchg_error_code(MPI_ERR_ARG, "XCHG_ALLTOALLV_ALGO: unknown algorithm '%s' "
                                   "(xchg-bench --list names them)", s->alltoallv_algo_text);
    }
    /* The id alone is all a forced call has: say where -1 comes from. */
    if (algo == XCHG_ALGO_INVALID)
        return xchg_error_code(MPI_ERR_ARG, "algo %d is not an algorithm (XCHG_ALGO_INVALID: "
                               "xchg_algo_from_name returns it for an unknown name)",
                               (int)algo);
    if (algo != XCHG_ALGO_AUTO && !xchg_registry_find(algo))
        return xchg_error_code(MPI_ERR_ARG, "algo %d is not an algorithm of this build "
                               "(xchg_algo_count and xchg_algo_at list them)", (int)algo);
    *out = algo;
    return MPI_SUCCESS;
}

/* One rank's argument error, where a collective can carry it: the check
 * mode's, auto's statistics, or the agreement of an algorithm that has one
 * (registry: agrees_errors). The rank takes part with empty blocks, so
 * every rank returns the same error class. Elsewhere the error stays local
 * (docs/errors.md lists which is which). */
static int run_failed(xchg_call *c, xchg_algo algo, int algo_known)
{
    static const char dummy[1];
    int *zeros = calloc((size_t)c->size, sizeof(int));
    if (!zeros)
        return c->arg_err;
    c->sendbuf = dummy;
    c->recvbuf = (void *)dummy;
    c->sendcounts = c->sdispls = c->recvcounts = c->rdispls = zeros;
    int rc = c->arg_err; /* local, unless a collective below agrees on it */
    if (xchg_typeinfo_get(MPI_BYTE, &c->rt) == MPI_SUCCESS) {
        c->st = c->rt;
        if (c->cs->settings.check) {
            rc = xchg_check_mode(c, c->arg_err);
        } else if (algo_known) {
            /* auto's statistics allreduce carries the flag (when it runs),
             * or the algorithm's own agreement (registry: agrees_errors) */
            rc = xchg_select_run(c, &algo, 1);
        }
    }
    free(zeros);
    /* The agreed result: this rank's own error, or one of the same class */
    return rc == MPI_SUCCESS ? c->arg_err : rc;
}

/* The checks of a call whose communicator has its state (checked once,
 * before): the arrays and types, the algorithm, the types' extents; and
 * XCHG_RECORD, in which every rank takes part. *algo_rc: whether the
 * algorithm is known; *record_err: XCHG_RECORD failed (agreed: the
 * call ends with it, as is). */
static int check_call(const xchg_a2av_args *a, xchg_call *c, xchg_algo *algo, int *algo_rc,
                      int *record_err)
{
    xchg_comm_state *cs = a->cs;
    int rc = a->pre_err != MPI_SUCCESS
                 ? a->pre_err
                 : xchg_check_alltoallv_arrays(a->sendbuf, a->sendcounts, a->sdispls,
                                               a->sendtype, a->recvbuf, a->recvcounts,
                                               a->rdispls, a->recvtype, cs->size);
    *algo_rc = xchg_resolve_algo(&cs->settings, a->algo, a->from_env, algo);
    if (rc == MPI_SUCCESS)
        rc = *algo_rc;
    if (rc == MPI_SUCCESS) {
        rc = xchg_typeinfo_get(a->recvtype, &c->rt);
        if (rc == MPI_SUCCESS && a->sendbuf != MPI_IN_PLACE)
            rc = xchg_typeinfo_get(a->sendtype, &c->st);
    }
    /* XCHG_RECORD (agreed): every rank takes part, one with an argument
     * error too (then nobody records the call). */
    if (cs->settings.record && *algo_rc == MPI_SUCCESS) {
        int in_place = a->sendbuf == MPI_IN_PLACE;
        long shape;
        int rrc = xchg_record_call(cs, in_place ? a->recvcounts : a->sendcounts,
                                   in_place ? c->rt.size : c->st.size, rc, 1, &shape);
        if (rc == MPI_SUCCESS && rrc != MPI_SUCCESS) {
            *record_err = 1;
            return rrc;
        }
    }
    return rc;
}

int xchg_alltoallv_body(const xchg_a2av_args *a)
{
    xchg_comm_state *cs = a->cs;
    xchg_call c;
    memset(&c, 0, sizeof c);
    c.sendbuf = a->sendbuf;
    c.sendcounts = a->sendcounts;
    c.sdispls = a->sdispls;
    c.recvbuf = a->recvbuf;
    c.recvcounts = a->recvcounts;
    c.rdispls = a->rdispls;
    c.comm = cs->pcomm;
    c.cs = cs;
    c.rank = cs->rank;
    c.size = cs->size;
    c.temp_limit = xchg_temp_limit_of(cs);

    xchg_algo algo = a->algo;
    int algo_rc, record_err = 0;
    int rc = check_call(a, &c, &algo, &algo_rc, &record_err);
    if (record_err)
        return rc;
    if (rc != MPI_SUCCESS) {
        /* An unknown XCHG_ALLTOALLV_ALGO is agreed, so it fails on every
         * rank by itself; an unknown algo argument leaves the protocol
         * unknown (only the check mode can agree on it). */
        if (!(a->from_env && algo_rc != MPI_SUCCESS)) {
            c.arg_err = rc;
            rc = run_failed(&c, algo, algo_rc == MPI_SUCCESS);
        }
        return rc; /* not counted in the stats, as before */
    }

    void *inplace = NULL;
    size_t inplace_bytes = 0;
    if (a->sendbuf == MPI_IN_PLACE)
        rc = resolve_in_place(&c, &inplace, &inplace_bytes);
    if (cs->settings.check) {
        rc = xchg_check_mode(&c, rc); /* agrees on the in-place copy's failure too */
    } else if (rc != MPI_SUCCESS) {
        /* the copy failed on this rank alone (memory): carried like an
         * argument error, so an algorithm that agrees errors ends every
         * rank with it instead of leaving the others waiting */
        c.arg_err = rc;
        return run_failed(&c, algo, 1);
    }

    /* every algorithm's pass over its peers' counts (one step each; more
     * where an algorithm charges more) */
    xchg_charge_ops(XCHG_OP_PEER, (size_t)c.size);
    if (rc == MPI_SUCCESS)
        rc = xchg_select_run(&c, &algo, 0);

    xchg_temp_free(&c, inplace, inplace_bytes);
    cs->calls++;
    cs->last.algo = c.ran_instead != XCHG_ALGO_AUTO ? c.ran_instead : algo;
    cs->last.sparse_algo = XCHG_SPARSE_INVALID;
    cs->last.temp_bytes = c.temp_peak;
    cs->last.calls = cs->calls;
    cs->last.passed_to_mpi = 0;
    return rc;
}


int xchg_alltoallv_run(xchg_algo algo, int from_env, int pre_err, const void *sendbuf,
                       const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    const double t0 = xchg_select_clock(); /* the verdict's: the whole call */
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    /* Without a valid communicator nothing can be agreed (one with a
     * state was checked when it got it). */
    int P = 0, rc = MPI_SUCCESS;
    if (!xchg_comm_state_cached(comm) && (rc = xchg_check_comm(comm, &P)) != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    /* A new communicator's first auto calls are MPI's own until set-up
     * pays back (select/phase.c). */
    xchg_comm_state *cs = NULL;
    if (algo == XCHG_ALGO_AUTO && from_env && pre_err == MPI_SUCCESS) {
        int passed = 0, raised = 0;
        rc = xchg_phase_alltoallv(comm, xchg_api_names(), sendbuf, sendcounts, sdispls, sendtype,
                                  recvbuf, recvcounts, rdispls, recvtype, NULL, &passed,
                                  &raised, &cs);
        if (passed || rc != MPI_SUCCESS)
            return raised ? rc : xchg_raise(comm, rc);
    }
    /* The state first (collective on first use), so that a rank with bad
     * arguments still takes part in everything collective. */
    if (!cs && (rc = xchg_api_state(comm, &cs)) != MPI_SUCCESS)
        return xchg_raise(comm, rc);

    xchg_nb_drain(cs); /* nonblocking exchanges started before this call */
    xchg_a2av_args args = {algo,      from_env, pre_err,   sendbuf,  sendcounts,
                           sdispls,   sendtype, recvbuf,   recvcounts, rdispls,
                           recvtype,  comm,     cs};
    rc = xchg_alltoallv_body(&args);
    xchg_select_call_done(cs, t0);
    return xchg_raise(comm, rc);
}

int xchg_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return xchg_alltoallv_run(XCHG_ALGO_AUTO, 1, MPI_SUCCESS, sendbuf, sendcounts, sdispls,
                              sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

int xchg_alltoallv_algo(xchg_algo algo, const void *sendbuf, const int sendcounts[],
                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    return xchg_alltoallv_run(algo, 0, MPI_SUCCESS, sendbuf, sendcounts, sdispls, sendtype,
                              recvbuf, recvcounts, rdispls, recvtype, comm);
}

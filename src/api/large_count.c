/*
 * large_count.c - the large-count entry points (xchg_alltoallv_c,
 * _algo_c, _init_c, _init_algo_c), as MPI-4's MPI_Alltoallv_c: MPI_Count
 * counts, MPI_Aint displacements.
 *
 * Every algorithm takes an xchg_call whose counts and displacements are
 * ints (one element count and one displacement, in extents, per block;
 * the byte arithmetic on them is 64-bit throughout). So the arrays are
 * converted once, here, into int arrays, and the call is then exactly the
 * int one. Where a value does not fit (a count above INT_MAX, a
 * displacement outside int) no algorithm can address the block; since that
 * can be true on one rank only, and MPI calls the same arguments valid,
 * the ranks agree on it first (one MPI_Allreduce of a flag on the private
 * communicator per call, so every rank takes the same path and none
 * waits for a partner that left): then "auto" and "vendor" pass the call
 * to the MPI library's MPI_Alltoallv_c, any other algorithm fails with
 * MPI_ERR_COUNT on every rank, the failing rank naming the argument.
 */
#include "api.h"

#if XCHG_HAVE_LARGE_COUNT

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One call's arrays as ints: 4P ints (the send pair left NULL for
 * MPI_IN_PLACE or where the caller passed NULL, so that the usual checks
 * name them), this rank's argument error, and why they cannot be given to
 * an algorithm (the first value that does not fit, an MPI_ERR_COUNT code
 * naming it; or no memory for the copies), else MPI_SUCCESS. */
typedef struct converted {
    int *mem;
    int *sendcounts, *sdispls, *recvcounts, *rdispls;
    int arg_err;
    int unfit;
} converted;

static void convert_counts(const MPI_Count in[], int P, int *out, const char *name,
                           int *arg_err, int *unfit)
{
    for (int i = 0; i < P; i++) {
        MPI_Count v = in[i];
        if (v < 0) {
            if (*arg_err == MPI_SUCCESS)
                *arg_err = xchg_error_code(MPI_ERR_COUNT, "%s[%d] is negative (%lld)", name, i,
                                           (long long)v);
            out[i] = 0;
        } else if (v > INT_MAX) {
            if (*unfit == MPI_SUCCESS)
                *unfit = xchg_error_code(MPI_ERR_COUNT, "%s[%d] is %lld, more elements than "
                                         "xchg's algorithms address in one block (INT_MAX); "
                                         "auto or vendor pass such a call to MPI_Alltoallv_c",
                                         name, i, (long long)v);
            out[i] = 0;
        } else {
            out[i] = (int)v;
        }
    }
}

static void convert_displs(const MPI_Aint in[], int P, int *out, const char *name, int *unfit)
{
    for (int i = 0; i < P; i++) {
        MPI_Aint v = in[i];
        if (v < INT_MIN || v > INT_MAX) {
            if (*unfit == MPI_SUCCESS)
                *unfit = xchg_error_code(MPI_ERR_COUNT, "%s[%d] is %lld, outside the int "
                                         "range of displacements xchg's algorithms address "
                                         "(a datatype of larger extent brings it in); auto "
                                         "or vendor pass such a call to MPI_Alltoallv_c",
                                         name, i, (long long)v);
            out[i] = 0;
        } else {
            out[i] = (int)v;
        }
    }
}

static void convert(const void *sendbuf, const MPI_Count sendcounts[],
                    const MPI_Aint sdispls[], const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], int P, converted *cv)
{
    cv->arg_err = cv->unfit = MPI_SUCCESS;
    cv->sendcounts = cv->sdispls = cv->recvcounts = cv->rdispls = NULL;
    cv->mem = malloc(sizeof(int) * 4 * (size_t)(P > 0 ? P : 1));
    if (!cv->mem) {
        /* like a value that does not fit: MPI_Alltoallv_c needs no copies */
        cv->unfit = xchg_error_code(MPI_ERR_NO_MEM, "out of memory for the int copies of the "
                                    "large-count arrays (%d ranks)", P);
        return;
    }
    if (recvcounts) {
        cv->recvcounts = cv->mem + 2 * P;
        convert_counts(recvcounts, P, cv->recvcounts, "recvcounts", &cv->arg_err, &cv->unfit);
    }
    if (rdispls) {
        cv->rdispls = cv->mem + 3 * P;
        convert_displs(rdispls, P, cv->rdispls, "rdispls", &cv->unfit);
    }
    if (sendbuf != MPI_IN_PLACE) { /* else the send arrays are ignored, as in MPI */
        if (sendcounts) {
            cv->sendcounts = cv->mem;
            convert_counts(sendcounts, P, cv->sendcounts, "sendcounts", &cv->arg_err,
                           &cv->unfit);
        }
        if (sdispls) {
            cv->sdispls = cv->mem + P;
            convert_displs(sdispls, P, cv->sdispls, "sdispls", &cv->unfit);
        }
    }
}

/* Agrees whether every rank's values fit (collective on pcomm). *any_unfit
 * gets 1 if some rank's do not, *who the lowest such rank. */
static int agree_fit(xchg_comm_state *cs, int unfit, int *any_unfit, int *who)
{
    int64_t v = unfit != MPI_SUCCESS ? (int64_t)(cs->size - cs->rank) : 0, all = 0;
    /* inside xchg_ialltoallv_c's coroutine, a nonblocking reduction */
    int rc = xchg_mpi_allreduce(&v, &all, 1, MPI_INT64_T, MPI_MAX, cs->pcomm);
    *any_unfit = all != 0;
    *who = all ? cs->size - (int)all : -1;
    return rc;
}

/* With some rank's values beyond int: the algorithm the call would run
 * decides. Returns MPI_SUCCESS with *to_mpi = 1 for auto and vendor, else
 * an MPI_ERR_COUNT (the same class on every rank). */
static int unfit_outcome(xchg_comm_state *cs, xchg_algo algo, int from_env, int unfit,
                         int who, const char *fn, int *to_mpi)
{
    *to_mpi = 0;
    int rc = xchg_resolve_algo(&cs->settings, algo, from_env, &algo);
    if (rc != MPI_SUCCESS)
        return rc; /* an unknown name: agreed (the settings are), or a bad algo argument */
    if (algo == XCHG_ALGO_AUTO || algo == XCHG_ALGO_VENDOR) {
        *to_mpi = 1;
        return MPI_SUCCESS;
    }
    if (unfit != MPI_SUCCESS)
        return unfit; /* this rank's own message, naming the argument */
    return xchg_error_code(MPI_ERR_COUNT, "%s: rank %d cannot give its counts and "
                           "displacements to %s as int (a value beyond int: its own error "
                           "names it; auto or vendor would pass the call to MPI_Alltoallv_c); "
                           "no rank exchanged", fn, who, xchg_algo_name(algo));
}

/* The stats of a call passed to MPI_Alltoallv_c(_init_c). */
static void record_passed(xchg_comm_state *cs)
{
    cs->calls++;
    cs->last.algo = XCHG_ALGO_VENDOR;
    cs->last.sparse_algo = XCHG_SPARSE_INVALID;
    cs->last.temp_bytes = 0;
    cs->last.calls = cs->calls;
    cs->last.passed_to_mpi = XCHG_PASSED_BEYOND_INT;
}

/* What run_c and init_c do first: the communicator checked, its state
 * (unless *csp has it: run_c's first calls found it set up), earlier
 * nonblocking exchanges drained, the counts converted (unless have_cv:
 * run_c's first calls converted them) and whether any rank's do not fit
 * agreed. On failure returns the raised error with nothing left to free. */
static int begin_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                   const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Comm comm,
                   int have_cv, xchg_comm_state **csp, converted *cv, int *any_unfit, int *who)
{
    int P = 0, rc = xchg_check_comm(comm, &P);
    if (rc == MPI_SUCCESS && !*csp)
        rc = xchg_api_state(comm, csp);
    if (rc != MPI_SUCCESS) {
        if (have_cv)
            free(cv->mem);
        return xchg_raise(comm, rc);
    }
    xchg_nb_drain(*csp); /* nonblocking exchanges started before */
    if (!have_cv)
        convert(sendbuf, sendcounts, sdispls, recvcounts, rdispls, (*csp)->size, cv);
    rc = agree_fit(*csp, cv->unfit, any_unfit, who);
    if (rc != MPI_SUCCESS) {
        free(cv->mem);
        return xchg_raise(comm, rc);
    }
    return MPI_SUCCESS;
}

/* xchg_alltoallv_c's first calls on a new communicator: MPI's own
 * MPI_Alltoallv_c until set-up pays back (select/phase.c; no agreement of
 * fit needed, MPI takes any value), the int copies giving the check its
 * statistics. *passed: the call is done (its result, raised), else *cv
 * holds the converted arrays for the usual path. */
static int first_calls_c(const void *sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         MPI_Datatype recvtype, MPI_Comm comm, converted *cv,
                         xchg_comm_state **ready, int *passed)
{
    *passed = 1;
    int P = 0, rc = xchg_mpi_check(comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = xchg_check_comm(comm, &P)) != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    convert(sendbuf, sendcounts, sdispls, recvcounts, rdispls, P, cv);
    /* without room for the int copies this rank takes part with empty
     * blocks and reports it, as for a bad argument */
    int pre_err = cv->arg_err != MPI_SUCCESS ? cv->arg_err : cv->mem ? MPI_SUCCESS : cv->unfit;
    xchg_phase_large large = {sendcounts, recvcounts, sdispls, rdispls, pre_err};
    int raised = 0;
    rc = xchg_phase_alltoallv(comm, xchg_api_names(), sendbuf, cv->sendcounts, cv->sdispls,
                              sendtype, recvbuf, cv->recvcounts, cv->rdispls, recvtype, &large,
                              passed, &raised, ready);
    if (!*passed && rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    *passed = 1;
    free(cv->mem);
    return raised ? rc : xchg_raise(comm, rc);
}

static int run_c(xchg_algo algo, int from_env, const void *sendbuf,
                 const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                 void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm)
{
    xchg_comm_state *cs = NULL;
    converted cv;
    int any_unfit = 0, who = -1, have_cv = 0, rc;
    if (algo == XCHG_ALGO_AUTO && from_env) {
        int passed = 0;
        rc = first_calls_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                           recvtype, comm, &cv, &cs, &passed);
        if (passed)
            return rc;
        have_cv = 1;
    }
    rc = begin_c(sendbuf, sendcounts, sdispls, recvcounts, rdispls, comm, have_cv, &cs, &cv,
                 &any_unfit, &who);
    if (rc != MPI_SUCCESS)
        return rc; /* raised there */
    if (!any_unfit) {
        rc = xchg_alltoallv_run(algo, from_env, cv.arg_err, sendbuf, cv.sendcounts,
                                cv.sdispls, sendtype, recvbuf, cv.recvcounts, cv.rdispls,
                                recvtype, comm);
        free(cv.mem);
        return rc; /* raised there */
    }
    free(cv.mem);
    int to_mpi = 0;
    rc = unfit_outcome(cs, algo, from_env, cv.unfit, who, "xchg_alltoallv_c", &to_mpi);
    if (to_mpi) {
        /* PMPI_: the preload library defines MPI_Alltoallv_c itself */
        rc = PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, cs->pcomm);
        record_passed(cs);
    }
    return xchg_raise(comm, rc);
}

/* xchg_ialltoallv_c's own copies: the caller's arrays (for MPI's path)
 * and the first value that does not fit in int on this rank. */
typedef struct xchg_large_nb {
    MPI_Count *sendcounts, *recvcounts; /* NULL where the caller's were (or in place) */
    MPI_Aint *sdispls, *rdispls;
    int unfit;
} xchg_large_nb;

static void large_nb_free(void *ext)
{
    xchg_large_nb *l = ext;
    if (!l)
        return;
    free(l->sendcounts);
    free(l);
}

/* xchg_ialltoallv_c's exchange, run as the request's coroutine (xchg_nb_body). */
static int large_nb_run(void *ext, const xchg_a2av_args *a)
{
    xchg_large_nb *l = ext;
    xchg_comm_state *cs = a->cs;
    int any_unfit = 0, who = -1;
    int rc = agree_fit(cs, l->unfit, &any_unfit, &who);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!any_unfit)
        return xchg_alltoallv_body(a);
    int to_mpi = 0;
    rc = unfit_outcome(cs, a->algo, a->from_env, l->unfit, who, "xchg_ialltoallv_c", &to_mpi);
    if (to_mpi) {
        MPI_Request q = MPI_REQUEST_NULL;
        rc = PMPI_Ialltoallv_c(a->sendbuf, l->sendcounts, l->sdispls, a->sendtype, a->recvbuf,
                               l->recvcounts, l->rdispls, a->recvtype, cs->pcomm, &q);
        if (rc == MPI_SUCCESS)
            rc = xchg_mpi_wait(&q, MPI_STATUS_IGNORE);
        record_passed(cs);
    }
    return rc;
}

static int irun_c(xchg_algo algo, int from_env, const void *sendbuf,
                  const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                  const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                  xchg_request *req)
{
    int P = 0;
    xchg_comm_state *cs = NULL;
    int rc = xchg_ialltoallv_prepare(comm, req, &P, &cs);
    if (rc != MPI_SUCCESS)
        return rc;
    converted cv;
    convert(sendbuf, sendcounts, sdispls, recvcounts, rdispls, P, &cv);
    /* copies of the caller's arrays, for MPI's path: one block of 4P */
    const size_t n = (size_t)(P > 0 ? P : 1);
    xchg_large_nb *l = calloc(1, sizeof *l);
    char *m = l ? malloc(4 * n * 8) : NULL;
    if (cv.mem && m) {
        _Static_assert(sizeof(MPI_Count) <= 8 && sizeof(MPI_Aint) <= 8, "8-byte slots");
        l->unfit = cv.unfit;
        l->sendcounts = (MPI_Count *)m;
        l->sdispls = (MPI_Aint *)(m + n * 8);
        l->recvcounts = (MPI_Count *)(m + 2 * n * 8);
        l->rdispls = (MPI_Aint *)(m + 3 * n * 8);
        if (sendbuf != MPI_IN_PLACE && sendcounts)
            memcpy(l->sendcounts, sendcounts, sizeof(MPI_Count) * (size_t)P);
        if (sendbuf != MPI_IN_PLACE && sdispls)
            memcpy(l->sdispls, sdispls, sizeof(MPI_Aint) * (size_t)P);
        if (recvcounts)
            memcpy(l->recvcounts, recvcounts, sizeof(MPI_Count) * (size_t)P);
        if (rdispls)
            memcpy(l->rdispls, rdispls, sizeof(MPI_Aint) * (size_t)P);
        xchg_a2av_args a = {algo, from_env, cv.arg_err, sendbuf, cv.sendcounts, cv.sdispls,
                            sendtype, recvbuf, cv.recvcounts, cv.rdispls, recvtype, comm, cs};
        /* the request owns cv.mem and l from here, also on failure */
        const xchg_nb_body body = {large_nb_run, large_nb_free, l};
        if (xchg_ialltoallv_launch(&a, cv.mem, &body, req) == MPI_SUCCESS)
            return MPI_SUCCESS;
    } else {
        free(cv.mem);
        free(m);
        free(l);
    }
    /* no memory for the request: the blocking call, as xchg_ialltoallv does */
    xchg_nb_drain(cs);
    rc = run_c(algo, from_env, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
               rdispls, recvtype, comm);
    return rc != MPI_SUCCESS ? rc /* raised there */
                             : xchg_ialltoallv_ran_blocking(comm, rc, "xchg_ialltoallv_c");
}

static int init_c(xchg_algo algo, int from_env, const void *sendbuf,
                  const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, xchg_request *req)
{
    if (!req)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "req is NULL"));
    *req = XCHG_REQUEST_NULL;
    xchg_comm_state *cs = NULL;
    converted cv;
    int any_unfit = 0, who = -1;
    int rc = begin_c(sendbuf, sendcounts, sdispls, recvcounts, rdispls, comm, 0, &cs, &cv,
                     &any_unfit, &who);
    if (rc != MPI_SUCCESS)
        return rc; /* raised there */
    if (!any_unfit) {
        rc = xchg_alltoallv_init_run(algo, from_env, cv.arg_err, sendbuf, cv.sendcounts,
                                     cv.sdispls, sendtype, recvbuf, cv.recvcounts, cv.rdispls,
                                     recvtype, comm, info, req);
        free(cv.mem);
        return rc;
    }
    free(cv.mem);
    int to_mpi = 0;
    rc = unfit_outcome(cs, algo, from_env, cv.unfit, who, "xchg_alltoallv_init_c", &to_mpi);
    if (to_mpi)
        rc = xchg_request_mpi_large(cs, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                    recvcounts, rdispls, recvtype, comm, req);
    return xchg_raise(comm, rc);
}

int xchg_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return run_c(XCHG_ALGO_AUTO, 1, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                 recvcounts, rdispls, recvtype, comm);
}

int xchg_alltoallv_algo_c(xchg_algo algo, const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm)
{
    return run_c(algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                 rdispls, recvtype, comm);
}

int xchg_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          xchg_request *req)
{
    return init_c(XCHG_ALGO_AUTO, 1, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                  recvcounts, rdispls, recvtype, comm, info, req);
}

int xchg_alltoallv_init_algo_c(xchg_algo algo, const void *sendbuf,
                               const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                               MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               xchg_request *req)
{
    return init_c(algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                  rdispls, recvtype, comm, info, req);
}

int xchg_ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                      const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                      MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req)
{
    return irun_c(XCHG_ALGO_AUTO, 1, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                  recvcounts, rdispls, recvtype, comm, req);
}

int xchg_ialltoallv_algo_c(xchg_algo algo, const void *sendbuf, const MPI_Count sendcounts[],
                           const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                           const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                           MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req)
{
    return irun_c(algo, 0, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                  rdispls, recvtype, comm, req);
}

#endif /* XCHG_HAVE_LARGE_COUNT */

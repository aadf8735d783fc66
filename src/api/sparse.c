/*
 * sparse.c - the public sparse exchange: argument checks (before any
 * communication, each error naming the argument), the choice (forced, XCHG_SPARSE_ALGO, or auto), and the
 * packed result.
 */
#include "api.h"
#include "select/select.h"
#include "sparse/sparse_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_args(int ndest, const int dests[], const int sendcounts[],
                      const int sdispls[], MPI_Datatype type, MPI_Comm comm, int *P)
{
    int rc = xchg_check_comm(comm, P);
    if (rc != MPI_SUCCESS)
        return rc;
    if (ndest < 0)
        return xchg_error_code(MPI_ERR_ARG, "ndest is negative (%d)", ndest);
    if (type == MPI_DATATYPE_NULL)
        return xchg_error_code(MPI_ERR_TYPE, "type is MPI_DATATYPE_NULL");
    if (xchg_type_check_committed(type) != MPI_SUCCESS)
        return xchg_error_code(MPI_ERR_TYPE, "type is not a committed datatype "
                               "(call MPI_Type_commit first)");
    if (ndest == 0)
        return MPI_SUCCESS;
    if (!dests)
        return xchg_error_code(MPI_ERR_ARG, "dests is NULL");
    if (!sendcounts)
        return xchg_error_code(MPI_ERR_ARG, "sendcounts is NULL");
    if (!sdispls)
        return xchg_error_code(MPI_ERR_ARG, "sdispls is NULL");
    for (int i = 0; i < ndest; i++) {
        if (dests[i] < 0 || dests[i] >= *P)
            return xchg_error_code(MPI_ERR_RANK, "dests[%d] is %d, not a rank of comm "
                                   "(size %d)", i, dests[i], *P);
        if (sendcounts[i] < 0)
            return xchg_error_code(MPI_ERR_COUNT, "sendcounts[%d] is negative (%d)", i,
                                   sendcounts[i]);
    }
    /* Duplicates: first index seen per rank (P ints, freed at once). */
    int *seen = malloc((size_t)*P * sizeof *seen);
    if (!seen)
        return xchg_error_code(MPI_ERR_NO_MEM, "no memory to check dests for duplicates");
    for (int p = 0; p < *P; p++)
        seen[p] = -1;
    rc = MPI_SUCCESS;
    for (int i = 0; i < ndest; i++) {
        if (seen[dests[i]] >= 0) {
            rc = xchg_error_code(MPI_ERR_ARG, "dests[%d] and dests[%d] are both %d: each "
                                 "destination may appear only once", seen[dests[i]], i,
                                 dests[i]);
            break;
        }
        seen[dests[i]] = i;
    }
    free(seen);
    return rc;
}

static void state_free(void *p)
{
    xchg_sparse_state *ss = p;
    /* Called while the caller frees its communicator (collective), so the
     * collective MPI_Win_free is allowed here. */
    xchg_sparse_window_free(ss);
    free(ss->wincounts);
    free(ss);
}

static int state_get(xchg_comm_state *cs, xchg_sparse_state **ss)
{
    if (!cs->ext[XCHG_EXT_SPARSE]) {
        xchg_sparse_state *n = calloc(1, sizeof *n);
        if (!n)
            return xchg_error_code(MPI_ERR_NO_MEM, "no memory for sparse exchange state");
        n->win = MPI_WIN_NULL;
        n->census_msgs = -1;
        n->auto_last = XCHG_SPARSE_INVALID;
        cs->ext[XCHG_EXT_SPARSE] = n;
        cs->ext_free[XCHG_EXT_SPARSE] = state_free;
    }
    *ss = cs->ext[XCHG_EXT_SPARSE];
    return MPI_SUCCESS;
}

static int cmp_msg(const void *a, const void *b)
{
    const xchg_sparse_msg *x = a, *y = b;
    return (x->source > y->source) - (x->source < y->source);
}

/* Sorts the kept messages by source and packs them into one buffer. */
static int build_result(xchg_sparse_call *s, xchg_sparse_result *r)
{
    int n = s->nmsgs;
    if (n > 1) /* msgs is NULL when nothing arrived: qsort may not take NULL */
        qsort(s->msgs, (size_t)n, sizeof *s->msgs, cmp_msg);
    long long total = 0;
    for (int i = 0; i < n; i++)
        total += s->msgs[i].count;
    if (total > 2147483647LL)
        return xchg_error_code(MPI_ERR_COUNT, "sparse exchange: rank %d received %lld "
                               "elements, more than an int displacement can address",
                               s->rank, total);
    int *arr = malloc((size_t)(3 * (n ? n : 1)) * sizeof *arr);
    if (!arr)
        return xchg_error_code(MPI_ERR_NO_MEM, "no memory for the sparse result arrays");
    xchg_sparse_buf all = {0};
    int rc = MPI_SUCCESS;
    if (total > 0 && s->ti.size > 0) {
        rc = xchg_sparse_buf_alloc(s, (int)total, &all);
        if (rc != MPI_SUCCESS) {
            free(arr);
            return rc;
        }
    }
    r->nsources = n;
    r->sources = arr;
    r->counts = arr + n;
    r->displs = arr + 2 * n;
    int d = 0;
    char *scratch = NULL;
    size_t scratch_bytes = 0;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        xchg_sparse_msg *m = &s->msgs[i];
        r->sources[i] = m->source;
        r->counts[i] = m->count;
        r->displs[i] = d;
        if (all.mem && m->count > 0) {
            /* Contiguous: one memcpy into place. Otherwise through packed
             * bytes, which is right for any layout (holes, overlaps). */
            size_t bytes = (size_t)m->count * (size_t)s->ti.size;
            if (s->ti.contig) {
                rc = xchg_pack_block(m->buf.addr, 0, m->count, &s->ti,
                                     xchg_block_addr(all.addr, d, &s->ti) + s->ti.true_lb);
            } else {
                if (bytes > scratch_bytes) {
                    free(scratch);
                    scratch = malloc(bytes);
                    scratch_bytes = scratch ? bytes : 0;
                    if (!scratch)
                        rc = xchg_error_code(MPI_ERR_NO_MEM, "no memory to pack the "
                                             "sparse result");
                }
                if (rc == MPI_SUCCESS)
                    rc = xchg_pack_block(m->buf.addr, 0, m->count, &s->ti, scratch);
                if (rc == MPI_SUCCESS)
                    rc = xchg_unpack_block(scratch, all.addr, d, m->count, &s->ti);
            }
        }
        d += m->count;
    }
    free(scratch);
    r->recvbuf = all.mem ? all.addr : NULL;
    r->mem_ = all.mem;
    if (all.mem)
        s->mem.temp_cur -= all.bytes; /* now the caller's */
    if (rc != MPI_SUCCESS)
        xchg_sparse_result_free(r);
    return rc;
}

int xchg_sparse_result_free(xchg_sparse_result *r)
{
    if (!r)
        return MPI_SUCCESS;
    free(r->sources);
    free(r->mem_);
    memset(r, 0, sizeof *r);
    return MPI_SUCCESS;
}

/* The arguments' checks and the algorithm's: the agreed XCHG_SPARSE_ALGO
 * (an unknown one fails every rank alike: *fatal), else the one given.
 * Returns this rank's argument error (0: none). */
static int check_call(xchg_comm_state *cs, xchg_sparse_algo *algo, int from_env, int ndest,
                      const int dests[], const int sendcounts[], const int sdispls[],
                      MPI_Datatype type, xchg_sparse_recv_fn fn, xchg_sparse_result *result,
                      MPI_Comm comm, int *fatal)
{
    int P = cs->size;
    int rc = check_args(ndest, dests, sendcounts, sdispls, type, comm, &P);
    if (rc == MPI_SUCCESS && !fn && !result)
        rc = xchg_error_code(MPI_ERR_ARG, "fn and result are both NULL: give a callback "
                             "or a result to fill");
    if (rc == MPI_SUCCESS && fn && result)
        rc = xchg_error_code(MPI_ERR_ARG, "fn and result are both given: give exactly one");
    *fatal = 0;
    if (from_env) {
        *algo = cs->settings.sparse_algo; /* agreed: the same on every rank */
        if (*algo == XCHG_SPARSE_INVALID) { /* so this fails on every rank alike */
            *fatal = 1;
            return xchg_error_code(MPI_ERR_ARG, "XCHG_SPARSE_ALGO: unknown sparse algorithm "
                                   "'%s' (pex, rsx, nbx, rma, pex_loc, nbx_loc, "
                                   "pex_loc_shm or auto)",
                                   cs->settings.sparse_algo_text);
        }
    }
    const int known = *algo == XCHG_SPARSE_AUTO || xchg_sparse_registry_find(*algo) != NULL;
    if (rc == MPI_SUCCESS && *algo == XCHG_SPARSE_INVALID)
        rc = xchg_error_code(MPI_ERR_ARG, "algo %d is not a sparse algorithm "
                             "(XCHG_SPARSE_INVALID: xchg_sparse_algo_from_name returns it for "
                             "an unknown name)", (int)*algo);
    else if (rc == MPI_SUCCESS && !known)
        rc = xchg_error_code(MPI_ERR_ARG, "algo %d is not a sparse algorithm of this build",
                             (int)*algo);
    /* An argument error fails every rank alike where a collective carries
     * it: the check mode's allreduce, or else the census of pex, rsx,
     * pex_loc and pex_loc_shm (once the algorithm is known). nbx, nbx_loc and rma have no
     * census that could carry it: there the error is this rank's only. */
    if (cs->settings.check)
        rc = xchg_agree_errors(cs->pcomm, cs->rank, cs->size, rc, "xchg_sparse_exchange");
    if (rc != MPI_SUCCESS && (cs->settings.check || !known))
        *fatal = 1;
    return rc;
}

/* auto's choice from the last census (select/sparse_rules.c), and what
 * XCHG_VERBOSE says of it (select/report.c). */
static xchg_sparse_algo auto_choice(xchg_comm_state *cs, xchg_sparse_state *ss)
{
    const int P = cs->size;
    char why[320]; /* a table rule names its file */
    xchg_sparse_algo algo = xchg_select_sparse(cs, ss, why, sizeof why);
    if (xchg_report_due(&ss->auto_printed, cs, (int)algo, algo != ss->auto_last)) {
        char seen[96] = "no census seen yet on this communicator";
        if (ss->census_msgs >= 0)
            snprintf(seen, sizeof seen, "the last census: %lld remote messages, %.2f per "
                     "rank", ss->census_msgs, (double)ss->census_msgs / P);
        xchg_report_choice("sparse", xchg_sparse_algo_name(algo), P, " (rule: %s; %s)", why,
                           seen);
    }
    ss->auto_last = algo;
    return algo;
}

/* The call's fields: the arguments (none after a local error: then a call
 * with nothing to send, only the mark), the private communicator, this
 * call's tag set and the memory accounting. */
static void fill_call(xchg_sparse_call *s, xchg_comm_state *cs, int ndest, const int dests[],
                      const void *sendbuf, const int sendcounts[], const int sdispls[],
                      xchg_sparse_recv_fn fn, void *ctx)
{
    if (!s->local_err) {
        s->sendbuf = sendbuf;
        s->ndest = ndest;
        s->dests = dests;
        s->counts = sendcounts;
        s->displs = sdispls;
    }
    s->comm = cs->pcomm;
    s->cs = cs;
    s->rank = cs->rank;
    s->size = cs->size;
    int base = XCHG_TAG_SPARSE + (int)(s->ss->calls & 1) * XCHG_SPARSE_TAG_SET;
    s->tag_data = base + XCHG_SPARSE_TAG_DATA;
    s->tag_barrier = base + XCHG_SPARSE_TAG_BARRIER;
    s->mem.rank = s->rank;
    s->mem.temp_limit = xchg_temp_limit_of(cs);
    s->fn = fn;
    s->ctx = ctx;
}

static int run(xchg_sparse_algo algo, int from_env, int ndest, const int dests[],
               const void *sendbuf, const int sendcounts[], const int sdispls[],
               MPI_Datatype type, xchg_sparse_recv_fn fn, void *ctx,
               xchg_sparse_result *result, MPI_Comm comm)
{
    int P = 0, rc, fatal;
    if (result)
        memset(result, 0, sizeof *result);
    /* The state first (collective on first use, and it holds the agreed
     * settings), so that a rank with bad arguments still takes part in it. */
    if ((rc = xchg_check_comm(comm, &P)) != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    xchg_comm_state *cs;
    if ((rc = xchg_api_state(comm, &cs)) != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    xchg_nb_drain(cs); /* nonblocking alltoallv exchanges started before */

    rc = check_call(cs, &algo, from_env, ndest, dests, sendcounts, sdispls, type, fn, result,
                    comm, &fatal);
    if (fatal)
        return xchg_raise(comm, rc);
    xchg_sparse_call s;
    memset(&s, 0, sizeof s);
    s.local_err = rc;
    if ((rc = state_get(cs, &s.ss)) != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    if (!s.local_err)
        s.local_err = xchg_typeinfo_get(type, &s.ti);
    if (algo == XCHG_SPARSE_AUTO)
        algo = auto_choice(cs, s.ss);
    if (s.local_err && !xchg_sparse_carries_errors(algo, P))
        return xchg_raise(comm, s.local_err);
    fill_call(&s, cs, ndest, dests, sendbuf, sendcounts, sdispls, fn, ctx);

    rc = xchg_sparse_run(algo, &s);
    s.ss->calls++;

    if (rc == MPI_SUCCESS && result)
        rc = build_result(&s, result);
    for (int i = 0; i < s.nmsgs; i++)
        xchg_sparse_buf_free(&s, &s.msgs[i].buf);
    free(s.msgs);
    if (rc == MPI_SUCCESS && s.fn_rc != 0)
        rc = xchg_error_code(MPI_ERR_OTHER, "the receive callback returned %d on rank %d",
                             s.fn_rc, s.rank);
    cs->calls++;
    cs->last.algo = XCHG_ALGO_INVALID;
    cs->last.sparse_algo = s.ran > 0 ? s.ran : algo;
    cs->last.passed_to_mpi = 0;
    cs->last.temp_bytes = s.mem.temp_peak;
    cs->last.calls = cs->calls;
    return xchg_raise(comm, rc);
}

int xchg_sparse_exchange(int ndest, const int dests[], const void *sendbuf,
                         const int sendcounts[], const int sdispls[], MPI_Datatype type,
                         xchg_sparse_recv_fn fn, void *ctx, MPI_Comm comm)
{
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    if (!fn)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "fn is NULL"));
    return run(XCHG_SPARSE_AUTO, 1, ndest, dests, sendbuf, sendcounts, sdispls, type, fn,
               ctx, NULL, comm);
}

int xchg_sparse_exchange_result(int ndest, const int dests[], const void *sendbuf,
                                const int sendcounts[], const int sdispls[],
                                MPI_Datatype type, xchg_sparse_result *result,
                                MPI_Comm comm)
{
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    if (!result)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "result is NULL"));
    return run(XCHG_SPARSE_AUTO, 1, ndest, dests, sendbuf, sendcounts, sdispls, type, NULL,
               NULL, result, comm);
}

int xchg_sparse_exchange_algo(xchg_sparse_algo algo, int ndest, const int dests[],
                              const void *sendbuf, const int sendcounts[],
                              const int sdispls[], MPI_Datatype type,
                              xchg_sparse_recv_fn fn, void *ctx,
                              xchg_sparse_result *result, MPI_Comm comm)
{
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    return run(algo, 0, ndest, dests, sendbuf, sendcounts, sdispls, type, fn, ctx, result,
               comm);
}

/*
 * sparse.c - the public sparse exchange: argument checks (before any
 * communication, each error naming the argument), the choice (forced, XCHG_SPARSE_ALGO, or auto), and the
 * packed result.
 */
#include "api.h"
#include "sparse/sparse_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The automatic choice, by measurement: rules over the communicator size
 * and, from the second call on, the mean number of remote messages per
 * rank that the previous call's census carried (pex and rsx add it to
 * their collective; see census_msgs in sparse_internal.h). The census
 * result is the same on every rank, so the choice is too, with no
 * collective before the exchange; a pattern that changes is followed one
 * call later, and a stale figure costs speed, never correctness. The first
 * matching rule wins. Each rule is the winner measured in simulation
 * there (16 doubles per message, 16 ranks per node; the tables are in
 * docs/sparse.md, "Measured in simulation"):
 *   - rsx from 32 to 127 ranks at 1-2 messages per rank: 0.90-0.97x pex's
 *     time (from 3 messages, and at 16 and 256 ranks, pex wins);
 *   - pex_loc from 256 ranks at up to 3 messages per rank (0.78x pex at
 *     256 ranks and 3; a tie at 26), and from 1024 ranks at any census
 *     (0.36-0.71x pex at 11 and 103 messages, 16 and 64 ranks per node).
 *     The census clips each rank at XCHG_SPARSE_DEGREE_CLIP = 63, so 103
 *     and more read as 63; the rule does not see message sizes (measured
 *     with 128-byte messages). pex_loc needs nodes of many ranks (on nodes
 *     of one rank its step 2 is P-1 messages per rank), so its rule asks
 *     the node layout: measured at 16 and 64 ranks per node, so from 16;
 *   - pex everywhere else (measured from 1 to 448 ranks).
 * nbx, nbx_loc and rma never won a measured case (nbx 1.2 to 2.3x pex from
 * 32 to 448 ranks, 0.72-0.87x at 1024 ranks and 1%, where pex_loc is
 * 0.36-0.71x; nbx_loc 1.02 to 1.6x pex). On real MPI at 4 to 8 ranks pex
 * is the rule too. Between 128 and 256 ranks nothing was measured (pex
 * stays), nor above 1024: the last rule keeps the largest measured
 * winner. A new measurement changes only this table. */
static const struct sparse_rule {
    int pmin, pmax;     /* communicator sizes it applies to */
    int max_mean;       /* -1: always; else only when the last census saw at
                           most this many remote messages per rank on average */
    xchg_sparse_algo algo;
    int min_rpn;        /* 0: any nodes; else only where the node layout has at
                           least this many ranks per node on average (asked
                           only when the rest matches: the layout is made on
                           first use, collectively, the same on every rank) */
} sparse_rules[] = {
    {32, 127, 2, XCHG_SPARSE_RSX, 0},    /* measured 0.90 to 0.97 of pex */
    {1024, 1 << 30, XCHG_SPARSE_DEGREE_CLIP, XCHG_SPARSE_PEX_LOC, 16}, /* 0.36-0.71 of pex */
    {256, 1 << 30, 3, XCHG_SPARSE_PEX_LOC, 16},   /* measured 0.78 of pex */
    {1, 1 << 30, -1, XCHG_SPARSE_PEX, 0}, /* measured 1 to 448 ranks */
};

/* census: the previous call's census_msgs (-1 unknown). *why gets the
 * rule, for XCHG_VERBOSE. */
static xchg_sparse_algo select_sparse(xchg_comm_state *cs, int P, long long census, char *why,
                                      size_t whylen)
{
    for (size_t i = 0; i < sizeof sparse_rules / sizeof sparse_rules[0]; i++) {
        const struct sparse_rule *r = &sparse_rules[i];
        if (P < r->pmin || P > r->pmax || !xchg_sparse_registry_find(r->algo))
            continue;
        if (r->max_mean >= 0 && (census < 0 || census > (long long)r->max_mean * P))
            continue;
        if (r->min_rpn > 0 && xchg_sparse_ranks_per_node(cs) < r->min_rpn)
            continue;
        if (r->min_rpn > 0 && r->max_mean >= 0)
            snprintf(why, whylen, "P >= %d, at most %d messages per rank, >= %d ranks per node",
                     r->pmin, r->max_mean, r->min_rpn);
        else if (r->min_rpn > 0)
            snprintf(why, whylen, "P >= %d, >= %d ranks per node", r->pmin, r->min_rpn);
        else if (r->max_mean >= 0)
            snprintf(why, whylen, "P in %d..%d, at most %d messages per rank", r->pmin,
                     r->pmax, r->max_mean);
        else if (r->pmin <= 1 && r->pmax >= (1 << 30))
            snprintf(why, whylen, "the default");
        else
            snprintf(why, whylen, "P in %d..%d", r->pmin, r->pmax);
        return r->algo;
    }
    snprintf(why, whylen, "no rule");
    return XCHG_SPARSE_PEX;
}

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

static int run(xchg_sparse_algo algo, int from_env, int ndest, const int dests[],
               const void *sendbuf, const int sendcounts[], const int sdispls[],
               MPI_Datatype type, xchg_sparse_recv_fn fn, void *ctx,
               xchg_sparse_result *result, MPI_Comm comm)
{
    int P = 0, rc;
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

    rc = check_args(ndest, dests, sendcounts, sdispls, type, comm, &P);
    if (rc == MPI_SUCCESS && !fn && !result)
        rc = xchg_error_code(MPI_ERR_ARG, "fn and result are both NULL: give a callback "
                             "or a result to fill");
    if (rc == MPI_SUCCESS && fn && result)
        rc = xchg_error_code(MPI_ERR_ARG, "fn and result are both given: give exactly one");
    if (from_env) {
        algo = cs->settings.sparse_algo; /* agreed: the same on every rank */
        if (algo == XCHG_SPARSE_INVALID) /* so this fails on every rank alike */
            return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG,
                              "XCHG_SPARSE_ALGO: unknown sparse algorithm '%s' "
                              "(pex, rsx, nbx, rma, pex_loc, nbx_loc or auto)",
                              cs->settings.sparse_algo_text));
    }
    const int known = algo == XCHG_SPARSE_AUTO || xchg_sparse_registry_find(algo) != NULL;
    if (rc == MPI_SUCCESS && algo == XCHG_SPARSE_INVALID)
        rc = xchg_error_code(MPI_ERR_ARG, "algo %d is not a sparse algorithm "
                             "(XCHG_SPARSE_INVALID: xchg_sparse_algo_from_name returns it for "
                             "an unknown name)", (int)algo);
    else if (rc == MPI_SUCCESS && !known)
        rc = xchg_error_code(MPI_ERR_ARG, "algo %d is not a sparse algorithm of this build",
                             (int)algo);
    /* An argument error fails every rank alike where a collective carries
     * it: the check mode's allreduce, or else the census of pex, rsx and
     * pex_loc (below, once the algorithm is known). nbx, nbx_loc and rma
     * have no census that could carry it: there the error is this rank's
     * only. */
    if (cs->settings.check)
        rc = xchg_agree_errors(cs->pcomm, cs->rank, cs->size, rc, "xchg_sparse_exchange");
    if (rc != MPI_SUCCESS && (cs->settings.check || !known))
        return xchg_raise(comm, rc);
    xchg_sparse_call s;
    memset(&s, 0, sizeof s);
    s.local_err = rc;
    if ((rc = state_get(cs, &s.ss)) != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    if (!s.local_err)
        s.local_err = xchg_typeinfo_get(type, &s.ti);
    if (algo == XCHG_SPARSE_AUTO) {
        char why[96];
        algo = select_sparse(cs, P, s.ss->census_msgs, why, sizeof why);
        /* rank 0 says the first choice of each algorithm (XCHG_VERBOSE=1)
         * or every change of choice (2) */
        unsigned bit = 1u << ((unsigned)algo & 31u);
        int verbose = cs->settings.verbose;
        if (cs->rank == 0 && ((verbose >= 1 && !(s.ss->auto_printed & bit)) ||
                              (verbose >= 2 && algo != s.ss->auto_last))) {
            s.ss->auto_printed |= bit;
            char seen[96] = "no census seen yet on this communicator";
            if (s.ss->census_msgs >= 0)
                snprintf(seen, sizeof seen, "the last census: %lld remote messages, %.2f per "
                         "rank", s.ss->census_msgs, (double)s.ss->census_msgs / P);
            fprintf(stderr, "xchg: sparse auto chose %s on P=%d (rule: %s; %s)\n",
                    xchg_sparse_algo_name(algo), P, why, seen);
        }
        s.ss->auto_last = algo;
    }
    if (s.local_err && !xchg_sparse_carries_errors(algo, P))
        return xchg_raise(comm, s.local_err);
    if (!s.local_err) { /* else a call with nothing to send: only the mark */
        s.sendbuf = sendbuf;
        s.ndest = ndest;
        s.dests = dests;
        s.counts = sendcounts;
        s.displs = sdispls;
    }
    s.comm = cs->pcomm;
    s.cs = cs;
    s.rank = cs->rank;
    s.size = cs->size;
    int base = XCHG_TAG_SPARSE + (int)(s.ss->calls & 1) * XCHG_SPARSE_TAG_SET;
    s.tag_data = base + XCHG_SPARSE_TAG_DATA;
    s.tag_barrier = base + XCHG_SPARSE_TAG_BARRIER;
    s.mem.rank = s.rank;
    s.mem.temp_limit = xchg_temp_limit_of(cs);
    s.fn = fn;
    s.ctx = ctx;

    rc = xchg_sparse_registry_find(algo)->run(&s);
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

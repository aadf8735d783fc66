/*
 * error_agree.c - one rank's argument error fails every rank, and the check mode.
 *
 * MPI calls a collective erroneous when one rank passes bad arguments; a
 * library that returns on that rank only leaves the others waiting forever.
 * Where a collective runs anyway (auto's statistics, the padded algorithms'
 * maximum, grid's and hierarchical's refusal, persistent init, the check
 * mode), the failing rank takes part with empty blocks and a flag that the
 * collective carries: every rank then returns an error of the same class.
 * The flag is one int64 under MPI_MAX: 0 for "no error", else
 * (P - rank) << 12 | class, so the lowest failing rank wins.
 *
 * The check mode (XCHG_CHECK=1) adds such a collective to every
 * xchg_alltoallv call, and verifies the counts across ranks on the way:
 * one MPI_Alltoall of the byte counts each rank sends to each other, and
 * one MPI_Allreduce of the worst finding.
 */
#include "xchg_internal.h"

#include <stdlib.h>

#define CLASS_BITS 12

int64_t xchg_agree_flag(int rank, int size, int local_err)
{
    if (local_err == MPI_SUCCESS)
        return 0;
    int cls = MPI_ERR_OTHER;
    MPI_Error_class(local_err, &cls);
    if (cls <= MPI_SUCCESS || cls >= (1 << CLASS_BITS))
        cls = MPI_ERR_OTHER;
    return ((int64_t)(size - rank) << CLASS_BITS) | cls;
}

int xchg_agree_result(int rank, int size, int local_err, int64_t all, const char *who)
{
    if (all == 0)
        return MPI_SUCCESS;
    int cls = (int)(all & ((1 << CLASS_BITS) - 1));
    int from = size - (int)(all >> CLASS_BITS);
    int mine = MPI_SUCCESS;
    if (local_err != MPI_SUCCESS)
        MPI_Error_class(local_err, &mine);
    if (from == rank || (local_err != MPI_SUCCESS && mine == cls))
        return local_err; /* this rank's own detailed error */
    char cname[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(cls, cname, &len);
    if (local_err != MPI_SUCCESS) {
        char own[MPI_MAX_ERROR_STRING];
        xchg_error_string(local_err, own, &len);
        return xchg_error_code(cls, "%s: rank %d reported an argument error (%s), so no rank "
                               "exchanged; this rank's own error: %s", who, from, cname, own);
    }
    return xchg_error_code(cls, "%s: rank %d reported an argument error (%s), so no rank "
                           "exchanged (its own error names the argument)", who, from, cname);
}

int xchg_agree_errors(MPI_Comm pcomm, int rank, int size, int local_err, const char *who)
{
    int64_t v = xchg_agree_flag(rank, size, local_err), all = 0;
    int rc = xchg_mpi_allreduce(&v, &all, 1, MPI_INT64_T, MPI_MAX, pcomm);
    if (rc != MPI_SUCCESS)
        return local_err != MPI_SUCCESS ? local_err : rc;
    return xchg_agree_result(rank, size, local_err, all, who);
}

/* Kinds of check-mode findings, worst last. */
enum { FOUND_LESS = 1, FOUND_MORE = 2, FOUND_ARG = 3 };

int xchg_check_mode(xchg_call *c, int local_err)
{
    const int P = c->size, me = c->rank;
    int err = MPI_SUCCESS;
    size_t bytes = 2 * sizeof(int64_t) * (size_t)P;
    int64_t *sent = xchg_temp_alloc(c, bytes, "XCHG_CHECK: byte count table", &err);
    const int counted = sent != NULL;
    if (!sent) /* take part anyway, flagged (a few bytes over the limit) */
        sent = malloc(bytes);
    if (!sent)
        return xchg_error_code(MPI_ERR_NO_MEM, "XCHG_CHECK: no memory for %zu bytes", bytes);
    int64_t *got = sent + P;
    if (err == MPI_SUCCESS && local_err != MPI_SUCCESS)
        err = local_err;
    for (int j = 0; j < P; j++)
        sent[j] = err == MPI_SUCCESS ? (int64_t)c->sendcounts[j] * c->st.size : 0;
    int rc = xchg_mpi_alltoall(sent, 1, MPI_INT64_T, got, 1, MPI_INT64_T, c->comm);

    /* The worst finding of this rank: key = kind << 56 | class << 40 | (P - rank)
     * under MPI_MAX, so the worst kind wins, then the lowest rank. */
    int64_t key = 0, detail[4] = {0, 0, 0, 0}; /* sender, receiver, sent, expected */
    if (err != MPI_SUCCESS) {
        int cls = MPI_ERR_OTHER;
        MPI_Error_class(err, &cls);
        key = (int64_t)FOUND_ARG << 56 | (int64_t)(cls & 0xffff) << 40 | (P - me);
    } else if (rc == MPI_SUCCESS) {
        for (int j = 0; j < P; j++) {
            int64_t want = (int64_t)c->recvcounts[j] * c->rt.size;
            if (got[j] == want)
                continue;
            int kind = got[j] > want ? FOUND_MORE : FOUND_LESS;
            int64_t k = (int64_t)kind << 56 |
                        (int64_t)(kind == FOUND_MORE ? MPI_ERR_TRUNCATE : MPI_ERR_ARG) << 40 |
                        (P - me);
            if (k > key) {
                key = k;
                detail[0] = j;
                detail[1] = me;
                detail[2] = got[j];
                detail[3] = want;
            }
        }
    }
    int64_t all = 0;
    if (rc == MPI_SUCCESS)
        rc = xchg_mpi_allreduce(&key, &all, 1, MPI_INT64_T, MPI_MAX, c->comm);
    int from = P - (int)(all & 0xffffffffff), cls = (int)((all >> 40) & 0xffff);
    if (rc == MPI_SUCCESS && all && (all >> 56) != FOUND_ARG)
        rc = xchg_mpi_bcast(detail, 4, MPI_INT64_T, from, c->comm);
    if (counted)
        xchg_temp_free(c, sent, bytes);
    else
        free(sent);
    if (rc != MPI_SUCCESS)
        return err != MPI_SUCCESS ? err : rc;
    if (all == 0)
        return MPI_SUCCESS;
    if ((all >> 56) == FOUND_ARG) {
        int64_t flag = ((int64_t)(P - from) << CLASS_BITS) | (cls & ((1 << CLASS_BITS) - 1));
        return xchg_agree_result(me, P, err, flag, "XCHG_CHECK");
    }
    return xchg_error_code(cls, "XCHG_CHECK: rank %d sends %lld bytes to rank %d, which "
                           "expects %lld bytes from it (its recvcounts[%d] x recvtype "
                           "size)%s", (int)detail[0], (long long)detail[2], (int)detail[1],
                           (long long)detail[3], (int)detail[0],
                           detail[2] > detail[3] ? ": more than expected" : ": fewer than expected");
}

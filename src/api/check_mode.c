/*
 * check_mode.c - the check mode (XCHG_CHECK=1): a collective added to every
 * xchg_alltoallv call that verifies the counts across ranks and carries one
 * rank's argument error to all (core/error_agree.c): one MPI_Alltoall of
 * the byte counts each rank sends to each other, and one MPI_Allreduce of
 * the worst finding.
 */
#include "api.h"

#include <stdlib.h>

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
        int64_t flag = ((int64_t)(P - from) << XCHG_AGREE_CLASS_BITS) | (cls & ((1 << XCHG_AGREE_CLASS_BITS) - 1));
        return xchg_agree_result(me, P, err, flag, "XCHG_CHECK");
    }
    return xchg_error_code(cls, "XCHG_CHECK: rank %d sends %lld bytes to rank %d, which "
                           "expects %lld bytes from it (its recvcounts[%d] x recvtype "
                           "size)%s", (int)detail[0], (long long)detail[2], (int)detail[1],
                           (long long)detail[3], (int)detail[0],
                           detail[2] > detail[3] ? ": more than expected" : ": fewer than expected");
}

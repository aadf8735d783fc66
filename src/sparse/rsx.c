/*
 * rsx.c - reduce-scatter census: each rank contributes a P-vector of 0/1
 * flags (1 for each rank it sends to); MPI_Reduce_scatter_block sums them
 * and hands rank r entry r: the number of messages coming to it. Then
 * Isend, and Probe(MPI_ANY_SOURCE)/Recv exactly that many messages.
 * The census is one collective whose cost grows more slowly than an
 * alltoall's, but senders stay unknown until their message arrives.
 * Two more things ride in the same ints, so that no collective is added:
 * each rank adds P times its number of remote messages to every entry
 * (the sum is then nrecv + P x the messages of all ranks, the same
 * multiple on every rank, from which sparse auto chooses the next call),
 * and a rank with an argument error subtracts K = 2^30 / P from every
 * entry instead: while every correct sum stays below K, an entry is
 * negative exactly when some rank failed, and every rank sees it.
 * Where the sums could reach K (degrees from P = 258, errors from 32769)
 * that part is left out.
 */
#include "sparse_internal.h"

#include <stdlib.h>

/* K, and what the entries carry at this P */
static long long error_step(int P) { return (1LL << 30) / P; }
static int folds_degrees(int P)
{
    return P - 1 + (long long)XCHG_SPARSE_DEGREE_CLIP * P * P < error_step(P);
}
int xchg_sparse_rsx_carries_errors(int P) { return P - 1 < error_step(P); }

int xchg_sparse_rsx(xchg_sparse_call *s)
{
    int P = s->size, nsend = 0;
    int got = 0;
    int *flags = calloc((size_t)P, sizeof *flags);
    MPI_Request *reqs = malloc((s->ndest ? (size_t)s->ndest : 1) * sizeof *reqs);
    if (!flags || !reqs) {
        free(flags); free(reqs);
        return xchg_error_code(MPI_ERR_NO_MEM, "rsx: no memory for %d flags", P);
    }
    int fold = folds_degrees(P);
    int add = s->local_err ? (int)-error_step(P)
              : fold       ? P * xchg_sparse_census_degree(s)
                           : 0;
    for (int q = 0; q < P; q++)
        flags[q] = add;
    for (int i = 0; i < s->ndest; i++)
        if (xchg_sparse_remote(s, i))
            flags[s->dests[i]] += 1;
    int rc = MPI_Reduce_scatter_block(flags, &got, 1, MPI_INT, MPI_SUM, s->comm);
    free(flags);
    if (rc == MPI_SUCCESS && got < 0) {
        free(reqs);
        return xchg_sparse_agree(s);
    }
    int nrecv = fold ? got % P : got;
    if (rc == MPI_SUCCESS)
        s->ss->census_msgs = fold ? got / P : -1; /* -1: not carried (agreed: P) */
    int nremote = 0;
    for (int i = 0; i < s->ndest; i++)
        nremote += xchg_sparse_remote(s, i);
    if (rc == MPI_SUCCESS && nremote > xchg_sparse_window(s)) {
        /* past XCHG_MAX_INFLIGHT: sends through a window, receives polled */
        rc = xchg_sparse_exchange_windowed(s, nrecv);
        free(reqs);
        return rc;
    }
    if (rc == MPI_SUCCESS)
        rc = xchg_sparse_isend_all(s, 0, reqs, &nsend);
    if (rc == MPI_SUCCESS)
        rc = xchg_sparse_deliver_self(s);
    /* Messages of the next sparse call carry the other parity's tag, and
     * the census of that call cannot finish before this rank enters it, so
     * the nrecv messages of this tag are exactly this call's. */
    for (int i = 0; i < nrecv && rc == MPI_SUCCESS; i++) {
        MPI_Status st;
        rc = MPI_Probe(MPI_ANY_SOURCE, s->tag_data, s->comm, &st);
        if (rc == MPI_SUCCESS)
            rc = xchg_sparse_recv_probed(s, &st);
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall(nsend, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
    return rc;
}

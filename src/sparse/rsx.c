/*
 * rsx.c - reduce-scatter census: each rank contributes a P-vector of 0/1
 * flags (1 for each rank it sends to); MPI_Reduce_scatter_block sums them
 * and hands rank r entry r: the number of messages coming to it. Then
 * Isend, and Probe(MPI_ANY_SOURCE)/Recv exactly that many messages.
 * The census is one collective whose cost grows more slowly than an
 * alltoall's, but senders stay unknown until their message arrives.
 */
#include "sparse_internal.h"

#include <stdlib.h>

int xchg_sparse_rsx(xchg_sparse_call *s)
{
    int P = s->size, nrecv = 0, nsend = 0;
    int *flags = calloc((size_t)P, sizeof *flags);
    MPI_Request *reqs = malloc((s->ndest ? (size_t)s->ndest : 1) * sizeof *reqs);
    if (!flags || !reqs) {
        free(flags); free(reqs);
        return xchg_error_code(MPI_ERR_NO_MEM, "rsx: no memory for %d flags", P);
    }
    for (int i = 0; i < s->ndest; i++)
        if (xchg_sparse_remote(s, i))
            flags[s->dests[i]] = 1;
    int rc = MPI_Reduce_scatter_block(flags, &nrecv, 1, MPI_INT, MPI_SUM, s->comm);
    free(flags);
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

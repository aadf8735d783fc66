/*
 * pex.c - personalized exchange: MPI_Alltoall of the counts tells every
 * rank whom to receive from and how much, then the data moves
 * point-to-point with exact sources. Two "all" steps, but at small P the
 * alltoall is as cheap as any census, and every receive is posted early.
 */
#include "sparse_internal.h"

#include <stdlib.h>

int xchg_sparse_pex(xchg_sparse_call *s)
{
    int P = s->size;
    int *cnt = calloc(2 * (size_t)P, sizeof *cnt);
    if (!cnt)
        return xchg_error_code(MPI_ERR_NO_MEM, "pex: no memory for %d counts", 2 * P);
    int *sendcnt = cnt, *recvcnt = cnt + P;
    for (int i = 0; i < s->ndest; i++)
        if (xchg_sparse_remote(s, i))
            sendcnt[s->dests[i]] = s->counts[i];
    int rc = MPI_Alltoall(sendcnt, 1, MPI_INT, recvcnt, 1, MPI_INT, s->comm);
    if (rc == MPI_SUCCESS)
        rc = xchg_sparse_p2p_known(s, recvcnt);
    free(cnt);
    return rc;
}

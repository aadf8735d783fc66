/*
 * p2p_common.c - truncation-safe receives for linear, pairwise and
 * scattered (see p2p_common.h for why and how).
 */
#include "p2p_common.h"

#include <stdint.h>

/* Target of the zero-count receive that drains a message too large. */
static char p2p_sink[1];

int xchg_p2p_recv_probed(xchg_call *c, int src, int tag, MPI_Request *req, const char *who)
{
    MPI_Status st;
    if (req)
        *req = MPI_REQUEST_NULL;
    MPI_Count room = (MPI_Count)c->recvcounts[src] * (MPI_Count)c->rt.size;
    void *dst = xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt);
    if (room <= XCHG_P2P_PROBE_ABOVE) {
        /* A blocking receive reports truncation on its own communicator
         * and consumes the message (MPICH 4.0.2, Open MPI 4.1.4): no
         * probe needed. */
        int err = MPI_Recv(dst, c->recvcounts[src], c->rt.type, src, tag, c->comm, &st);
        int cls = MPI_SUCCESS;
        if (err != MPI_SUCCESS)
            MPI_Error_class(err, &cls);
        if (cls == MPI_ERR_TRUNCATE)
            return xchg_error_code(MPI_ERR_TRUNCATE, "%s: rank %d receives more than %lld "
                                   "bytes from rank %d, all recvcounts[%d] holds", who,
                                   c->rank, (long long)room, src, src);
        return err;
    }
    int err = MPI_Probe(src, tag, c->comm, &st);
    if (err != MPI_SUCCESS)
        return err;
    MPI_Count bytes = 0;
#ifdef XCHG_SMPI
    /* SimGrid SMPI 3.32 aborts in MPI_Get_elements_x: int range there */
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    bytes = n;
#else
    if (MPI_Get_elements_x(&st, MPI_BYTE, &bytes) != MPI_SUCCESS || bytes < 0) {
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        bytes = n;
    }
#endif
    if (bytes > room) {
        /* The one message from src with this tag: nothing else of this call
         * can match first, so the zero-count receive drains exactly it. */
        MPI_Recv(p2p_sink, 0, MPI_BYTE, src, tag, c->comm, MPI_STATUS_IGNORE);
        return xchg_error_code(MPI_ERR_TRUNCATE, "%s: rank %d receives %lld bytes from rank "
                               "%d but recvcounts[%d] holds only %lld", who, c->rank,
                               (long long)bytes, src, src, (long long)room);
    }
    if (req)
        return MPI_Irecv(dst, c->recvcounts[src], c->rt.type, src, tag, c->comm, req);
    return MPI_Recv(dst, c->recvcounts[src], c->rt.type, src, tag, c->comm, MPI_STATUS_IGNORE);
}

void *xchg_p2p_alloc_small(xchg_call *c, size_t bytes, const char *what, int *err)
{
    *err = MPI_SUCCESS;
    void *p = xchg_temp_alloc(c, bytes, what, err);
    if (p || c->temp_limit == SIZE_MAX)
        return p;
    size_t limit = c->temp_limit;
    int merr = MPI_SUCCESS;
    c->temp_limit = SIZE_MAX;
    p = xchg_temp_alloc(c, bytes, what, &merr);
    c->temp_limit = limit;
    if (!p)
        *err = merr;
    return p;
}

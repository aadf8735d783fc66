/*
 * p2p_common.c - truncation-safe receives for linear, pairwise and
 * scattered (see p2p_common.h for why and how).
 */
#include "p2p_common.h"

#include <stdint.h>
#include <stdlib.h>

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
        int err = xchg_mpi_recv(dst, c->recvcounts[src], c->rt.type, src, tag, c->comm, &st);
        int cls = MPI_SUCCESS;
        if (err != MPI_SUCCESS)
            MPI_Error_class(err, &cls);
        if (cls == MPI_ERR_TRUNCATE)
            return xchg_error_code(MPI_ERR_TRUNCATE, "%s: rank %d receives more than %lld "
                                   "bytes from rank %d, all recvcounts[%d] holds", who,
                                   c->rank, (long long)room, src, src);
        return err;
    }
    int err = xchg_mpi_probe(src, tag, c->comm, &st);
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
        xchg_mpi_recv(p2p_sink, 0, MPI_BYTE, src, tag, c->comm, MPI_STATUS_IGNORE);
        return xchg_error_code(MPI_ERR_TRUNCATE, "%s: rank %d receives %lld bytes from rank "
                               "%d but recvcounts[%d] holds only %lld", who, c->rank,
                               (long long)bytes, src, src, (long long)room);
    }
    if (req)
        return MPI_Irecv(dst, c->recvcounts[src], c->rt.type, src, tag, c->comm, req);
    return xchg_mpi_recv(dst, c->recvcounts[src], c->rt.type, src, tag, c->comm, MPI_STATUS_IGNORE);
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

/*
 * Waiting for pre-posted receives.
 *
 * MPICH 4.0 raises a request's error seen by MPI_Wait, MPI_Waitall,
 * MPI_Test ... on MPI_COMM_WORLD's error handler (measured with 4.0.2: a
 * truncated MPI_Irecv on a communicator with MPI_ERRORS_RETURN aborts in
 * MPI_Waitall, and returns MPI_ERR_IN_STATUS with the status's
 * MPI_ERR_TRUNCATE once MPI_COMM_WORLD's handler returns; Open MPI 4.1
 * uses the request's communicator). So while such a wait runs, under
 * MPICH, MPI_COMM_WORLD's handler is MPI_ERRORS_RETURN; nested and
 * concurrent waits share one swap (a count under a lock), and the
 * caller's handler is back when the last one ends. The cost: two local
 * calls, and an error of the caller's own on MPI_COMM_WORLD in another
 * thread during the wait returns its code instead of calling the handler.
 * The swap itself: xchg_world_errors_return (src/progress/block.c).
 */

int xchg_p2p_wait_posted(xchg_call *c, int n, MPI_Request req[], int *bad)
{
    *bad = -1;
    xchg_world_errors_return(1);
    /* auto's refresh progresses here (select.c). On an error the failed
     * request is known by its index (the refresh's MPI_Waitany) or by
     * its status (MPI_Waitall: MPI_ERR_IN_STATUS); MPI frees failed
     * requests (Open MPI) or leaves pending ones active (MPI_ERR_PENDING),
     * which are then waited for again. */
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
    int failed = -1;
    int rc = xchg_waitall_statuses(c, n, req, st, &failed);
    if (rc != MPI_SUCCESS) {
        int first = rc, cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        int scan = st && failed < 0 && cls == MPI_ERR_IN_STATUS;
        *bad = failed;
        rc = MPI_SUCCESS;
        for (;;) {
            int pending = 0;
            for (int i = 0; i < n; i++) {
                if (scan && st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING) {
                    if (*bad < 0)
                        *bad = i;
                    if (rc == MPI_SUCCESS)
                        rc = st[i].MPI_ERROR;
                }
                pending |= req[i] != MPI_REQUEST_NULL;
            }
            if (!pending)
                break;
            int e = xchg_mpi_waitall(n, req, st ? st : MPI_STATUSES_IGNORE);
            if (e == MPI_SUCCESS)
                break;
            MPI_Error_class(e, &cls);
            scan = st && cls == MPI_ERR_IN_STATUS;
            if (!scan) {
                if (rc == MPI_SUCCESS)
                    rc = e;
                break;
            }
        }
        if (rc == MPI_SUCCESS)
            rc = first;
    }
    free(st);
    xchg_world_errors_return(0);
    return rc;
}

void xchg_p2p_drain(int n, MPI_Request req[])
{
    xchg_world_errors_return(1); /* MPICH raises a request's error there */
    for (int i = 0; i < n; i++)
        if (req[i] != MPI_REQUEST_NULL)
            (void)MPI_Wait(&req[i], MPI_STATUS_IGNORE);
    xchg_world_errors_return(0);
}

/*
 * common.c - what the neighbour algorithms share: the completion of
 * pre-posted receives, with their errors as codes that name the block.
 */
#include "neighbor_internal.h"

#include <stdlib.h>

/* The first failed request of statuses st (MPI_ERR_IN_STATUS), or -1. */
static int first_failed(int n, const MPI_Status st[])
{
    for (int i = 0; i < n; i++)
        if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING)
            return i;
    return -1;
}

/* After a failed waitall or testall: every request is completed (MPI
 * leaves the pending ones active; a completed request is MPI_REQUEST_NULL
 * or, persistent, inactive: waiting on it again returns at once), and the
 * error is named. */
static int finish_failed(xchg_nbr_call *c, int n, MPI_Request req[], const int from[],
                         MPI_Status st[], int rc, const char *who)
{
    int cls = MPI_ERR_OTHER, bad = -1;
    MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_IN_STATUS && st && (bad = first_failed(n, st)) >= 0) {
        rc = st[bad].MPI_ERROR;
        MPI_Error_class(rc, &cls);
    }
    for (int i = 0; i < n; i++)
        xchg_mpi_wait(&req[i], MPI_STATUS_IGNORE);
    if (bad >= 0 && from[bad] >= 0 && cls == MPI_ERR_TRUNCATE) {
        int k = from[bad];
        return xchg_error_code(MPI_ERR_TRUNCATE, "%s: rank %d receives more from rank %d than "
                               "its receive block %d holds (recvcounts[%d] = %d)", who,
                               c->rank, c->g->sources[k], k, k, c->recvcounts[k]);
    }
    return rc;
}

int xchg_nbr_complete(xchg_nbr_call *c, int n, MPI_Request req[], const int from[],
                      int *flag, const char *who)
{
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
    xchg_world_errors_return(1); /* MPICH: request errors as codes (progress.h) */
    int rc;
    if (flag) {
        rc = MPI_Testall(n, req, flag, st ? st : MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS)
            *flag = 1; /* completed by finish_failed below */
    } else {
        rc = xchg_mpi_waitall(n, req, st ? st : MPI_STATUSES_IGNORE);
    }
    if (rc != MPI_SUCCESS)
        rc = finish_failed(c, n, req, from, st, rc, who);
    xchg_world_errors_return(0);
    free(st);
    return rc;
}

int xchg_nbr_requests_free(int n, MPI_Request req[])
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        int e = MPI_Request_free(&req[i]);
        if (rc == MPI_SUCCESS)
            rc = e;
    }
    return rc;
}

/*
 * wait.c - the waits of the algorithms. While work is hooked on the
 * communicator (cs->wait_hook: the automatic choice's nonblocking refresh,
 * armed by select.c) they progress it together with the data, so that it
 * overlaps the exchange; otherwise they are the coroutine-aware MPI waits.
 */
#include "progress.h"

#include <stdlib.h>
#include <string.h>

static const xchg_wait_hook *hook_of(const xchg_call *c)
{
    return c->cs ? c->cs->wait_hook : NULL;
}

/* Waits for the data requests req[0..n) together with the hooked work's
 * two requests in one MPI_Waitany over all of them, advancing the work
 * each time one of its requests completes, until the work is done or
 * (with any_data) one data request completes. Blocking waits, not a
 * polling loop: MPI_Test* costs per request tested (and SMPI charges it),
 * so polling a large request array would delay every completion. The
 * work's requests come first in the array: MPI_Waitany returns the first
 * completed request it finds (SMPI's the lowest index), so with them
 * after the data a completed round of the work waited behind every data
 * request completing in the same burst, and was never reaped before the
 * data ran out (measured: an agreement at 256 simulated ranks did not
 * finish its first round in 8 batches of the MPICH model). */
static int wait_with_hook(xchg_call *c, const xchg_wait_hook *h, int n, MPI_Request req[],
                          int any_data, int *index, int *failed)
{
    int done = 0;
    int rc = h->start(c);
    if (rc == MPI_SUCCESS)
        rc = h->advance(c, &done);
    if (rc != MPI_SUCCESS || done || n == 0)
        return MPI_SUCCESS; /* a failed refresh is reported by its owner */
    MPI_Request small[64];
    MPI_Request *all = (size_t)n + 2 <= sizeof small / sizeof small[0]
                           ? small
                           : malloc(sizeof(MPI_Request) * ((size_t)n + 2));
    if (!all)
        return MPI_SUCCESS; /* the caller's plain wait does the data */
    memcpy(all + 2, req, sizeof(MPI_Request) * (size_t)n);
    int pending = 0;
    for (int i = 0; i < n; i++)
        pending += req[i] != MPI_REQUEST_NULL;
    MPI_Request *work = h->requests(c);
    while (!done && pending > 0) {
        all[0] = work[0];
        all[1] = work[1];
        int idx = MPI_UNDEFINED;
        rc = xchg_mpi_waitany(n + 2, all, &idx, MPI_STATUS_IGNORE);
        work[0] = all[0];
        work[1] = all[1];
        if (rc != MPI_SUCCESS && failed && idx != MPI_UNDEFINED && idx >= 2)
            *failed = idx - 2; /* the data request that failed */
        if (rc != MPI_SUCCESS || idx == MPI_UNDEFINED)
            break;
        if (idx >= 2) {
            pending--;
            if (any_data) {
                *index = idx - 2;
                break;
            }
        } else if (h->advance(c, &done) != MPI_SUCCESS) {
            done = 1;
        }
    }
    memcpy(req, all + 2, sizeof(MPI_Request) * (size_t)n);
    if (all != small)
        free(all);
    return rc;
}

void xchg_poll(xchg_call *c)
{
    const xchg_wait_hook *h = hook_of(c);
    if (h)
        h->poll(c);
}

int xchg_call_waitall(xchg_call *c, int n, MPI_Request req[])
{
    int failed;
    return xchg_waitall_statuses(c, n, req, NULL, &failed);
}

int xchg_waitall_statuses(xchg_call *c, int n, MPI_Request req[], MPI_Status statuses[],
                          int *failed)
{
    const xchg_wait_hook *h = hook_of(c);
    *failed = -1;
    if (h) {
        int idx = MPI_UNDEFINED;
        int rc = wait_with_hook(c, h, n, req, 0, &idx, failed);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return xchg_mpi_waitall(n, req, statuses ? statuses : MPI_STATUSES_IGNORE);
}

int xchg_waitany(xchg_call *c, int n, MPI_Request req[], int *index)
{
    const xchg_wait_hook *h = hook_of(c);
    if (h) {
        *index = MPI_UNDEFINED;
        int rc = wait_with_hook(c, h, n, req, 1, index, NULL);
        if (rc != MPI_SUCCESS || *index != MPI_UNDEFINED)
            return rc;
    }
    return xchg_mpi_waitany(n, req, index, MPI_STATUS_IGNORE);
}

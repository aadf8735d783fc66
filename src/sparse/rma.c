/*
 * rma.c - one-sided census: every sender puts its count into slot [sender]
 * of a P-int window at the receiver (one fence epoch), then the data moves
 * point-to-point with exact sources, as in pex.
 *
 * The window is created once per communicator and cached (collective on
 * the first rma call, freed with the communicator). A slot holds the count
 * itself: zero-count entries are never sent, so a nonzero slot is exactly
 * "this rank sends to me", whatever the payload's byte size (a datatype of
 * size 0 included); no scan of data bytes is involved.
 *
 * Reuse across calls: the slots are cleared locally before the opening
 * fence, and puts of the next call reach this window only after this rank
 * has called that call's opening fence (MPI_Win_fence semantics).
 */
#include "sparse_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The lock guards the list only: it is never held across an MPI call that
 * may wait for other ranks (MPI_Win_free is collective). Holding it there
 * deadlocks two threads freeing two communicators in opposite orders on
 * two ranks: each waits in MPI_Win_free for a partner blocked on the lock. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static xchg_sparse_state *live; /* states holding a window, newest first */
static int self_keyval = MPI_KEYVAL_INVALID;

static int free_all_windows(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm; (void)keyval; (void)val; (void)extra;
    /* MPI_Finalize: take the whole list, then free outside the lock */
    pthread_mutex_lock(&live_lock);
    xchg_sparse_state *list = live;
    live = NULL;
    pthread_mutex_unlock(&live_lock);
    for (xchg_sparse_state *ss = list; ss; ss = ss->next_live)
        if (ss->win != MPI_WIN_NULL)
            MPI_Win_free(&ss->win);
    return MPI_SUCCESS;
}

static int live_add(xchg_sparse_state *ss)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&live_lock);
    if (self_keyval == MPI_KEYVAL_INVALID) {
        rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_all_windows, &self_keyval,
                                    NULL);
        if (rc == MPI_SUCCESS)
            rc = MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL);
    }
    if (rc == MPI_SUCCESS) {
        ss->next_live = live;
        live = ss;
    }
    pthread_mutex_unlock(&live_lock);
    return rc;
}

void xchg_sparse_window_free(xchg_sparse_state *ss)
{
    pthread_mutex_lock(&live_lock);
    for (xchg_sparse_state **p = &live; *p; p = &(*p)->next_live)
        if (*p == ss) {
            *p = ss->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
    /* unlinked: only this state's owner (its communicator's delete
     * callback) reaches its window now */
    if (ss->win != MPI_WIN_NULL)
        MPI_Win_free(&ss->win);
}

static int window_get(xchg_sparse_call *s)
{
    xchg_sparse_state *ss = s->ss;
    if (ss->win != MPI_WIN_NULL)
        return MPI_SUCCESS;
    /* 64-byte aligned: MPICH 4.0.2 ch4:ucx misplaces puts into windows at
     * unaligned bases (see rma_common.c). All ranks agree before the
     * collective MPI_Win_create, so a local failure cannot hang the others. */
    void *mem = NULL;
    size_t bytes = ((size_t)s->size * sizeof(int) + 63) / 64 * 64;
    int bad = posix_memalign(&mem, 64, bytes) != 0, anybad = 0;
    int rc = MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, s->comm);
    if (rc != MPI_SUCCESS || anybad) {
        free(mem);
        return rc != MPI_SUCCESS ? rc
               : xchg_error_code(MPI_ERR_NO_MEM, "rma: no memory for the %d-int window "
                                 "on %s", s->size, bad ? "this rank" : "another rank");
    }
    ss->wincounts = mem;
    ss->winsize = s->size;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    rc = MPI_Win_create(ss->wincounts, (MPI_Aint)s->size * (MPI_Aint)sizeof(int),
                            (int)sizeof(int), info, s->comm, &ss->win);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_set_errhandler(ss->win, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = live_add(ss);
    return rc;
}

int xchg_sparse_rma(xchg_sparse_call *s)
{
    int rc = window_get(s);
    if (rc != MPI_SUCCESS)
        return rc;
    xchg_sparse_state *ss = s->ss;
    memset(ss->wincounts, 0, (size_t)s->size * sizeof(int));
    rc = MPI_Win_fence(MPI_MODE_NOPRECEDE, ss->win);
    for (int i = 0; i < s->ndest && rc == MPI_SUCCESS; i++)
        if (xchg_sparse_remote(s, i))
            rc = MPI_Put(&s->counts[i], 1, MPI_INT, s->dests[i], (MPI_Aint)s->rank, 1,
                         MPI_INT, ss->win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_fence(MPI_MODE_NOSUCCEED, ss->win);
    if (rc == MPI_SUCCESS)
        rc = xchg_sparse_p2p_known(s, ss->wincounts);
    return rc;
}

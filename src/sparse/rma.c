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

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static xchg_sparse_state *live; /* states holding a window, newest first */
static int self_keyval = MPI_KEYVAL_INVALID;

static int free_all_windows(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm; (void)keyval; (void)val; (void)extra;
    pthread_mutex_lock(&live_lock);
    for (xchg_sparse_state *ss = live; ss; ss = ss->next_live)
        if (ss->win != MPI_WIN_NULL)
            MPI_Win_free(&ss->win);
    live = NULL;
    pthread_mutex_unlock(&live_lock);
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
    if (ss->win != MPI_WIN_NULL)
        MPI_Win_free(&ss->win);
    pthread_mutex_unlock(&live_lock);
}

static int window_get(xchg_sparse_call *s)
{
    xchg_sparse_state *ss = s->ss;
    if (ss->win != MPI_WIN_NULL)
        return MPI_SUCCESS;
    ss->wincounts = calloc((size_t)s->size, sizeof(int));
    if (!ss->wincounts)
        return xchg_error_code(MPI_ERR_NO_MEM, "rma: no memory for the %d-int window",
                               s->size);
    ss->winsize = s->size;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    int rc = MPI_Win_create(ss->wincounts, (MPI_Aint)s->size * (MPI_Aint)sizeof(int),
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

/*
 * send_window.c - a bounded window of sends: the items of a list sent in
 * order with at most `slots` requests in flight, a slot refilled as soon
 * as its send completes.
 *
 * Why: a rank that posts one request per partner at once overflows the
 * NIC's match list at a few thousand ranks (TuNA's warning for
 * Slingshot), so the direct exchanges bound what they post
 * (XCHG_MAX_INFLIGHT) and take their receives by probe. The sparse
 * exchanges (pex, rsx under the bound; nbx always, its synchronous sends)
 * and the neighbour exchange's `direct` share this window; the caller's
 * loop polls it between its probes, so a rank never blocks while it has
 * sends to post or messages to take and no cycle of waiting ranks forms.
 */
#include "progress.h"

/* Every slot free, slot 0 first. */
static void free_all(xchg_send_window *w)
{
    w->nfree = w->slots;
    for (int k = 0; k < w->slots; k++)
        w->freeslot[k] = w->slots - 1 - k;
    w->inflight = 0;
}

void xchg_send_window_init(xchg_send_window *w, int slots, int n, MPI_Request *req, int *ints,
                           xchg_window_post post, void *arg)
{
    w->req = req;
    w->idx = ints;
    w->freeslot = ints + slots;
    w->slots = slots;
    w->next = 0;
    w->n = n;
    w->err = MPI_SUCCESS;
    w->post = post;
    w->arg = arg;
    for (int k = 0; k < slots; k++)
        req[k] = MPI_REQUEST_NULL;
    free_all(w);
}

/* Posts the next items while a slot is free; items that send nothing are
 * passed over. A failed post gives its slot back and is remembered: the
 * items after it still go out, so the partners waiting for them are not
 * left hanging. */
static int fill(xchg_send_window *w)
{
    int posted = 0;
    while (w->next < w->n && w->nfree > 0) {
        int k = w->freeslot[w->nfree - 1];
        int e = w->post(w->arg, w->next++, &w->req[k]);
        if (e != MPI_SUCCESS) {
            w->req[k] = MPI_REQUEST_NULL;
            if (w->err == MPI_SUCCESS)
                w->err = e;
            posted = 1;
        } else if (w->req[k] != MPI_REQUEST_NULL) {
            w->nfree--;
            w->inflight++;
            posted = 1;
        }
    }
    return posted;
}

int xchg_send_window_start(xchg_send_window *w)
{
    fill(w);
    return w->err;
}

int xchg_send_window_progress(xchg_send_window *w, int *moved)
{
    int any = 0;
    if (w->inflight > 0) {
        int nd = 0;
        int e = MPI_Testsome(w->slots, w->req, &nd, w->idx, MPI_STATUSES_IGNORE);
        if (e != MPI_SUCCESS) {
            /* a send failed: the others are completed (their partners
             * match them) and it is reported */
            xchg_send_window_finish(w);
            if (w->err == MPI_SUCCESS)
                w->err = e;
            any = 1;
        } else if (nd != MPI_UNDEFINED && nd > 0) {
            for (int d = 0; d < nd; d++)
                w->freeslot[w->nfree++] = w->idx[d];
            w->inflight -= nd;
            any = 1;
        }
    }
    any |= fill(w);
    if (moved)
        *moved = any;
    return w->err;
}

int xchg_send_window_done(const xchg_send_window *w)
{
    return w->next >= w->n && w->inflight == 0;
}

void xchg_send_window_finish(xchg_send_window *w)
{
    for (int k = 0; k < w->slots; k++)
        if (w->req[k] != MPI_REQUEST_NULL)
            (void)xchg_mpi_wait(&w->req[k], MPI_STATUS_IGNORE);
    free_all(w);
}

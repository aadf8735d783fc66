/*
 * nbx.c - nonblocking consensus (Hoefler, Siebert, Lumsdaine, PPoPP 2010).
 *
 * Synchronous sends to every destination; meanwhile receive whatever
 * arrives (Iprobe on MPI_ANY_SOURCE). A synchronous send completes only
 * once its receive has started, so when all of a rank's sends are
 * complete its messages are all taken: it enters a nonblocking barrier
 * and keeps receiving. When the barrier completes every rank has had all
 * its messages taken, so nothing more can come: done. No P-sized data.
 *
 * The barrier is libxchg's nonblocking barrier (src/core/ibarrier.c):
 * MPI_Ibarrier, or a dissemination barrier of Isend/Irecv on the private
 * communicator when built with XCHG_SMPI (SimGrid SMPI 3.32's MPI_Ibarrier
 * lets a rank leave before all have entered) or when
 * XCHG_NBX_BARRIER=dissemination is set (same on all ranks), which the
 * tests use to check it on real MPI.
 *
 * Back-to-back calls: the barrier makes ranks at most one sparse call
 * apart, and calls alternate between two tag sets, so an Iprobe of call k
 * never sees a message of call k+1.
 */
#include "sparse_internal.h"

#include <stdlib.h>
#include <string.h>

/* XCHG_NBX_BARRIER: the census's barrier (nbx_loc's too). */
static const xchg_setting_def barrier = {"XCHG_NBX_BARRIER", XCHG_KIND_BARRIER, 0, 1, 0, NULL,
                                         NULL, "ibarrier"};
const xchg_setting_def *const xchg_sparse_nbx_settings[] = {&barrier, NULL};

int xchg_sparse_nbx_dissemination(const xchg_settings *s)
{
    return (int)xchg_setting_of(s, &barrier);
}

int xchg_sparse_nbx(xchg_sparse_call *s)
{
    xchg_ibarrier bar;
    /* At most XCHG_MAX_INFLIGHT synchronous sends in flight, refilled as
     * they are matched; the barrier starts once all are posted and
     * matched. */
    xchg_sparse_sends ss;
    int rc = xchg_sparse_sends_open(s, 1, &ss);
    if (!ss.w.req)
        return rc; /* no memory: nothing posted */
    if (rc == MPI_SUCCESS)
        rc = xchg_sparse_deliver_self(s);
    int in_barrier = 0, done = 0;
    while (rc == MPI_SUCCESS && !done) {
        int flag = 0;
        MPI_Status st;
        rc = MPI_Iprobe(MPI_ANY_SOURCE, s->tag_data, s->comm, &flag, &st);
        if (rc == MPI_SUCCESS && flag) {
            rc = xchg_sparse_recv_probed(s, &st);
            continue; /* drain what is there before testing */
        }
        if (rc != MPI_SUCCESS)
            break;
        if (!in_barrier) {
            rc = xchg_send_window_progress(&ss.w, NULL);
            if (rc == MPI_SUCCESS && xchg_send_window_done(&ss.w)) {
                rc = xchg_ibarrier_start(&bar, s->comm, s->tag_barrier,
                                         xchg_sparse_nbx_dissemination(&s->cs->settings));
                in_barrier = 1;
            }
        } else {
            rc = xchg_ibarrier_test(&bar, &done);
        }
    }
    if (in_barrier && !done)
        xchg_ibarrier_free(&bar);
    xchg_sparse_sends_close(&ss);
    return rc;
}

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
 * The barrier is one pair of functions (start/test). By default it is
 * MPI_Ibarrier; a dissemination barrier from Isend/Irecv/Test on the
 * private communicator replaces it when built with XCHG_SMPI (SimGrid SMPI
 * 3.32's MPI_Ibarrier lets a rank leave before all have entered) or when
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

typedef struct nbx_barrier {
    int dissemination;
    MPI_Request req[2];
    int round, rounds;   /* dissemination: current round, ceil(log2 P) */
    char sbuf, rbuf;
} nbx_barrier;

static int use_dissemination(const xchg_sparse_call *s)
{
#ifdef XCHG_SMPI
    (void)s;
    return 1;
#else
    return s->cs->settings.nbx_dissemination; /* XCHG_NBX_BARRIER, agreed */
#endif
}

/* Round r: send to rank+2^r, receive from rank-2^r. After ceil(log2 P)
 * rounds every rank has heard, directly or not, from every other. */
static int dissem_post(xchg_sparse_call *s, nbx_barrier *b)
{
    int P = s->size, d = 1 << b->round;
    int to = (s->rank + d) % P, from = (s->rank - d % P + P) % P;
    int tag = s->tag_barrier + b->round;
    int rc = MPI_Irecv(&b->rbuf, 1, MPI_CHAR, from, tag, s->comm, &b->req[0]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Isend(&b->sbuf, 1, MPI_CHAR, to, tag, s->comm, &b->req[1]);
    return rc;
}

static int barrier_start(xchg_sparse_call *s, nbx_barrier *b)
{
    if (!b->dissemination)
        return MPI_Ibarrier(s->comm, &b->req[0]);
    b->round = 0;
    b->rounds = 0;
    while ((1 << b->rounds) < s->size)
        b->rounds++;
    if (b->rounds > XCHG_SPARSE_BARRIER_ROUNDS)
        return xchg_error_code(MPI_ERR_INTERN, "nbx: too many barrier rounds");
    b->sbuf = 0;
    b->req[0] = b->req[1] = MPI_REQUEST_NULL;
    return b->rounds ? dissem_post(s, b) : MPI_SUCCESS;
}

static int barrier_test(xchg_sparse_call *s, nbx_barrier *b, int *done)
{
    if (!b->dissemination)
        return MPI_Test(&b->req[0], done, MPI_STATUS_IGNORE);
    *done = 0;
    while (b->round < b->rounds) {
        int flag = 0;
        int rc = MPI_Testall(2, b->req, &flag, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS || !flag)
            return rc;
        if (++b->round < b->rounds && (rc = dissem_post(s, b)) != MPI_SUCCESS)
            return rc;
    }
    *done = 1;
    return MPI_SUCCESS;
}

int xchg_sparse_nbx(xchg_sparse_call *s)
{
    nbx_barrier bar;
    memset(&bar, 0, sizeof bar);
    bar.dissemination = use_dissemination(s);
    int nsend = 0;
    MPI_Request *reqs = malloc((s->ndest ? (size_t)s->ndest : 1) * sizeof *reqs);
    if (!reqs)
        return xchg_error_code(MPI_ERR_NO_MEM, "nbx: no memory for %d requests", s->ndest);
    int rc = xchg_sparse_isend_all(s, 1, reqs, &nsend);
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
            int sent = 0;
            rc = MPI_Testall(nsend, reqs, &sent, MPI_STATUSES_IGNORE);
            if (rc == MPI_SUCCESS && sent) {
                rc = barrier_start(s, &bar);
                in_barrier = 1;
            }
        } else {
            rc = barrier_test(s, &bar, &done);
        }
    }
    free(reqs);
    return rc;
}

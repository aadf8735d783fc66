/*
 * ibarrier.c - the nonblocking barrier libxchg uses (ibarrier.h).
 *
 * MPI_Ibarrier by default. Under SimGrid SMPI 3.32 (XCHG_SMPI) MPI_Ibarrier
 * is not a barrier (a rank may complete it before all have entered), so
 * there, or when XCHG_NBX_BARRIER=dissemination is set (the same on all
 * ranks; the tests use it to check this code on real MPI), it is a
 * dissemination barrier of Isend/Irecv on the caller's communicator:
 * round r sends to rank+2^r and receives from rank-2^r; after ceil(log2 P)
 * rounds every rank has heard, directly or not, from every other.
 */
#include "ibarrier.h"
#include "core.h"

#include <stdlib.h>
#include <string.h>

/* The dissemination barrier where asked (XCHG_NBX_BARRIER=dissemination,
 * agreed per communicator by the caller's settings), and always under SMPI. */
static int use_dissemination(int asked)
{
#ifdef XCHG_SMPI
    (void)asked;
    return 1;
#else
    return asked;
#endif
}

static int dissem_post(xchg_ibarrier *b)
{
    int d = 1 << b->round;
    int to = (b->rank + d) % b->size, from = (b->rank - d % b->size + b->size) % b->size;
    int tag = b->tag + b->round;
    int rc = MPI_Irecv(&b->rbuf, 1, MPI_CHAR, from, tag, b->comm, &b->req[0]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Isend(&b->sbuf, 1, MPI_CHAR, to, tag, b->comm, &b->req[1]);
    return rc;
}

int xchg_ibarrier_start(xchg_ibarrier *b, MPI_Comm comm, int tag, int dissemination)
{
    memset(b, 0, sizeof *b);
    b->req[0] = b->req[1] = MPI_REQUEST_NULL;
    b->comm = comm;
    b->tag = tag;
    b->dissemination = use_dissemination(dissemination);
    if (!b->dissemination)
        return MPI_Ibarrier(comm, &b->req[0]);
    int rc = MPI_Comm_rank(comm, &b->rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(comm, &b->size);
    if (rc != MPI_SUCCESS)
        return rc;
    while (b->rounds < XCHG_IBARRIER_TAGS && (1 << b->rounds) < b->size)
        b->rounds++;
    return b->rounds ? dissem_post(b) : MPI_SUCCESS;
}

int xchg_ibarrier_test(xchg_ibarrier *b, int *done)
{
    *done = 0;
    if (!b->dissemination)
        return MPI_Test(&b->req[0], done, MPI_STATUS_IGNORE);
    while (b->round < b->rounds) {
        int flag = 0;
        int rc = MPI_Testall(2, b->req, &flag, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS || !flag)
            return rc;
        if (++b->round < b->rounds && (rc = dissem_post(b)) != MPI_SUCCESS)
            return rc;
    }
    *done = 1;
    return MPI_SUCCESS;
}

void xchg_ibarrier_free(xchg_ibarrier *b)
{
    /* An abandoned barrier (error elsewhere): release its requests. A
     * pending receive is cancelled; a pending send is left to complete.
     * MPI_Ibarrier's request can be neither freed nor cancelled (MPI-3.1
     * 5.12) and waiting could hang: it is left. */
    if (!b->dissemination)
        return;
    for (int i = 0; i < 2; i++) {
        if (b->req[i] == MPI_REQUEST_NULL)
            continue;
        if (i == 0) {
            MPI_Cancel(&b->req[i]);
            MPI_Wait(&b->req[i], MPI_STATUS_IGNORE);
        } else {
            MPI_Request_free(&b->req[i]);
        }
    }
}

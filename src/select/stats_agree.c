/*
 * stats_agree.c - the agreement of the automatic choice: one allreduce of a fixed
 * struct of fields (MAX on some, SUM on the others), blocking or
 * nonblocking, by recursive doubling over point-to-point messages.
 *
 * Why our own and not MPI_(I)allreduce: the fields mix MAX and SUM, which
 * one predefined MPI_Op cannot do, and the nonblocking form must progress
 * while the exchange waits for its data (xchg_call_waitall polls it), under
 * real MPI and SimGrid SMPI alike. SMPI 3.32's MPI_Iallreduce posts
 * 2(P-1) messages per rank at once (a linear algorithm, read in SimGrid's
 * smpi_nbc_impl.cpp), unlike the log P schedules of MPICH and Open MPI, so
 * it would not model what a real library does. Recursive doubling costs
 * ceil(log2 P) rounds (plus two for the ranks folded in when P is not a
 * power of two) of one small message each way.
 *
 * Messages use their own tag on the private communicator. A pair of ranks
 * meets in at most one round of an agreement, and consecutive agreements
 * match in order (MPI's non-overtaking rule), so a fast rank that starts
 * the next agreement early cannot be confused with this one.
 */
#include "select_internal.h"

#include <string.h>

void xchg_agree_combine(long long *acc, const long long *in)
{
    for (int i = 0; i < XCHG_AF_NMAX; i++)
        if (in[i] > acc[i])
            acc[i] = in[i];
    for (int i = XCHG_AF_NMAX; i < XCHG_AF_COUNT; i++)
        acc[i] += in[i];
}

void xchg_agree_combine_extra(long long *acc, const long long *in, int nfields)
{
    xchg_agree_combine(acc, in);
    for (int i = XCHG_AF_COUNT; i < nfields; i++)
        if (in[i] > acc[i])
            acc[i] = in[i];
}

/* Stages of one agreement. */
enum { ST_IDLE = 0, ST_PRE, ST_ROUND, ST_POST, ST_DONE };

static int post_round(xchg_agree_op *op)
{
    int nr = op->newrank ^ op->mask;
    int peer = nr < op->rem ? 2 * nr + 1 : nr + op->rem;
    int rc = MPI_Irecv(op->in, op->nfields, MPI_LONG_LONG, peer, XCHG_TAG_AGREE, op->comm,
                       &op->req[0]);
    if (rc == MPI_SUCCESS)
        rc = MPI_Isend(op->acc, op->nfields, MPI_LONG_LONG, peer, XCHG_TAG_AGREE, op->comm,
                       &op->req[1]);
    return rc;
}

/* Posts what the stage it enters needs; may finish at once. */
static int enter(xchg_agree_op *op, int stage)
{
    op->stage = stage;
    op->req[0] = op->req[1] = MPI_REQUEST_NULL;
    switch (stage) {
    case ST_PRE:
        /* P not a power of two: the first 2*rem ranks pair up, the even one
         * hands its fields to the odd one and sits out the rounds. */
        if (op->rank % 2 == 0)
            return MPI_Isend(op->acc, op->nfields, MPI_LONG_LONG, op->rank + 1,
                             XCHG_TAG_AGREE, op->comm, &op->req[1]);
        return MPI_Irecv(op->in, op->nfields, MPI_LONG_LONG, op->rank - 1, XCHG_TAG_AGREE,
                         op->comm, &op->req[0]);
    case ST_ROUND:
        return post_round(op);
    case ST_POST:
        if (op->rank % 2 == 0)
            return MPI_Irecv(op->acc, op->nfields, MPI_LONG_LONG, op->rank + 1,
                             XCHG_TAG_AGREE, op->comm, &op->req[0]);
        return MPI_Isend(op->acc, op->nfields, MPI_LONG_LONG, op->rank - 1, XCHG_TAG_AGREE,
                         op->comm, &op->req[1]);
    default:
        return MPI_SUCCESS;
    }
}

/* The stage after a completed one. */
static int next_stage(xchg_agree_op *op)
{
    switch (op->stage) {
    case ST_PRE:
        if (op->rank % 2 == 0)
            return ST_POST; /* wait for the result */
        xchg_agree_combine_extra(op->acc, op->in, op->nfields);
        return op->p2 > 1 ? ST_ROUND : ST_POST;
    case ST_ROUND:
        xchg_agree_combine_extra(op->acc, op->in, op->nfields);
        op->mask <<= 1;
        if (op->mask < op->p2)
            return ST_ROUND;
        return op->rank < 2 * op->rem ? ST_POST : ST_DONE;
    default:
        return ST_DONE;
    }
}

int xchg_agree_start_extra(xchg_agree_op *op, MPI_Comm comm, int rank, int size,
                           const long long *mine, int nextra)
{
    memset(op, 0, sizeof *op);
    op->comm = comm;
    op->rank = rank;
    op->size = size;
    op->nfields = XCHG_AF_COUNT + (nextra < 0 ? 0
                                   : nextra > XCHG_AGREE_MAX_EXTRA ? XCHG_AGREE_MAX_EXTRA
                                                                   : nextra);
    memcpy(op->acc, mine, sizeof(long long) * (size_t)op->nfields);
    op->p2 = 1;
    while (op->p2 * 2 <= size)
        op->p2 *= 2;
    op->rem = size - op->p2;
    op->mask = 1;
    if (rank < 2 * op->rem)
        op->newrank = rank % 2 ? rank / 2 : -1;
    else
        op->newrank = rank - op->rem;
    op->active = 1;
    if (rank < 2 * op->rem)
        return enter(op, ST_PRE);
    return enter(op, op->p2 > 1 ? ST_ROUND : ST_DONE);
}

int xchg_agree_start(xchg_agree_op *op, MPI_Comm comm, int rank, int size,
                     const long long *mine)
{
    return xchg_agree_start_extra(op, comm, rank, size, mine, 0);
}

int xchg_agree_progress(xchg_agree_op *op, int blocking, int *done)
{
    int rc = MPI_SUCCESS;
    while (op->active && op->stage != ST_DONE) {
        int flag = 0;
        if (blocking) {
            rc = xchg_mpi_waitall(2, op->req, MPI_STATUSES_IGNORE);
            flag = 1;
        } else {
            /* one MPI_Test per poll while the receive is pending (a test
             * costs time per request; the small send completes early) */
            for (int i = 0; i < 2 && rc == MPI_SUCCESS; i++) {
                flag = 1;
                if (op->req[i] != MPI_REQUEST_NULL)
                    rc = MPI_Test(&op->req[i], &flag, MPI_STATUS_IGNORE);
                if (!flag)
                    break;
            }
        }
        if (rc != MPI_SUCCESS) {
            op->active = 0; /* an MPI failure: nothing sensible left to wait for */
            break;
        }
        if (!flag)
            break;
        if ((rc = enter(op, next_stage(op))) != MPI_SUCCESS) {
            op->active = 0;
            break;
        }
    }
    *done = !op->active || op->stage == ST_DONE;
    return rc;
}

int xchg_agree_advance(xchg_agree_op *op, int *done)
{
    int rc = MPI_SUCCESS;
    while (op->active && op->stage != ST_DONE && op->req[0] == MPI_REQUEST_NULL &&
           op->req[1] == MPI_REQUEST_NULL) {
        if ((rc = enter(op, next_stage(op))) != MPI_SUCCESS) {
            op->active = 0;
            break;
        }
    }
    *done = !op->active || op->stage == ST_DONE;
    return rc;
}

int xchg_agree_blocking(MPI_Comm comm, int rank, int size, long long *fields)
{
    xchg_agree_op op;
    int done = 0;
    int rc = xchg_agree_start(&op, comm, rank, size, fields);
    if (rc == MPI_SUCCESS)
        rc = xchg_agree_progress(&op, 1, &done);
    if (rc == MPI_SUCCESS)
        memcpy(fields, op.acc, sizeof(long long) * XCHG_AF_COUNT);
    return rc;
}

/*
 * block.c - the blocking MPI calls of the algorithms, coroutine-aware.
 *
 * Outside a coroutine (the blocking xchg_alltoallv) each xchg_mpi_* is the
 * MPI call of the same name and signature. Inside one (a nonblocking
 * exchange, coro.h) it starts the nonblocking form and tests it, yielding
 * between tests, so the caller of xchg_test/xchg_wait regains control
 * whenever the exchange would wait. Calls with no nonblocking form (window
 * creation and synchronisation of rma_fence/rma_lock, the node
 * communicators' splits of hierarchical, made once per communicator) are
 * made at the exchange's start instead (src/api/persistent.c, blocking_start):
 * docs/user-guide.md "Nonblocking use".
 */
#include "progress.h"
#include "coro.h"

#include <pthread.h>

/* MPICH 4.0 raises a request's completion error (MPI_Wait*, MPI_Test*) on
 * MPI_COMM_WORLD's error handler, not the request's communicator
 * (p2p_common.c); a blocking MPI_Recv reports truncation on its own
 * communicator. So the coroutine form of a receive, a test loop, runs
 * with MPI_COMM_WORLD's handler returning, as xchg_p2p_wait_posted does:
 * nested and concurrent users share one swap (a count under a lock). */
#if defined(MPICH_VERSION) && !defined(XCHG_SMPI)
#define SWAP_WORLD_HANDLER 1
static pthread_mutex_t swap_lock = PTHREAD_MUTEX_INITIALIZER;
static int swap_depth;
static MPI_Errhandler swap_saved = MPI_ERRHANDLER_NULL;
#endif

void xchg_world_errors_return(int on)
{
#ifdef SWAP_WORLD_HANDLER
    pthread_mutex_lock(&swap_lock);
    if (on && swap_depth++ == 0) {
        if (MPI_Comm_get_errhandler(MPI_COMM_WORLD, &swap_saved) == MPI_SUCCESS)
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        else
            swap_saved = MPI_ERRHANDLER_NULL;
    } else if (!on && --swap_depth == 0 && swap_saved != MPI_ERRHANDLER_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, swap_saved);
        MPI_Errhandler_free(&swap_saved);
        swap_saved = MPI_ERRHANDLER_NULL;
    }
    pthread_mutex_unlock(&swap_lock);
#else
    (void)on;
#endif
}

int xchg_mpi_waitall(int n, MPI_Request req[], MPI_Status st[])
{
    if (!xchg_coro_inside())
        return MPI_Waitall(n, req, st);
    for (;;) {
        int flag = 0, rc = MPI_Testall(n, req, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        xchg_coro_yield();
    }
}

int xchg_mpi_wait(MPI_Request *req, MPI_Status *st)
{
    if (!xchg_coro_inside())
        return MPI_Wait(req, st);
    /* Always a status: SimGrid SMPI (3.32 to 4.1) leaves flag unset when
     * MPI_Test sees MPI_REQUEST_NULL with MPI_STATUS_IGNORE, and pairwise
     * waits on an empty block's null send request: that loop never ended. */
    MPI_Status local;
    if (st == MPI_STATUS_IGNORE)
        st = &local;
    for (;;) {
        int flag = 0, rc = MPI_Test(req, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        xchg_coro_yield();
    }
}

int xchg_mpi_waitany(int n, MPI_Request req[], int *index, MPI_Status *st)
{
    if (!xchg_coro_inside())
        return MPI_Waitany(n, req, index, st);
    for (;;) {
        int flag = 0, rc = MPI_Testany(n, req, index, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        xchg_coro_yield();
    }
}

int xchg_mpi_waitsome(int n, MPI_Request req[], int *outcount, int idx[], MPI_Status st[])
{
    if (!xchg_coro_inside())
        return MPI_Waitsome(n, req, outcount, idx, st);
    for (;;) {
        int rc = MPI_Testsome(n, req, outcount, idx, st);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return rc;
        xchg_coro_yield();
    }
}

int xchg_mpi_recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                  MPI_Status *st)
{
    if (!xchg_coro_inside())
        return MPI_Recv(buf, count, type, src, tag, comm, st);
    MPI_Request r;
    int rc = MPI_Irecv(buf, count, type, src, tag, comm, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    xchg_world_errors_return(1);
    MPI_Status local;
    rc = xchg_mpi_wait(&r, st == MPI_STATUS_IGNORE ? &local : st);
    xchg_world_errors_return(0);
    return rc;
}

void xchg_poll_idle(void)
{
    if (xchg_coro_inside())
        xchg_coro_yield();
}

int xchg_mpi_probe(int src, int tag, MPI_Comm comm, MPI_Status *st)
{
    if (!xchg_coro_inside())
        return MPI_Probe(src, tag, comm, st);
    for (;;) {
        int flag = 0, rc = MPI_Iprobe(src, tag, comm, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        xchg_coro_yield();
    }
}

int xchg_mpi_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag,
                      void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                      MPI_Comm comm, MPI_Status *st)
{
    if (!xchg_coro_inside())
        return MPI_Sendrecv(sbuf, scount, stype, dst, stag, rbuf, rcount, rtype, src, rtag,
                            comm, st);
    MPI_Request r[2];
    MPI_Status s[2];
    int rc = MPI_Irecv(rbuf, rcount, rtype, src, rtag, comm, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Isend(sbuf, scount, stype, dst, stag, comm, &r[1]);
    if (rc != MPI_SUCCESS) {
        MPI_Cancel(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        return rc;
    }
    xchg_world_errors_return(1);
    rc = xchg_mpi_waitall(2, r, s);
    xchg_world_errors_return(0);
    if (st != MPI_STATUS_IGNORE)
        *st = s[0];
    if (rc == MPI_ERR_IN_STATUS)
        rc = s[0].MPI_ERROR != MPI_SUCCESS ? s[0].MPI_ERROR : s[1].MPI_ERROR;
    return rc;
}

/* A nonblocking collective started by `start`, then waited for. */
#define NB_COLL(call)                                                                     \
    do {                                                                                  \
        MPI_Request r;                                                                    \
        int rc = call;                                                                    \
        return rc != MPI_SUCCESS ? rc : xchg_mpi_wait(&r, MPI_STATUS_IGNORE);             \
    } while (0)

int xchg_mpi_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm)
{
    if (!xchg_coro_inside())
        return MPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    NB_COLL(MPI_Iallreduce(sbuf, rbuf, count, type, op, comm, &r));
}

int xchg_mpi_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    if (!xchg_coro_inside())
        return MPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    NB_COLL(MPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r));
}

int xchg_mpi_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (!xchg_coro_inside())
        return MPI_Bcast(buf, count, type, root, comm);
    NB_COLL(MPI_Ibcast(buf, count, type, root, comm, &r));
}

int xchg_mpi_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    if (!xchg_coro_inside())
        return MPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    NB_COLL(MPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, &r));
}

int xchg_mpi_gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (!xchg_coro_inside())
        return MPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    NB_COLL(MPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r));
}

int xchg_mpi_scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (!xchg_coro_inside())
        return MPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    NB_COLL(MPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, &r));
}

int xchg_mpi_gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                     MPI_Comm comm)
{
    if (!xchg_coro_inside())
        return MPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    NB_COLL(MPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, &r));
}

int xchg_mpi_scatterv(const void *sbuf, const int scounts[], const int displs[],
                      MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                      MPI_Comm comm)
{
    if (!xchg_coro_inside())
        return MPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    NB_COLL(MPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, &r));
}

/* One rank's argument error, agreed by one allreduce (core/error_agree.c). */
int xchg_agree_errors(MPI_Comm pcomm, int rank, int size, int local_err, const char *who)
{
    int64_t v = xchg_agree_flag(rank, size, local_err), all = 0;
    int rc = xchg_mpi_allreduce(&v, &all, 1, MPI_INT64_T, MPI_MAX, pcomm);
    if (rc != MPI_SUCCESS)
        return local_err != MPI_SUCCESS ? local_err : rc;
    return xchg_agree_result(rank, size, local_err, all, who);
}

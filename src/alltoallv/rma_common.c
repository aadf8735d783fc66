/*
 * rma_common.c - window setup and block transfer for rma_fence and rma_lock
 * (see rma_common.h for the layout decisions).
 */
#include "rma_common.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Every rank must leave init together: a refusal on one rank before a
 * collective would hang the others. */
int xchg_rma_agree(xchg_call *c, int rc, const char *what)
{
    /* the highest error class of any rank: every rank fails with one class */
    int bad = 0, anybad = 0;
    if (rc != MPI_SUCCESS && (MPI_Error_class(rc, &bad) != MPI_SUCCESS || bad <= 0))
        bad = MPI_ERR_OTHER;
    int arc = xchg_mpi_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, c->comm);
    if (arc != MPI_SUCCESS)
        return arc;
    if (anybad && rc == MPI_SUCCESS)
        return xchg_error_code(anybad, "%s failed on another rank", what);
    return rc;
}

static void release(xchg_call *c, xchg_rma *w)
{
    xchg_temp_free(c, w->rstage, w->rstage_bytes);
    xchg_temp_free(c, w->sstage, w->sstage_bytes);
    xchg_temp_free(c, w->meta, w->meta_bytes);
    w->rstage = w->sstage = NULL;
    w->meta = NULL;
}

/* Advice for a refused window. Open MPI 4.1 without single-copy transports
 * (pml ob1 on shared memory) has one one-sided component, osc pt2pt, which
 * must be allowed (OMPI_MCA_osc) and refuses MPI_THREAD_MULTIPLE. */
static const char *window_advice(void)
{
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level == MPI_THREAD_MULTIPLE)
        return "under MPI_THREAD_MULTIPLE, which Open MPI 4.1's osc pt2pt refuses: use "
               "another algorithm (XCHG_ALLTOALLV_ALGO, or auto), a lower thread level, "
               "or an RDMA-capable osc component";
    const char *osc = getenv("OMPI_MCA_osc");
    if (osc && strstr(osc, "pt2pt"))
        return "with Open MPI, OMPI_MCA_osc allows pt2pt already: use another algorithm "
               "or an RDMA-capable osc component";
    return "with Open MPI over pml ob1 without single-copy, set OMPI_MCA_osc=pt2pt";
}

/* This rank's window over [base, base + wsize), or an error with advice. */
static int make_window(xchg_call *c, xchg_rma *w, char *base, MPI_Aint wsize, int no_locks)
{
    MPI_Info info = MPI_INFO_NULL;
    if (no_locks && MPI_Info_create(&info) == MPI_SUCCESS)
        MPI_Info_set(info, "no_locks", "true");
    int rc = MPI_Win_create(wsize ? (void *)base : NULL, wsize, 1, info, c->comm, &w->win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (rc == MPI_SUCCESS)
        return MPI_SUCCESS;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    xchg_error_string(rc, msg, &len);
    w->win = MPI_WIN_NULL;
    /* typically no one-sided component fits the transports in use */
    return xchg_error_code(MPI_ERR_WIN, "rma: MPI_Win_create failed (%s); %s", msg,
                           window_advice());
}

/* The local part: block sizes, the offset tables and staging buffers
 * (agreed: one rank short of memory fails every rank). */
static int rma_buffers(xchg_call *c, xchg_rma *w)
{
    const int P = c->size, me = c->rank;
    int rc = MPI_SUCCESS;
    w->direct = c->rt.contig || c->rt.size == 0;
    size_t rtot = 0, stot = 0;
    for (int j = 0; j < P; j++) {
        if (j == me)
            continue;
        size_t rb = (size_t)c->recvcounts[j] * (size_t)c->rt.size;
        size_t sb = (size_t)c->sendcounts[j] * (size_t)c->st.size;
        if ((rb > INT_MAX || sb > INT_MAX) && rc == MPI_SUCCESS)
            rc = xchg_error_code(MPI_ERR_COUNT, "rma: a block of more than INT_MAX bytes "
                                 "(to or from rank %d) exceeds MPI_Put's int count", j);
        rtot += rb;
        stot += sb;
    }
    w->meta_bytes = (size_t)P * (2 * sizeof(MPI_Aint) + 3 * sizeof(int64_t)) +
                    (size_t)P * 3 * sizeof(int64_t); /* + the alltoall send buffer */
    if (rc == MPI_SUCCESS)
        w->meta = xchg_temp_alloc(c, w->meta_bytes, "rma: displacement tables", &rc);
    if (rc == MPI_SUCCESS && !w->direct) {
        w->rstage_bytes = rtot;
        w->rstage = xchg_temp_alloc(c, rtot, "rma: receive staging window", &rc);
    }
    if (rc == MPI_SUCCESS && !c->st.contig && c->st.size > 0) {
        w->sstage_bytes = stot;
        w->sstage = xchg_temp_alloc(c, stot, "rma: send staging buffer", &rc);
    }
    return xchg_rma_agree(c, rc, "rma window setup");
}

/* Where each peer's block lands in its window, and the sizes both ways,
 * exchanged and checked (agreed: a truncation fails every rank). The
 * window is [*base, *base + *wsize). */
static int rma_offsets(xchg_call *c, xchg_rma *w, char **base, MPI_Aint *wsize)
{
    const int P = c->size, me = c->rank;
    int64_t *recvinfo = w->meta;              /* 3 per peer, from the peer */
    int64_t *sendinfo = recvinfo + 3 * (size_t)P; /* 3 per peer, to the peer */
    w->roff = (MPI_Aint *)(sendinfo + 3 * (size_t)P);
    w->soff = w->roff + P;

    MPI_Aint lo = 0;
    size_t span = 0;
    if (w->direct)
        xchg_block_span(c->recvcounts, c->rdispls, P, &c->rt, &lo, &span);
    /* MPICH 4.0.2 (ch4:ucx) puts relative to the window base rounded down to
     * 16 bytes: start the window on an aligned address below the data (same
     * page, so valid memory) and shift the displacements by the padding. */
    *base = w->direct ? (char *)c->recvbuf + lo : w->rstage;
    *wsize = (MPI_Aint)(w->direct ? span : w->rstage_bytes);
    int64_t pad = *wsize ? (int64_t)((uintptr_t)*base % 64) : 0;
    *base -= pad;
    *wsize += (MPI_Aint)pad;
    MPI_Aint r = 0, s = 0;
    for (int j = 0; j < P; j++) {
        int64_t rb = j == me ? 0 : (int64_t)c->recvcounts[j] * c->rt.size;
        int64_t sb = j == me ? 0 : (int64_t)c->sendcounts[j] * c->st.size;
        w->roff[j] = r;
        w->soff[j] = s;
        r += (MPI_Aint)rb;
        if (w->sstage)
            s += (MPI_Aint)sb;
        /* where j's block lands in my window, what I expect from j, what I send j */
        sendinfo[3 * j] = pad + (w->direct ? (int64_t)((MPI_Aint)c->rdispls[j] * c->rt.extent +
                                                       c->rt.true_lb - lo)
                                           : (int64_t)w->roff[j]);
        sendinfo[3 * j + 1] = rb;
        sendinfo[3 * j + 2] = sb;
    }
    int rc = xchg_mpi_alltoall(sendinfo, 3, MPI_INT64_T, recvinfo, 3, MPI_INT64_T, c->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    /* sendinfo has gone out: its space holds the per-peer tables */
    w->tdisp = sendinfo;
    w->sbytes = sendinfo + P;
    w->rbytes = sendinfo + 2 * (size_t)P;
    for (int j = 0; j < P; j++) {
        int64_t mine = j == me ? 0 : (int64_t)c->sendcounts[j] * c->st.size;
        if (mine > recvinfo[3 * j + 1] && rc == MPI_SUCCESS)
            rc = xchg_error_code(MPI_ERR_TRUNCATE, "rma: rank %d sends rank %d %lld bytes "
                                 "but rank %d receives only %lld", me, j, (long long)mine,
                                 j, (long long)recvinfo[3 * j + 1]);
        w->tdisp[j] = recvinfo[3 * j];
        w->sbytes[j] = mine;
        w->rbytes[j] = recvinfo[3 * j + 2];
    }
    return xchg_rma_agree(c, rc, "rma size check");
}

int xchg_rma_setup(xchg_call *c, xchg_rma *w, int no_locks)
{
    memset(w, 0, sizeof *w);
    w->win = MPI_WIN_NULL;
    char *base = NULL;
    MPI_Aint wsize = 0;
    int rc = rma_buffers(c, w);
    if (rc == MPI_SUCCESS)
        rc = rma_offsets(c, w, &base, &wsize);
    /* Refused alike on every rank where no one-sided component takes this
     * thread level or transport: then every rank returns MPI_ERR_WIN. (An
     * agreement here would cost every call a collective; the failure is
     * the library's setup, the same on every rank.) */
    if (rc == MPI_SUCCESS)
        rc = make_window(c, w, base, wsize, no_locks);
    if (rc != MPI_SUCCESS) {
        release(c, w);
        return rc;
    }
    MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    return MPI_SUCCESS;
}

int xchg_rma_pack(xchg_call *c, xchg_rma *w)
{
    if (!w->sstage)
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    for (int j = 0; j < c->size && rc == MPI_SUCCESS; j++)
        if (w->sbytes[j] > 0)
            rc = xchg_pack_block(c->sendbuf, c->sdispls[j], c->sendcounts[j], &c->st,
                                 w->sstage + w->soff[j]);
    return rc;
}

int xchg_rma_put(xchg_call *c, xchg_rma *w, int dst)
{
    int n = (int)w->sbytes[dst];
    if (n <= 0)
        return MPI_SUCCESS;
    const void *src = w->sstage ? (const void *)(w->sstage + w->soff[dst])
                                : (const void *)(xchg_block_addr(c->sendbuf, c->sdispls[dst],
                                                                 &c->st) + c->st.true_lb);
    return MPI_Put(src, n, MPI_BYTE, dst, (MPI_Aint)w->tdisp[dst], n, MPI_BYTE, w->win);
}

int xchg_rma_finish(xchg_call *c, xchg_rma *w)
{
    int rc = MPI_SUCCESS;
    if (!w->direct)
        for (int j = 0; j < c->size && rc == MPI_SUCCESS; j++)
            if (w->rbytes[j] > 0) /* what j sent, which may be less than expected */
                rc = xchg_unpack_block(w->rstage + w->roff[j], c->recvbuf, c->rdispls[j],
                                       (int)(w->rbytes[j] / c->rt.size), &c->rt);
    if (rc == MPI_SUCCESS)
        rc = xchg_self_copy(c);
    return rc;
}

int xchg_rma_teardown(xchg_call *c, xchg_rma *w)
{
    int rc = MPI_SUCCESS;
    if (w->win != MPI_WIN_NULL)
        rc = MPI_Win_free(&w->win);
    release(c, w);
    return rc;
}

/* A one-shot call of an RMA algorithm: its persistent hooks in a row. */
int xchg_persist_oneshot(const xchg_persist_ops *ops, xchg_call *c)
{
    void *plan = NULL;
    int rc = ops->init(c, &plan);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = ops->start(c, plan);
    /* wait even after a failed start: it completes what the start set in
     * flight (the partners' side of the exchange); the first error wins */
    int wrc = ops->wait(c, plan);
    if (rc == MPI_SUCCESS)
        rc = wrc;
    int frc = ops->free(c, plan);
    return rc != MPI_SUCCESS ? rc : frc;
}

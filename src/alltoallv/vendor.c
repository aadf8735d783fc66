/*
 * vendor.c - "vendor": the MPI library's own MPI_Alltoallv.
 *
 * The baseline every other algorithm is measured against. Called through
 * PMPI_ so that the preload library, which intercepts MPI_Alltoallv, does
 * not recurse into itself.
 *
 * Persistent: MPI_Alltoallv_init where the library has it (MPI 4: MPICH 4),
 * so the library can plan once; otherwise (Open MPI 4.1 is MPI 3.1) each
 * start posts an MPI_Ialltoallv, which at least keeps start nonblocking.
 */
#include "algo.h"

#include <stdlib.h>

int xchg_alltoallv_vendor(xchg_call *c)
{
    if (!xchg_coro_inside())
        return PMPI_Alltoallv(c->sendbuf, c->sendcounts, c->sdispls, c->st.type,
                              c->recvbuf, c->recvcounts, c->rdispls, c->rt.type, c->comm);
    /* nonblocking exchange: the library's MPI_Ialltoallv, tested */
    MPI_Request r;
    int rc = PMPI_Ialltoallv(c->sendbuf, c->sendcounts, c->sdispls, c->st.type, c->recvbuf,
                             c->recvcounts, c->rdispls, c->rt.type, c->comm, &r);
    return rc != MPI_SUCCESS ? rc : xchg_mpi_wait(&r, MPI_STATUS_IGNORE);
}

typedef struct vendor_plan {
    MPI_Request req;
} vendor_plan;

static int vendor_pinit(xchg_call *c, void **plan)
{
    vendor_plan *vp = malloc(sizeof *vp);
    if (!vp)
        return xchg_error_code(MPI_ERR_NO_MEM, "vendor: out of memory for the plan");
    vp->req = MPI_REQUEST_NULL;
#if MPI_VERSION >= 4
    int rc = PMPI_Alltoallv_init(c->sendbuf, c->sendcounts, c->sdispls, c->st.type,
                                 c->recvbuf, c->recvcounts, c->rdispls, c->rt.type,
                                 c->comm, MPI_INFO_NULL, &vp->req);
    if (rc != MPI_SUCCESS) {
        free(vp);
        return rc;
    }
#else
    (void)c;
#endif
    *plan = vp;
    return MPI_SUCCESS;
}

static int vendor_pstart(xchg_call *c, void *p)
{
    vendor_plan *vp = p;
#if MPI_VERSION >= 4
    (void)c;
    return MPI_Start(&vp->req);
#else
    return PMPI_Ialltoallv(c->sendbuf, c->sendcounts, c->sdispls, c->st.type, c->recvbuf,
                           c->recvcounts, c->rdispls, c->rt.type, c->comm, &vp->req);
#endif
}

static int vendor_pwait(xchg_call *c, void *p)
{
    (void)c;
    return xchg_mpi_wait(&((vendor_plan *)p)->req, MPI_STATUS_IGNORE);
}

static int vendor_ptest(xchg_call *c, void *p, int *flag)
{
    (void)c;
    return MPI_Test(&((vendor_plan *)p)->req, flag, MPI_STATUS_IGNORE);
}

static int vendor_pfree(xchg_call *c, void *p)
{
    (void)c;
    vendor_plan *vp = p;
    int rc = MPI_SUCCESS;
    if (vp->req != MPI_REQUEST_NULL) /* persistent: stays allocated until freed */
        rc = MPI_Request_free(&vp->req);
    free(vp);
    return rc;
}

const xchg_persist_ops xchg_vendor_persist = {vendor_pinit, vendor_pstart, vendor_ptest,
                                              vendor_pwait, vendor_pfree, NULL};

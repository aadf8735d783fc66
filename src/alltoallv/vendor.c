/*
 * vendor.c - "vendor": the MPI library's own MPI_Alltoallv.
 *
 * The baseline every other algorithm is measured against. Called through
 * PMPI_ so that the preload library, which intercepts MPI_Alltoallv, does
 * not recurse into itself.
 */
#include "xchg_internal.h"

int xchg_alltoallv_vendor(xchg_call *c)
{
    return PMPI_Alltoallv(c->sendbuf, c->sendcounts, c->sdispls, c->st.type,
                          c->recvbuf, c->recvcounts, c->rdispls, c->rt.type, c->comm);
}

/*
 * registry.c - the list of sparse exchange algorithms: one entry per
 * algorithm file, {id, name, function, when it wins, whether it carries
 * an argument error}; the lookup is the
 * alltoallv registry's (core/registry_lookup.h).
 */
#include "sparse_internal.h"

#include "core/registry_lookup.h"

/* pex, pex_loc: their census alltoalls always have room for the flag. */
static int always(int P)
{
    (void)P;
    return 1;
}

static const xchg_sparse_info registry[] = {
    {XCHG_SPARSE_PEX, "pex", xchg_sparse_pex,
     "MPI_Alltoall of counts then point-to-point: small P, or dense patterns", always},
    {XCHG_SPARSE_RSX, "rsx", xchg_sparse_rsx,
     "MPI_Reduce_scatter_block census then Probe/Recv: medium P where the "
     "reduce_scatter beats an alltoall", xchg_sparse_rsx_carries_errors},
    {XCHG_SPARSE_NBX, "nbx", xchg_sparse_nbx,
     "Issend + Iprobe + nonblocking barrier: large P with few neighbours "
     "(no P-sized collective)", NULL},
    {XCHG_SPARSE_RMA, "rma", xchg_sparse_rma,
     "counts by MPI_Put into a cached window, then point-to-point: where "
     "one-sided puts and fences are cheap (RDMA networks)", NULL},
    {XCHG_SPARSE_PEX_LOC, "pex_loc", xchg_sparse_pex_loc,
     "pex's census inside each node, one aggregate per node pair through a relay: "
     "many ranks per node, many destinations per rank", always},
    {XCHG_SPARSE_NBX_LOC, "nbx_loc", xchg_sparse_nbx_loc,
     "nbx's protocol in each step, one aggregate per node pair through a relay: "
     "many ranks per node, no census at all", NULL},
};

XCHG_REGISTRY_LOOKUP(xchg_sparse_registry, xchg_sparse_info, xchg_sparse_algo, registry)

int xchg_sparse_carries_errors(xchg_sparse_algo algo, int P)
{
    const xchg_sparse_info *a = xchg_sparse_registry_find(algo);
    return a && a->carries_errors && a->carries_errors(P);
}

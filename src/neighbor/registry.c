/*
 * registry.c - the list of neighbour exchange algorithms: one entry per
 * algorithm file, {id, name, when it wins, function, persistent hooks};
 * the lookup is the other registries' (core/registry_lookup.h).
 */
#include "neighbor_internal.h"

#include "core/registry_lookup.h"

static const xchg_neighbor_info registry[] = {
    {XCHG_NEIGHBOR_DIRECT, "direct",
     "one message per neighbour, receives pre-posted: few neighbours or large blocks",
     xchg_neighbor_direct, &xchg_neighbor_direct_persist, NULL, NULL},
    {XCHG_NEIGHBOR_LOCALITY, "locality",
     "one aggregate per other node through a partner there, which hands the blocks on: "
     "many small blocks to the ranks of few nodes (stencils, clustered SpMV)",
     xchg_neighbor_locality, &xchg_neighbor_locality_persist,
     xchg_neighbor_locality_analyse, xchg_neighbor_locality_analysis_free},
    {XCHG_NEIGHBOR_MPICH_MODEL, "mpich_model",
     "baseline: MPICH 4's MPI_Neighbor_alltoallv (every block sent, zero-size too, then "
     "every receive); never chosen by auto",
     xchg_neighbor_mpich_model, &xchg_neighbor_mpich_model_persist, NULL, NULL},
};

XCHG_REGISTRY_LOOKUP(xchg_neighbor_registry, xchg_neighbor_info, xchg_neighbor_algo, registry)

/*
 * registry.c - the neighbour exchange algorithms, and every fact about
 * each: the entries are in algos.def, one per algorithm file, {id, name,
 * when it wins, function, persistent operations, analysis hooks}, the
 * shape of the alltoallv registry's; the lookup is the other registries'
 * (core/registry_lookup.h).
 */
#include "neighbor_internal.h"

#include "core/registry_lookup.h"

/* Every function an entry may name, by the names algos.def gives them.
 * Declaring one an algorithm does not have is harmless: only those its
 * entry names are referenced. */
#define XCHG_NEIGHBOR_ALGO(NAME, ID, DESC, ...)                                        \
    int xchg_neighbor_##NAME(xchg_nbr_call *c);                                         \
    extern const xchg_nbr_persist_ops xchg_neighbor_##NAME##_persist;                   \
    int xchg_neighbor_##NAME##_analyse(xchg_nbr_call *c, void **analysis);              \
    void xchg_neighbor_##NAME##_analysis_free(void *analysis);
#include "algos.def"
#undef XCHG_NEIGHBOR_ALGO

static const xchg_neighbor_info registry[] = {
#define XCHG_NEIGHBOR_ALGO(NAME, ID, DESC, ...)                                        \
    {.id = ID, .name = #NAME, .desc = DESC, .run = xchg_neighbor_##NAME,                \
     .persist = &xchg_neighbor_##NAME##_persist, __VA_ARGS__},
#include "algos.def"
#undef XCHG_NEIGHBOR_ALGO
};

XCHG_REGISTRY_LOOKUP(xchg_neighbor_registry, xchg_neighbor_info, xchg_neighbor_algo, registry)

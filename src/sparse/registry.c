/*
 * registry.c - the sparse exchange algorithms, and every fact about each:
 * the entries are in algos.def, one per algorithm file, {id, name, when it
 * wins, function, whether its census carries an argument error}, the
 * shape of the alltoallv registry's; the lookup is theirs too
 * (core/registry_lookup.h).
 */
#include "sparse_internal.h"

#include "core/registry_lookup.h"

/* pex, pex_loc: their census alltoalls always have room for the flag. */
int xchg_sparse_always(int P)
{
    (void)P;
    return 1;
}

/* Every function an entry names, by the names algos.def gives them. */
#define XCHG_SPARSE_ALGO(NAME, ID, DESC, ...)                                           \
    int xchg_sparse_##NAME(xchg_sparse_call *s);                                        \
    extern const xchg_setting_def *const xchg_sparse_##NAME##_settings[];
#include "algos.def"
#undef XCHG_SPARSE_ALGO

static const xchg_sparse_info registry[] = {
#define XCHG_SPARSE_ALGO(NAME, ID, DESC, ...)                                           \
    {.id = ID, .name = #NAME, .desc = DESC, .run = xchg_sparse_##NAME, __VA_ARGS__},
#include "algos.def"
#undef XCHG_SPARSE_ALGO
};

XCHG_REGISTRY_LOOKUP(xchg_sparse_registry, xchg_sparse_info, xchg_sparse_algo, registry)

int xchg_sparse_carries_errors(xchg_sparse_algo algo, int P)
{
    const xchg_sparse_info *a = xchg_sparse_registry_find(algo);
    return a && a->carries_errors && a->carries_errors(P);
}

int xchg_sparse_run(xchg_sparse_algo algo, xchg_sparse_call *s)
{
    return xchg_sparse_registry_find(algo)->run(s);
}

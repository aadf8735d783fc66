/*
 * registry.c - the list of alltoallv algorithms.
 *
 * One entry per algorithm file: its stable id, its name (the API, the
 * XCHG_ALLTOALLV_ALGO variable and xchg-bench all use it), the function,
 * and one line on when it wins (the README's algorithm list says the same).
 * Adding an algorithm: write src/alltoallv/NAME.c with the xchg_alltoallv_fn
 * signature, add its id to xchg.h and one line here. The optional fifth
 * field gives persistent hooks (xchg_persist_ops); without it
 * xchg_alltoallv_init replays the blocking call at each start. Two flags
 * follow, named: .baseline marks a reference to compare against (never
 * chosen); .agrees_errors marks an algorithm whose agreement collective
 * carries an argument error (xchg_call.arg_err), so one rank's bad
 * argument fails every rank.
 */
#include "xchg_internal.h"

#include <string.h>

int xchg_alltoallv_vendor(xchg_call *c);
int xchg_alltoallv_linear(xchg_call *c);
int xchg_alltoallv_pairwise(xchg_call *c);
int xchg_alltoallv_scattered(xchg_call *c);
int xchg_alltoallv_padded_alltoall(xchg_call *c);
int xchg_alltoallv_bruck_padded(xchg_call *c);
int xchg_alltoallv_bruck_twophase(xchg_call *c);
int xchg_alltoallv_bruck_radix(xchg_call *c);
int xchg_alltoallv_hierarchical(xchg_call *c);
int xchg_alltoallv_grid(xchg_call *c);
int xchg_alltoallv_rma_fence(xchg_call *c);
int xchg_alltoallv_rma_lock(xchg_call *c);
int xchg_alltoallv_mpich_model(xchg_call *c);
int xchg_alltoallv_ompi_model(xchg_call *c);
int xchg_alltoallv_hybrid(xchg_call *c);

/* Persistent hooks (xchg_persist_ops); entries without take the generic path. */
extern const xchg_persist_ops xchg_vendor_persist, xchg_linear_persist,
    xchg_rma_fence_persist, xchg_rma_lock_persist;

/* Entries may stop after `when`: the persistent hooks then default to NULL
 * (generic path), so -Wextra must not ask for them. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#endif
static const xchg_algo_info registry[] = {
    {XCHG_ALGO_VENDOR, "vendor", xchg_alltoallv_vendor,
     "the MPI library's MPI_Alltoallv: the baseline", &xchg_vendor_persist,
     .baseline = 1},
    {XCHG_ALGO_LINEAR, "linear", xchg_alltoallv_linear,
     "all messages posted at once: medium P, medium and large messages",
     &xchg_linear_persist},
    {XCHG_ALGO_PAIRWISE, "pairwise", xchg_alltoallv_pairwise,
     "one partner per step: large messages, where contention matters more than latency", NULL},
    {XCHG_ALGO_SCATTERED, "scattered", xchg_alltoallv_scattered,
     "linear with at most XCHG_THROTTLE requests in flight: large P with medium messages", NULL},
    {XCHG_ALGO_PADDED_ALLTOALL, "padded_alltoall", xchg_alltoallv_padded_alltoall,
     "blocks padded to the global largest, one MPI_Alltoall: small, nearly uniform blocks", NULL,
     .agrees_errors = 1},
    {XCHG_ALGO_BRUCK_PADDED, "bruck_padded", xchg_alltoallv_bruck_padded,
     "Bruck on padded blocks, log2 P steps: tiny, nearly uniform blocks at large P", NULL,
     .agrees_errors = 1},
    {XCHG_ALGO_BRUCK_TWOPHASE, "bruck_twophase", xchg_alltoallv_bruck_twophase,
     "Bruck with sizes sent ahead, no padding: small irregular blocks at large P", NULL},
    {XCHG_ALGO_BRUCK_RADIX, "bruck_radix", xchg_alltoallv_bruck_radix,
     "two-phase Bruck in base r (XCHG_BRUCK_RADIX): small blocks when log2 P rounds are too many", NULL},
    {XCHG_ALGO_HYBRID, "hybrid", xchg_alltoallv_hybrid,
     "blocks up to XCHG_HYBRID_THRESHOLD by radix Bruck, larger ones directly: mixed sizes", NULL},
    {XCHG_ALGO_HIERARCHICAL, "hierarchical", xchg_alltoallv_hierarchical,
     "gather per node, one message per node pair, scatter: many ranks per node, small blocks", NULL,
     .agrees_errors = 1},
    {XCHG_ALGO_GRID, "grid", xchg_alltoallv_grid,
     "row then column through a sqrt(P) grid: about 2 sqrt(P) messages, small blocks at large P", NULL,
     .agrees_errors = 1},
    {XCHG_ALGO_RMA_FENCE, "rma_fence", xchg_alltoallv_rma_fence,
     "MPI_Put between two fences, window made once: persistent use, blocks from ~32 KiB",
     &xchg_rma_fence_persist},
    {XCHG_ALGO_RMA_LOCK, "rma_lock", xchg_alltoallv_rma_lock,
     "passive-target MPI_Put with pairwise ready/done messages: persistent, sparse patterns",
     &xchg_rma_lock_persist},
    /* Baselines for simulated comparisons (SMPI's own MPI_Alltoallv is
     * neither library's): in every build, so they are tested like any
     * algorithm, but never chosen (baseline = 1). */
    {XCHG_ALGO_MPICH_MODEL, "mpich_model", xchg_alltoallv_mpich_model,
     "baseline: model of MPICH 4.0's default (scattered, throttle 32, empty blocks skipped)",
     NULL, .baseline = 1},
    {XCHG_ALGO_OMPI_MODEL, "ompi_model", xchg_alltoallv_ompi_model,
     "baseline: model of Open MPI 4.1's default (tuned fixed decision: pairwise or basic linear)",
     NULL, .baseline = 1},
};

enum { REGISTRY_N = (int)(sizeof registry / sizeof registry[0]) };

int xchg_registry_count(void) { return REGISTRY_N; }

const xchg_algo_info *xchg_registry_at(int i)
{
    return (i >= 0 && i < REGISTRY_N) ? &registry[i] : NULL;
}

const xchg_algo_info *xchg_registry_find(xchg_algo id)
{
    for (int i = 0; i < REGISTRY_N; i++)
        if (registry[i].id == id)
            return &registry[i];
    return NULL;
}

const xchg_algo_info *xchg_registry_find_name(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < REGISTRY_N; i++)
        if (strcmp(registry[i].name, name) == 0)
            return &registry[i];
    return NULL;
}

xchg_algo xchg_algo_from_name(const char *name)
{
    if (name && strcmp(name, "auto") == 0)
        return XCHG_ALGO_AUTO;
    const xchg_algo_info *a = xchg_registry_find_name(name);
    return a ? a->id : XCHG_ALGO_INVALID;
}

const char *xchg_algo_name(xchg_algo algo)
{
    if (algo == XCHG_ALGO_AUTO)
        return "auto";
    const xchg_algo_info *a = xchg_registry_find(algo);
    return a ? a->name : NULL;
}

int xchg_algo_count(void) { return REGISTRY_N; }

int xchg_algo_is_baseline(xchg_algo algo)
{
    const xchg_algo_info *a = xchg_registry_find(algo);
    return a ? a->baseline : 0;
}

xchg_algo xchg_algo_at(int i)
{
    const xchg_algo_info *a = xchg_registry_at(i);
    return a ? a->id : XCHG_ALGO_INVALID;
}

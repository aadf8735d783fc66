/*
 * registry.c - the alltoallv algorithms, and every fact about each.
 *
 * One entry per algorithm file: its stable id (xchg.h), its name (the API,
 * the XCHG_ALLTOALLV_ALGO variable and xchg-bench use it), one line on when
 * it wins (docs/algorithms.md says the same at length), the function, its
 * persistent hooks (NULL: xchg_alltoallv_init replays the blocking call at
 * each start), its cost model (select/model.c; NULL: never chosen
 * automatically), and named flags (algo.h says what each means). Nothing
 * else in the library lists algorithms: auto's candidates and their tie
 * order, the padded ones, the ones that start blocking all come from here.
 *
 * Adding an algorithm: write src/alltoallv/NAME.c with the xchg_alltoallv_fn
 * signature, add its id to xchg.h, a model function to select/model.c, and
 * one entry here (docs/contributing.md walks through it).
 */
#include "algo.h"

#include "core/registry_lookup.h"

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
int xchg_alltoallv_bruck_2level(xchg_call *c);
int xchg_alltoallv_node_pairs(xchg_call *c);
int xchg_alltoallv_multileader(xchg_call *c);
int xchg_alltoallv_shm(xchg_call *c);

/* hierarchical.c: the node layout and its size tables made now (collective
 * over cs->pcomm), and whether they exist. */
int xchg_hierarchical_prepare(xchg_comm_state *cs);
int xchg_hierarchical_ready(const xchg_comm_state *cs);
/* bruck_2level.c: the node layout and its place tables, likewise. */
int xchg_bruck_2level_prepare(xchg_comm_state *cs);
int xchg_bruck_2level_ready(const xchg_comm_state *cs);
/* node_pairs.c: the same for its node tables. */
int xchg_node_pairs_prepare(xchg_comm_state *cs);
int xchg_node_pairs_ready(const xchg_comm_state *cs);
/* shm.c: the node-shared window made (or grown) now, and whether it needs
 * no collective. */
int xchg_shm_prepare(xchg_comm_state *cs);
int xchg_shm_ready(const xchg_comm_state *cs);
/* multileader.c: the same for its group tables. */
int xchg_multileader_prepare(xchg_comm_state *cs);
int xchg_multileader_ready(const xchg_comm_state *cs);

/* Persistent hooks (xchg_persist_ops); entries without take the generic path. */
extern const xchg_persist_ops xchg_vendor_persist, xchg_linear_persist,
    xchg_rma_fence_persist, xchg_rma_lock_persist;

/* The cost model of each modelled algorithm (select/model.c). */
double xchg_model_vendor(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_linear(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_scattered(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_pairwise(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_padded_alltoall(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_bruck_padded(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_bruck_twophase(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_bruck_radix(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_hybrid(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_hierarchical(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_grid(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_bruck_2level(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_node_pairs(const xchg_model_params *m, const xchg_pattern_stats *s);
double xchg_model_multileader(const xchg_model_params *m, const xchg_pattern_stats *s);

static const xchg_algo_info registry[] = {
    {XCHG_ALGO_VENDOR, "vendor", "the MPI library's MPI_Alltoallv: the baseline",
     xchg_alltoallv_vendor, &xchg_vendor_persist, xchg_model_vendor, .baseline = 1},
    {XCHG_ALGO_LINEAR, "linear",
     "all messages posted at once: medium P, medium and large messages",
     xchg_alltoallv_linear, &xchg_linear_persist, xchg_model_linear, .candidate = 1},
    {XCHG_ALGO_PAIRWISE, "pairwise",
     "one partner per step: large messages, where contention matters more than latency",
     xchg_alltoallv_pairwise, NULL, xchg_model_pairwise, .candidate = 3},
    {XCHG_ALGO_SCATTERED, "scattered",
     "linear with at most XCHG_THROTTLE requests in flight: large P with medium messages",
     xchg_alltoallv_scattered, NULL, xchg_model_scattered, .candidate = 2},
    {XCHG_ALGO_PADDED_ALLTOALL, "padded_alltoall",
     "blocks padded to the global largest, one MPI_Alltoall: small, nearly uniform blocks",
     xchg_alltoallv_padded_alltoall, NULL, xchg_model_padded_alltoall, .candidate = 4,
     .padded = 1, .agrees_errors = 1},
    {XCHG_ALGO_BRUCK_PADDED, "bruck_padded",
     "Bruck on padded blocks, log2 P steps: tiny, nearly uniform blocks at large P",
     xchg_alltoallv_bruck_padded, NULL, xchg_model_bruck_padded, .candidate = 7,
     .padded = 1, .agrees_errors = 1},
    {XCHG_ALGO_BRUCK_TWOPHASE, "bruck_twophase",
     "Bruck with sizes sent ahead, no padding: small irregular blocks at large P",
     xchg_alltoallv_bruck_twophase, NULL, xchg_model_bruck_twophase, .candidate = 5},
    {XCHG_ALGO_BRUCK_RADIX, "bruck_radix",
     "two-phase Bruck in base r (XCHG_BRUCK_RADIX): small blocks when log2 P rounds are too many",
     xchg_alltoallv_bruck_radix, NULL, xchg_model_bruck_radix, .candidate = 6},
    {XCHG_ALGO_HYBRID, "hybrid",
     "blocks up to XCHG_HYBRID_THRESHOLD by radix Bruck, larger ones directly: mixed sizes",
     xchg_alltoallv_hybrid, NULL, xchg_model_hybrid, .candidate = 9},
    {XCHG_ALGO_HIERARCHICAL, "hierarchical",
     "gather per node, one message per node pair, scatter: many ranks per node, small blocks",
     xchg_alltoallv_hierarchical, NULL, xchg_model_hierarchical, .candidate = 10,
     .agrees_errors = 1, .prepare = xchg_hierarchical_prepare,
     .ready = xchg_hierarchical_ready},
    {XCHG_ALGO_BRUCK_2LEVEL, "bruck_2level",
     "radix Bruck across nodes, then inside them (XCHG_BRUCK_RADIX_INTER/_INTRA): small blocks, many nodes of many ranks",
     xchg_alltoallv_bruck_2level, NULL, xchg_model_bruck_2level, .candidate = 13,
     .agrees_errors = 1, .prepare = xchg_bruck_2level_prepare,
     .ready = xchg_bruck_2level_ready},
    {XCHG_ALGO_NODE_PAIRS, "node_pairs",
     "each node pair one message between two relays, gathered and scattered in the node: "
     "many ranks per node, small and medium blocks",
     xchg_alltoallv_node_pairs, NULL, xchg_model_node_pairs, .candidate = 11,
     .agrees_errors = 1, .prepare = xchg_node_pairs_prepare, .ready = xchg_node_pairs_ready},
    {XCHG_ALGO_MULTILEADER, "multileader",
     "k leaders per node (XCHG_LEADERS), each for its share of the members, one message per "
     "leader pair: many ranks per node, small blocks",
     xchg_alltoallv_multileader, NULL, xchg_model_multileader, .candidate = 12,
     .agrees_errors = 1, .prepare = xchg_multileader_prepare, .ready = xchg_multileader_ready},
    {XCHG_ALGO_GRID, "grid",
     "row then column through a sqrt(P) grid: about 2 sqrt(P) messages, small blocks at large P",
     xchg_alltoallv_grid, NULL, xchg_model_grid, .candidate = 8, .agrees_errors = 1},
    {XCHG_ALGO_SHM, "shm",
     "blocks packed once into a node-shared window, peers' flags instead of messages: "
     "every rank on one node (else linear)",
     xchg_alltoallv_shm, NULL, NULL, .agrees_errors = 1, .prepare = xchg_shm_prepare,
     .ready = xchg_shm_ready},
    /* Window creation per call: for persistent use, never chosen by auto. */
    {XCHG_ALGO_RMA_FENCE, "rma_fence",
     "MPI_Put between two fences, window made once: persistent use, blocks from ~32 KiB",
     xchg_alltoallv_rma_fence, &xchg_rma_fence_persist, NULL, .blocking_start = 1},
    {XCHG_ALGO_RMA_LOCK, "rma_lock",
     "passive-target MPI_Put with pairwise ready/done messages: persistent, sparse patterns",
     xchg_alltoallv_rma_lock, &xchg_rma_lock_persist, NULL, .blocking_start = 1},
    /* Baselines for simulated comparisons (SMPI's own MPI_Alltoallv is
     * neither library's): in every build, so they are tested like any
     * algorithm, but never chosen (baseline = 1). */
    {XCHG_ALGO_MPICH_MODEL, "mpich_model",
     "baseline: model of MPICH 4.0's default (scattered, throttle 32, empty blocks skipped)",
     xchg_alltoallv_mpich_model, NULL, NULL, .baseline = 1},
    {XCHG_ALGO_OMPI_MODEL, "ompi_model",
     "baseline: model of Open MPI 4.1's default (tuned fixed decision: pairwise or basic linear)",
     xchg_alltoallv_ompi_model, NULL, NULL, .baseline = 1},
};

XCHG_REGISTRY_LOOKUP(xchg_registry, xchg_algo_info, xchg_algo, registry)

int xchg_registry_candidates(const xchg_algo_info *out[], int max)
{
    int n = 0;
    for (int k = 1; n < max; k++) {
        int found = 0;
        for (int i = 0; i < xchg_registry_count() && n < max; i++)
            if (registry[i].candidate == k) {
                out[n++] = &registry[i];
                found = 1;
            }
        if (!found)
            break;
    }
    return n;
}

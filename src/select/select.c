/*
 * select.c - the automatic choice of an alltoallv algorithm.
 *
 * Rule 2 of the design: every rank chooses the same algorithm. The choice
 * uses only what all ranks know: P, the environment, and statistics of the
 * pattern shared by one small MPI_Allreduce (largest block, busiest rank's
 * volume and partner count, and the tuning table's checksum). A measured
 * tuning table (table.c) decides where it has a rule; elsewhere the cost
 * model (model.c) ranks the registered algorithms and the cheapest wins.
 *
 * The allreduce costs about log2(P) latencies, as much as a whole tiny
 * exchange at small P. Below XCHG_AUTO_MIN_P ranks (default 64) "linear" is
 * taken without it: simulated at P=64 (sim/README.md), linear is within
 * 1.7x of the best algorithm on every pattern and size, while paying the
 * allreduce doubles a tiny sparse exchange. From 64 ranks on, the Bruck
 * family's savings on small blocks outgrow the allreduce.
 */
#include "select_internal.h"

#include <math.h>

/* Algorithms the model may choose. Not offered: the baselines (vendor,
 * mpich_model, ompi_model: what we aim to beat), hierarchical (gathers a node's volume at one rank: chosen
 * by tuning only), rma_* (window creation per call; for persistent use). */
static const xchg_algo candidates[] = {
    XCHG_ALGO_LINEAR,         XCHG_ALGO_SCATTERED,      XCHG_ALGO_PAIRWISE,
    XCHG_ALGO_PADDED_ALLTOALL, XCHG_ALGO_BRUCK_TWOPHASE, XCHG_ALGO_BRUCK_RADIX,
    XCHG_ALGO_BRUCK_PADDED,   XCHG_ALGO_GRID,
};

static int pattern_stats_get(xchg_call *c, xchg_pattern_stats *s, unsigned long long *table_ok)
{
    long long v[6] = {0, 0, 0, 0, 0, 0};
    long long sbytes = 0, rbytes = 0, snnz = 0, rnnz = 0;
    for (int j = 0; j < c->size; j++) {
        long long sb = (long long)c->sendcounts[j] * c->st.size;
        long long rb = (long long)c->recvcounts[j] * c->rt.size;
        sbytes += sb;
        rbytes += rb;
        snnz += sb > 0 && j != c->rank;
        rnnz += rb > 0 && j != c->rank;
        if (sb > v[0])
            v[0] = sb;
    }
    unsigned long long ck = xchg_table_checksum();
    v[1] = sbytes > rbytes ? sbytes : rbytes;
    v[2] = snnz > rnnz ? snnz : rnnz;
    /* the same checksum everywhere <=> max(ck) == -max(-ck) */
    v[3] = (long long)(ck >> 1);
    v[4] = -(long long)(ck >> 1);
    /* one rank's argument error (c->arg_err, with zero counts) fails all */
    v[5] = (long long)xchg_agree_flag(c->rank, c->size, c->arg_err);
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_LONG_LONG, MPI_MAX, c->comm);
    if (rc == MPI_SUCCESS)
        rc = xchg_agree_result(c->rank, c->size, c->arg_err, (int64_t)v[5], "auto");
    if (rc != MPI_SUCCESS)
        return rc;
    s->P = c->size;
    s->node_size = c->cs->node_size;
    s->max_block_bytes = v[0];
    s->max_rank_bytes = v[1];
    s->max_nnz = v[2];
    *table_ok = ck != 0 && v[3] == -v[4];
    return MPI_SUCCESS;
}

int xchg_select_alltoallv(xchg_call *c, xchg_algo *chosen)
{
    long min_p = c->cs->settings.auto_min_p;
    if (c->size < min_p) {
        *chosen = XCHG_ALGO_LINEAR;
        return MPI_SUCCESS;
    }
    xchg_pattern_stats s;
    unsigned long long table_ok = 0;
    int rc = pattern_stats_get(c, &s, &table_ok);
    if (rc != MPI_SUCCESS)
        return rc;

    xchg_model_params m;
    xchg_model_defaults(&m);
    m.throttle = (double)c->cs->settings.throttle;
    m.radix = (double)xchg_bruck_radix_for(&c->cs->settings, c->size);
    if (table_ok) {
        xchg_algo t = xchg_table_lookup(&s, &m);
        if (t != XCHG_ALGO_INVALID) {
            *chosen = t;
            return MPI_SUCCESS;
        }
    }
    /* Padded algorithms hold about 2 x P x largest block: never choose one
     * that would be refused for memory (the limit is the same everywhere). */
    double padded = 2.0 * (double)s.P * (double)s.max_block_bytes;
    xchg_algo best = XCHG_ALGO_LINEAR;
    double best_t = INFINITY;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        xchg_algo a = candidates[i];
        const xchg_algo_info *info = xchg_registry_find(a);
        if (!info || info->baseline)
            continue;
        if ((a == XCHG_ALGO_PADDED_ALLTOALL || a == XCHG_ALGO_BRUCK_PADDED) &&
            padded > (double)c->temp_limit)
            continue;
        double t = xchg_model_time(a, &m, &s);
        if (t < best_t) {
            best_t = t;
            best = a;
        }
    }
    *chosen = best;
    return MPI_SUCCESS;
}

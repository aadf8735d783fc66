/*
 * model.c - a cost model of each alltoallv algorithm.
 *
 * A LogGP-style model: a dependent exchange costs alpha, every posted send
 * or receive an overhead o, every byte beta (the node's link shared by the
 * node's ranks) and every locally copied byte `copy`.
 * Each algorithm's time is estimated from statistics every rank shares
 * after one small allreduce (largest block, largest per-rank volume, most
 * nonzero partners), so every rank computes the same estimates and picks
 * the same algorithm (design rule 2). The constants are defaults for a
 * typical cluster; xchg-tune measures them for a machine and
 * XCHG_TUNING_FILE loads them (table.c).
 *
 * The model only ranks algorithms; it does not predict absolute times
 * well. Its job is to never pick something much slower than the best.
 */
#include "select_internal.h"

#include <math.h>

static double log2ceil(int P)
{
    int k = 0;
    while ((1 << k) < P)
        k++;
    return (double)k;
}

double xchg_model_time(xchg_algo algo, const xchg_model_params *m, const xchg_pattern_stats *s)
{
    const double P = (double)s->P;
    const double a = m->alpha, o = m->overhead, cp = m->copy;
    const double lg = log2ceil(s->P);
    const double vol = (double)s->max_rank_bytes;       /* critical rank's volume */
    const double nnz = (double)s->max_nnz;              /* its nonzero partners */
    const double blk = (double)s->max_block_bytes;      /* global largest block */
    /* The ranks of a node share its link: per-rank bandwidth is the link's
     * divided among them, for the share of traffic that leaves the node. */
    const double node = s->node_size > 1 ? (double)s->node_size : 1.0;
    const double off = P > node ? (P - node) / P : 1.0 / node;
    const double b = m->beta * (node * off > 1.0 ? node * off : 1.0);
    const double round = a + 2.0 * o;                   /* one dependent exchange */
    const double allreduce = lg * round;

    switch (algo) {
    case XCHG_ALGO_VENDOR:
        /* a loop over all P peers, empty ones included */
        return a + 2.0 * P * o * m->vendor_overhead_factor + vol * b;
    case XCHG_ALGO_LINEAR:
        /* all nonzero messages in flight at once: one latency, a per-request
         * overhead for each send and receive, then the volume */
        return a + 2.0 * nnz * o + vol * b;
    case XCHG_ALGO_SCATTERED:
        return a + 2.0 * nnz * o + vol * b +
               (2.0 * nnz > m->throttle ? (2.0 * nnz / m->throttle) * a * 0.5 : 0.0);
    case XCHG_ALGO_PAIRWISE:
        /* P-1 dependent steps; empty ones skipped */
        return nnz * (round + m->sync) + vol * b;
    case XCHG_ALGO_PADDED_ALLTOALL:
        /* allreduce, then an alltoall of P padded blocks: log P steps of half
         * the data for small blocks, one spread-out round for large */
        if (blk * P <= m->alltoall_bruck_bytes)
            return allreduce + lg * round + lg * (P / 2.0) * blk * b + 2.0 * P * blk * cp;
        return allreduce + a + 2.0 * P * o + P * blk * b + 2.0 * P * blk * cp;
    case XCHG_ALGO_BRUCK_PADDED:
        return allreduce + lg * round + lg * (P / 2.0) * blk * b + (lg + 2.0) * P * blk * cp;
    case XCHG_ALGO_BRUCK_TWOPHASE:
        /* log P steps of (sizes, data); each moves about half the blocks */
        return lg * 2.0 * round + lg * (vol / 2.0) * b + lg * vol * cp;
    case XCHG_ALGO_BRUCK_RADIX: {
        /* radix r: log_r P rounds of (sizes, data) with r-1 partners each */
        double r = m->radix > 1 ? m->radix : 2.0;
        double rounds = ceil(log((double)s->P) / log(r) - 1e-9);
        if (rounds < 1)
            rounds = 1;
        return rounds * 2.0 * (a + 2.0 * (r - 1.0) * o) + rounds * ((r - 1.0) / r) * vol * b +
               rounds * vol * cp;
    }
    case XCHG_ALGO_GRID: {
        /* an allreduce (agreed refusal), then two phases of about sqrt(P)
         * partners each, twice the volume */
        double q = ceil(sqrt(P));
        return allreduce + 2.0 * (a + 2.0 * q * o) + 2.0 * vol * b + 2.0 * vol * cp;
    }
    default:
        return INFINITY; /* not modelled: never chosen automatically */
    }
}

void xchg_model_defaults(xchg_model_params *m)
{
    /* LogGP-style constants of a typical cluster (fitted to simulated
     * 100 Gb/s, 1 us links, sim/README.md); xchg-tune measures a machine's
     * own alpha and beta. */
    m->alpha = 2.2e-6;                 /* s per dependent exchange */
    m->overhead = 0.185e-6;            /* s per posted send or receive */
    m->beta = 1.0 / 12.5e9;            /* s per byte on a node's link */
    m->copy = 1.0 / 20.0e9;            /* s per byte of local pack/copy */
    m->sync = 0.5e-6;                  /* extra per pairwise step */
    m->vendor_overhead_factor = 1.0;
    m->throttle = 32.0;
    m->radix = 4.0;
    m->alltoall_bruck_bytes = 256.0 * 1024.0;
}
